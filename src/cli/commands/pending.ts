import { Args, Command } from "@effect/cli"
import { Effect } from "effect"
import { NotAvailableYet } from "../../domain/Errors.js"

// Commands of the contract whose issue has not landed yet: registered (so help lists them) and
// answering `error: <name> is not available yet` with exit 1, whatever their arguments.

export const pendingCommands: ReadonlyArray<readonly [name: string, description: string]> = [
  ["framework:uninstall", "Remove the framework from the panel"],
]

export const pendingNames: ReadonlySet<string> = new Set(pendingCommands.map(([name]) => name))

export const pendingCommand = (name: string, description: string) =>
  Command.make(
    name,
    { args: Args.text({ name: "args" }).pipe(Args.repeated) },
    () => Effect.fail(new NotAvailableYet({ command: name }))
  ).pipe(Command.withDescription(`${description} (not available yet)`))
