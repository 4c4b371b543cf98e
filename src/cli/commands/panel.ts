import { Args, Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { issueApiToken } from "../../usecases/PanelAccess.js"
import { CliInvocation } from "../Invocation.js"
import { printJson } from "../Output.js"
import { operationsLayer } from "../Runtime.js"

// `host panel:token <username>`: issues an API token for a user of the embedded panel. The token is
// printed once on stdout (nothing else is, so scripts can capture it); only its sha256 is stored.

export const panelTokenCommand = Command.make(
  "panel:token",
  {
    username: Args.text({ name: "username" }).pipe(Args.withDescription("a user of config/panel.yaml")),
    json: Options.boolean("json").pipe(Options.withDescription("print {username, id, token} as JSON"))
  },
  ({ json, username }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const issued = yield* issueApiToken(username).pipe(Effect.provide(operationsLayer(invocation, { listeners: false })))
      if (json) return yield* printJson({ username: issued.username, id: issued.userId, token: issued.token })
      yield* Effect.sync(() =>
        process.stderr.write(`New API token for ${issued.username} (shown once; config/panel.yaml keeps only its sha256):\n`)
      )
      yield* Console.log(issued.token)
    })
).pipe(Command.withDescription("Issue an API token for a panel user (stores only its hash in config/panel.yaml)"))
