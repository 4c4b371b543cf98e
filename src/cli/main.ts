import { type CliApp, Command, ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Cause, Effect, Exit, HashMap, Layer, Option } from "effect"
import { frameworkVersion } from "../config/HostConfig.js"
import { buildCommand } from "./commands/build.js"
import { exportCommand } from "./commands/export.js"
import { newCommand } from "./commands/new.js"
import { devCommand } from "./commands/dev.js"
import { keygenCommand } from "./commands/keygen.js"
import {
  addCommand,
  disableCommand,
  enableCommand,
  migrateStatusCommand,
  removeCommand,
  unlockCommand,
  updateCommand
} from "./commands/lifecycle.js"
import { listCommand } from "./commands/list.js"
import { panelTokenCommand } from "./commands/panel.js"
import { reconcileCommand } from "./commands/reconcile.js"
import { commandsCommand, runExtensionCommand } from "./commands/extensionCommands.js"
import { scheduleListCommand, scheduleRunCommand } from "./commands/schedule.js"
import { registryStatusCommand, registrySyncCommand } from "./commands/registry.js"
import { serveCommand } from "./commands/serve.js"
import { statusCommand } from "./commands/status.js"
import { uninstallCommand } from "./commands/uninstall.js"
import { validateCommand } from "./commands/validate.js"
import { verifyCommand } from "./commands/verify.js"
import { CliInvocation } from "./Invocation.js"
import { CommandExit } from "./Output.js"
import { type Invocation, stderrLogger } from "./Runtime.js"

const host = Command.make("host").pipe(
  Command.withDescription(
    "Host: install, enable, disable, update and remove panel extensions, or converge the panel to a desired-state file.\n" +
      "Global flags: --root DIR (else HOST_ROOT, else the current folder), --verbose."
  ),
  Command.withSubcommands([
    validateCommand,
    listCommand,
    statusCommand,
    addCommand,
    updateCommand,
    enableCommand,
    disableCommand,
    removeCommand,
    unlockCommand,
    migrateStatusCommand,
    reconcileCommand,
    scheduleListCommand,
    scheduleRunCommand,
    commandsCommand,
    exportCommand,
    keygenCommand,
    verifyCommand,
    serveCommand,
    panelTokenCommand,
    registrySyncCommand,
    registryStatusCommand,
    buildCommand,
    newCommand,
    devCommand,
    uninstallCommand
  ])
)

const runCli = Command.run(host, { name: "Host", version: frameworkVersion })

const builtinNames: ReadonlySet<string> = new Set(HashMap.keys(Command.getSubcommands(host)))

/** A name shaped like an extension command (`vendor:thing`) that no built-in has. */
const isExtensionCommand = (name: string) => !builtinNames.has(name) && /^[a-z0-9-]+(:[a-z0-9-]+)+$/.test(name)

export interface ParsedArguments {
  readonly invocation: Invocation
  readonly args: ReadonlyArray<string>
}

/**
 * Takes the global flags (`--root DIR`, `--root=DIR`, `--verbose`) from anywhere before `--`, and
 * accepts the `host:`-prefixed command names (`host host:list`).
 */
export const parseArguments = (
  argv: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
  frameworkRoot: string
): ParsedArguments | { readonly usageError: string } => {
  let root = env.HOST_ROOT !== undefined && env.HOST_ROOT !== "" ? env.HOST_ROOT : cwd
  let verbose = false
  let initDatabase = false
  const args: Array<string> = []
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!
    if (arg === "--") {
      args.push(...argv.slice(index))
      break
    }
    if (arg === "--verbose") verbose = true
    else if (arg === "--init-database") initDatabase = true
    else if (arg === "--root") {
      const value = argv[index + 1]
      if (value === undefined || value.startsWith("--")) return { usageError: "--root needs a folder" }
      root = value
      index++
    } else if (arg.startsWith("--root=")) root = arg.slice("--root=".length)
    else args.push(arg)
  }
  // `--json` is global too: given before the command, it goes to the command.
  const leadingJson = args.findIndex((arg) => !arg.startsWith("-")) > args.indexOf("--json") && args.includes("--json")
  if (leadingJson) args.splice(args.indexOf("--json"), 1)
  const [first, ...rest] = args
  if (leadingJson) rest.push("--json")
  const command = first?.startsWith("host:") ? first.slice("host:".length) : first
  return { invocation: { frameworkRoot, root, verbose, env, initDatabase }, args: command === undefined ? [] : [command, ...rest] }
}

