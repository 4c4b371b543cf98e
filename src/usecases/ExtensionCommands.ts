import { Duration, Effect, Schema } from "effect"
import { bootForCli, extensionCommands } from "../runtime/Backend.js"
import { callExtensionCode } from "../runtime/ExtensionCode.js"

// Console commands of extensions (`HasCommands`, docs/backend.md): the list, and running one. Both boot
// the enabled extensions the way a CLI process does.

/** A console command as `host commands` lists it. */
export interface ExtensionCommandRow {
  readonly name: string
  readonly description: string
  readonly extension: string
}

/** The name is neither a built-in command nor one of an enabled extension. */
export class UnknownCommand extends Schema.TaggedError<UnknownCommand>()("UnknownCommand", { name: Schema.String }) {
  override get message() {
    return `${this.name} is neither a built-in command nor one of an enabled extension (see host --help and host commands)`
  }
}

/** `host commands`: the console commands of the enabled extensions. */
export const listExtensionCommands = Effect.map(
  Effect.flatMap(bootForCli, extensionCommands),
  (commands) => commands.map((command): ExtensionCommandRow => ({ name: command.name, description: command.description, extension: command.extensionId }))
)

/**
 * `host <name> …`: runs an extension's console command; a whole number it returns is the exit code
 * (0 otherwise), a throw fails the call.
 */
export const runExtensionCommand = (name: string, args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const commands = yield* Effect.flatMap(bootForCli, extensionCommands)
    const command = commands.find((candidate) => candidate.name === name)
    if (command === undefined) return yield* new UnknownCommand({ name })
    const result = yield* callExtensionCode(command.extensionId, name, () => command.run(args), Duration.infinity)
    return typeof result === "number" && Number.isInteger(result) ? result : 0
  })
