import { Command, Options } from "@effect/cli"
import { Console, Data, Duration, Effect } from "effect"
import { bootForCli, extensionCommands } from "../../runtime/Backend.js"
import { callExtensionCode } from "../../runtime/ExtensionCode.js"
import { CliInvocation } from "../Invocation.js"
import { exitWith, formatTable, printJson } from "../Output.js"
import { storeLayer } from "../Runtime.js"

// Console commands of extensions (`HasCommands`): `host commands` lists them, `host <name> …` runs one.
// Extension code is loaded only for a name that is not a built-in, so built-ins stay fast.

export class UnknownCommand extends Data.TaggedError("UnknownCommand")<{
  readonly name: string
}> {
  override get message() {
    return `${this.name} is neither a built-in command nor one of an enabled extension (see host --help and host commands)`
  }
}

export const commandsCommand = Command.make(
  "commands",
  { json: Options.boolean("json").pipe(Options.withDescription("print a JSON array only")) },
  ({ json }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const commands = yield* Effect.flatMap(bootForCli, extensionCommands).pipe(Effect.provide(storeLayer(invocation)))
      const rows = commands.map((command) => ({ name: command.name, description: command.description, extension: command.extensionId }))
      if (json) return yield* printJson(rows)
      if (rows.length === 0) return yield* Console.log("No extension commands.")
      yield* Console.log(formatTable(["Command", "Extension", "Description"], rows.map((row) => [row.name, row.extension, row.description])))
    })
).pipe(Command.withDescription("List the console commands of enabled extensions"))

/** Runs an extension's console command; a number it returns is the exit code, a throw exits 1 with its message. */
export const runExtensionCommand = (name: string, args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const invocation = yield* CliInvocation
    const code = yield* Effect.gen(function*() {
      const commands = yield* Effect.flatMap(bootForCli, extensionCommands)
      const command = commands.find((candidate) => candidate.name === name)
      if (command === undefined) {
        // An unknown command is a usage error (exit 2), like an unknown built-in.
        yield* Console.error(`error: ${new UnknownCommand({ name }).message}`)
        return 2
      }
      const result = yield* callExtensionCode(command.extensionId, name, () => command.run(args), Duration.infinity)
      return typeof result === "number" && Number.isInteger(result) ? result : 0
    }).pipe(Effect.provide(storeLayer(invocation)))
    if (code !== 0) return yield* exitWith(code)
  })
