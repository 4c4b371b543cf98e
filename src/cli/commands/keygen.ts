import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { renderKeyPair } from "../../archive/Authoring.js"
import { generateKeyPair } from "../../archive/Signing.js"
import { printJson } from "../Output.js"

export const keygenCommand = Command.make(
  "keygen",
  { json: Options.boolean("json").pipe(Options.withDescription("print {public_key, secret_key} only")) },
  ({ json }) =>
    Effect.gen(function*() {
      const pair = yield* generateKeyPair
      if (json) return yield* printJson({ public_key: pair.public_key, secret_key: pair.secret_key })
      yield* Console.log(renderKeyPair(pair, "host export --sign"))
    })
).pipe(Command.withDescription("Generate an Ed25519 key pair for signing .host archives"))