const hints: Partial<Record<string, string>> = {
  ConfigInvalid: "hint: fix config/host.yaml or the environment variable it names",
  StoreError: "hint: check the database setting (HOST_DATABASE_URL): a SQLite folder must be writable, a server reachable with those credentials",
  DatabaseUnusable: "hint: docs/operations.md, \"When the database is unreadable\""
}

const describe = (error: unknown): { readonly message: string; readonly tag: string | undefined } => {
  if (error !== null && typeof error === "object") {
    const tag = "_tag" in error && typeof error._tag === "string" ? error._tag : undefined
    const message = "message" in error && typeof error.message === "string" && error.message !== ""
      ? error.message
      : String(error)
    return { message, tag }
  }
  return { message: String(error), tag: undefined }
}

/**
 * With `--json` stdout is always one JSON document: a run that fails before printing its result prints
 * `{"error": {"code", "message"}}` there too (the `error:` line still goes to stderr).
 */
const printJsonError = (json: boolean, code: string, message: string) => {
  if (json) process.stdout.write(`${JSON.stringify({ error: { code, message } }, null, 2)}\n`)
}

/** Renders how a run ended (`error: <what failed>: <why>` on stderr) and returns the exit code. */
export const renderExit = (exit: Exit.Exit<unknown, unknown>, command: string, verbose: boolean, json = false): number => {
  if (Exit.isSuccess(exit)) return 0
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (ValidationError.isValidationError(error)) {
      printJsonError(json, "UsageError", `${command}: invalid arguments (see host ${command} --help)`)
      return 2
    }
    if (error instanceof CommandExit) return error.code
    const { message, tag } = describe(error)
    const subject = message.startsWith(`${command} `) ? message : `${command}: ${message}`
    printJsonError(json, tag ?? "Error", subject)
    process.stderr.write(`error: ${subject}\n`)
    const hint = tag === undefined ? undefined : hints[tag]
    if (hint !== undefined) process.stderr.write(`${hint}\n`)
    if (verbose) process.stderr.write(`${Cause.pretty(exit.cause)}\n`)
    return 1
  }
  if (Cause.isInterruptedOnly(exit.cause)) {
    process.stderr.write(`error: ${command}: interrupted\n`)
    return 130
  }
  const defect = Cause.squash(exit.cause)
  printJsonError(json, "UnexpectedFailure", `${command}: unexpected failure: ${describe(defect).message}`)
  process.stderr.write(`error: ${command}: unexpected failure: ${describe(defect).message}\n`)
  process.stderr.write(verbose ? `${Cause.pretty(exit.cause)}\n` : "hint: run again with --verbose for details\n")
  return 1
}

/**
 * @effect/cli prints a usage error itself (`Missing argument <source>`) through Console.error; it gets the
 * `error: <command>: <why>` form of every other failure. Lines already in that form pass unchanged.
 */
const withUsageErrorLines = (command: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.console, (console) =>
    Effect.withConsole(effect, {
      ...console,
      error: (...args: ReadonlyArray<unknown>) => {
        const text = args.map(String).join(" ").trim()
        return console.error(text.startsWith("error: ") ? text : `error: ${command}: ${text}`)
      }
    }))

/** Runs one `host` invocation and resolves to its exit code. */
export const main = async (
  argv: ReadonlyArray<string>,
  frameworkRoot: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  cwd: string = process.cwd()
): Promise<number> => {
  const parsed = parseArguments(argv, env, cwd, frameworkRoot)
  if ("usageError" in parsed) {
    process.stderr.write(`error: ${parsed.usageError}\n`)
    return 2
  }
  const { args, invocation } = parsed
  const command = args[0] ?? "host"
  const program: Effect.Effect<void, unknown, CliInvocation | CliApp.CliApp.Environment> =
    isExtensionCommand(command)
      ? runExtensionCommand(command, args.slice(1))
      : runCli(["node", "host", ...args])
  const exit = await Effect.runPromiseExit(
    program.pipe(
      withUsageErrorLines(command),
      Effect.provideService(CliInvocation, invocation),
      Effect.provide(Layer.merge(NodeContext.layer, stderrLogger))
    )
  )
  return renderExit(exit, command, invocation.verbose, args.includes("--json"))
}
