import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { CliInvocation } from "../Invocation.js"
import { formatTable, printJson } from "../Output.js"
import { dataLayer } from "../../CompositionRoot.js"
import { extensionTable, listInstalledViews } from "../../usecases/ExtensionView.js"

export const listCommand = Command.make(
  "list",
  {
    enabled: Options.boolean("enabled").pipe(Options.withDescription("only enabled extensions")),
    disabled: Options.boolean("disabled").pipe(Options.withDescription("only disabled extensions")),
    json: Options.boolean("json").pipe(Options.withDescription("print a JSON array only"))
  },
  ({ disabled, enabled, json }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const shown = yield* listInstalledViews({ enabled, disabled }).pipe(Effect.provide(dataLayer(invocation)))
      if (json) return yield* printJson(shown)
      if (shown.length === 0) return yield* Console.log("No extensions installed.")
      const table = extensionTable(shown)
      yield* Console.log(formatTable(table.header, table.rows))
      if (table.notes.length > 0) yield* Console.log(`\n${table.notes.join("\n")}`)
    })
).pipe(Command.withDescription("List installed extensions"))
