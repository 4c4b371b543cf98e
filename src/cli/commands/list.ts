import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { ExtensionsRepo } from "../../store/ExtensionsRepo.js"
import { CliInvocation } from "../Invocation.js"
import { formatTable, printJson } from "../Output.js"
import { dataLayer } from "../../HostLive.js"
import { readQuarantine } from "../../runtime/Quarantine.js"
import { extensionTable, extensionView } from "../../runtime/ExtensionView.js"

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
      const [extensions, quarantine] = yield* Effect.all([Effect.flatMap(ExtensionsRepo, (repo) => repo.list), readQuarantine]).pipe(
        Effect.provide(dataLayer(invocation))
      )
      const shown = extensions
        .filter((extension) => enabled === disabled || extension.enabled === enabled)
        .map((extension) => extensionView(extension, quarantine))
      if (json) return yield* printJson(shown)
      if (shown.length === 0) return yield* Console.log("No extensions installed.")
      const table = extensionTable(shown)
      yield* Console.log(formatTable(table.header, table.rows))
      if (table.notes.length > 0) yield* Console.log(`\n${table.notes.join("\n")}`)
    })
).pipe(Command.withDescription("List installed extensions"))
