import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { exportExtension, renderExport } from "../../archive/Authoring.js"
import { CliInvocation } from "../Invocation.js"
import { printJson } from "../Output.js"

export const exportCommand = Command.make(
  "export",
  {
    path: Args.text({ name: "path" }).pipe(
      Args.withDefault("."),
      Args.withDescription("extension folder or its extension.yaml (default: the current folder)")
    ),
    output: Options.text("output").pipe(
      Options.optional,
      Options.withDescription("archive file path, or a folder (existing, or ending in /) to put it in; default: the current folder")
    ),
    sign: Options.boolean("sign").pipe(
      Options.withDescription("sign with the Ed25519 secret key in HOST_SECRET_KEY (embedded signature.json and a detached .sig)")
    ),
    json: Options.boolean("json").pipe(
      Options.withDescription("print {id, version, files, bytes, sha256, archive, sha256File, signatureFile, key} only")
    )
  },
  ({ json, output, path, sign }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const result = yield* exportExtension({
        path,
        output: Option.getOrUndefined(output),
        cwd: process.cwd(),
        sign,
        secretKey: invocation.env.HOST_SECRET_KEY,
        secretKeySource: "HOST_SECRET_KEY"
      })
      yield* Effect.forEach(result.warnings, (warning) => Effect.logWarning(`extension.yaml: ${warning.path}: ${warning.message}`))
      if (json) {
        const { warnings: _warnings, written: _written, ...view } = result
        return yield* printJson(view)
      }
      yield* Console.log(renderExport(result))
    })
).pipe(Command.withDescription("Export an extension folder as a .host archive (with its .sha256, and a .sig with --sign)"))
