import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { listExtensionCommands, runExtensionCommand as runCommand } from "../../usecases/ExtensionCommands.js"
import { CliInvocation } from "../Invocation.js"
import { exitWith, formatTable, printJson } from "../Output.js"
import { operationsLayer } from "../Runtime.js"

// Console commands of extensions (`HasCommands`): `host commands` lists them, `host <name> …` runs one,
// through usecases/ExtensionCommands.ts. Extension code is loaded only for a name that is not a
// built-in, so built-ins stay fast.

export const commandsCommand = Command.make(
  "commands",
  { json: Options.boolean("json").pipe(Options.withDescription("print a JSON array only")) },
  ({ json }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const rows = yield* listExtensionCommands.pipe(Effect.provide(operationsLayer(invocation)))
      if (json) return yield* printJson(rows)
      if (rows.length === 0) return yield* Console.log("No extension commands.")
      yield* Console.log(formatTable(["Command", "Extension", "Description"], rows.map((row) => [row.name, row.extension, row.description])))
    })
).pipe(Command.withDescription("List the console commands of enabled extensions"))

/** Runs an extension's console command; a number it returns is the exit code, a throw exits 1 with its message. */
export const runExtensionCommand = (name: string, args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const invocation = yield* CliInvocation
    const code = yield* runCommand(name, args).pipe(
      // An unknown command is a usage error (exit 2), like an unknown built-in.
      Effect.catchTag("UnknownCommand", (unknown) => Effect.as(Console.error(`error: ${unknown.message}`), 2)),
      Effect.provide(operationsLayer(invocation))
    )
    if (code !== 0) return yield* exitWith(code)
  })
