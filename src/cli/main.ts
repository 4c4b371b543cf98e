import { type CliApp, Command, ValidationError } from "@effect/cli"
import { Cause, Effect, Either, Exit, Option } from "effect"
import { clockStartingAt, debugSettingsFrom, spansLayer } from "../config/Debug.js"
import { frameworkVersion } from "../config/HostConfig.js"
import type { ConfigInvalid } from "../domain/Errors.js"
import type { OperationFailed, OperationRefused } from "../lifecycle/Errors.js"
import type { RegistryFetchFailed } from "../registry/RegistryErrors.js"
import type { LockHeld } from "../store/OperationLock.js"
import type { DatabaseUnusable } from "../store/Database.js"
import type { StoreError } from "../store/StoreError.js"
import { builtinCommandRuns } from "./CodeCache.js"
import { CliInvocation } from "./Invocation.js"
import { CommandExit } from "./Output.js"
import { type Invocation, platformLayer, withStderrLogger } from "./Runtime.js"

/**
 * The built-in commands, each loaded only when it runs: a command module pulls in the code below it
 * (lifecycle, archive, registry, runtime, server), and `host list` should not pay for `host serve`.
 * `host --help` is the static page of cli/Help.ts and loads none; an unknown command loads them all
 * (for @effect/cli's own error).
 */
const builtins = {
  validate: () => import("./commands/validate.js").then((module) => module.validateCommand),
  list: () => import("./commands/list.js").then((module) => module.listCommand),
  status: () => import("./commands/status.js").then((module) => module.statusCommand),
  add: () => import("./commands/lifecycle.js").then((module) => module.addCommand),
  update: () => import("./commands/lifecycle.js").then((module) => module.updateCommand),
  enable: () => import("./commands/lifecycle.js").then((module) => module.enableCommand),
  disable: () => import("./commands/lifecycle.js").then((module) => module.disableCommand),
  remove: () => import("./commands/lifecycle.js").then((module) => module.removeCommand),
  unlock: () => import("./commands/lifecycle.js").then((module) => module.unlockCommand),
  "migrate:status": () => import("./commands/lifecycle.js").then((module) => module.migrateStatusCommand),
  "artifacts:prune": () => import("./commands/lifecycle.js").then((module) => module.artifactsPruneCommand),
  reconcile: () => import("./commands/reconcile.js").then((module) => module.reconcileCommand),
  "schedule:list": () => import("./commands/schedule.js").then((module) => module.scheduleListCommand),
  "schedule:run": () => import("./commands/schedule.js").then((module) => module.scheduleRunCommand),
  commands: () => import("./commands/extensionCommands.js").then((module) => module.commandsCommand),
  export: () => import("./commands/export.js").then((module) => module.exportCommand),
  keygen: () => import("./commands/keygen.js").then((module) => module.keygenCommand),
  verify: () => import("./commands/verify.js").then((module) => module.verifyCommand),
  serve: () => import("./commands/serve.js").then((module) => module.serveCommand),
  "panel:token": () => import("./commands/panel.js").then((module) => module.panelTokenCommand),
  setup: () => import("./commands/setup.js").then((module) => module.setupCommand),
  "panel:install": () => import("./commands/panelInstall.js").then((module) => module.panelInstallCommand),
  "panel:uninstall": () => import("./commands/panelInstall.js").then((module) => module.panelUninstallCommand),
  "panel:status": () => import("./commands/panelInstall.js").then((module) => module.panelStatusCommand),
  "permissions:grant": () => import("./commands/permissions.js").then((module) => module.permissionsGrantCommand),
  "permissions:revoke": () => import("./commands/permissions.js").then((module) => module.permissionsRevokeCommand),
  "permissions:list": () => import("./commands/permissions.js").then((module) => module.permissionsListCommand),
  "registry:sync": () => import("./commands/registry.js").then((module) => module.registrySyncCommand),
  "registry:status": () => import("./commands/registry.js").then((module) => module.registryStatusCommand),
  "registry:build": () => import("./commands/registryBuild.js").then((module) => module.registryBuildCommand),
  build: () => import("./commands/build.js").then((module) => module.buildCommand),
  new: () => import("./commands/new.js").then((module) => module.newCommand),
  dev: () => import("./commands/dev.js").then((module) => module.devCommand),
  "framework:uninstall": () => import("./commands/uninstall.js").then((module) => module.uninstallCommand),
  doctor: () => import("./commands/doctor.js").then((module) => module.doctorCommand)
} as const

type BuiltinName = keyof typeof builtins
type BuiltinCommand = Awaited<ReturnType<(typeof builtins)[BuiltinName]>>

const builtinNames: ReadonlySet<string> = new Set(Object.keys(builtins))
/** The built-in command names; the help page must name each (test/cli/help.test.ts). */
export const builtinCommandNames: ReadonlyArray<string> = Object.keys(builtins)
const isBuiltin = (name: string): name is BuiltinName => Object.hasOwn(builtins, name)

/** The `host` command with the subcommands this run needs: the one named, or all of them for help. */
const hostCommand = async (name: string) => {
  const [first, ...others]: ReadonlyArray<BuiltinCommand> = isBuiltin(name)
    ? [await builtins[name]()]
    : await Promise.all(Object.values(builtins).map((load) => load()))
  return Command.make("host").pipe(
    Command.withDescription(
      "Host: install, enable, disable, update and remove panel extensions, or converge the panel to a desired-state file.\n" +
        "Global flags: --root DIR (else HOST_ROOT, else the current folder), --verbose."
    ),
    Command.withSubcommands([first!, ...others])
  )
}

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
  const debug = debugSettingsFrom(env)
  if (Either.isLeft(debug)) return { usageError: debug.left }
  return {
    invocation: { frameworkRoot, root, verbose, env, initDatabase, debug: debug.right },
    args: command === undefined ? [] : [command, ...rest]
  }
}

/** Failures with a hint of their own, per tag; exhaustive, so a new kind of failure gets one or says none. */
type HintedFailure = ConfigInvalid | StoreError | DatabaseUnusable | OperationFailed | OperationRefused | LockHeld | RegistryFetchFailed

const unreachableHint = "hint: the source could not be fetched; check registry_url and the network, then retry"

const hints: { readonly [Tag in HintedFailure["_tag"]]: string | undefined } = {
  ConfigInvalid: "hint: fix config/host.yaml or the environment variable it names",
  StoreError: "hint: check the database setting (HOST_DATABASE_URL): a SQLite folder must be writable, a server reachable with those credentials",
  DatabaseUnusable: "hint: docs/operations.md, \"When the database is unreadable\"",
  StoreUnavailable: "hint: the database did not answer; check the database setting, then run the command again",
  SourceRejected: "hint: the archive, its signature, its manifest or the registry's answer was refused (host verify <file> shows why)",
  SourceUnreachable: unreachableHint,
  // The registry's index read before an operation starts (`host add vendor/name` resolves the version first).
  RegistryFetchFailed: unreachableHint,
  MigrationsFailed: "hint: a migration of the extension failed and was rolled back; fix the extension and run the command again",
  FilesFailed: "hint: check free disk space and that Host's root (--root) is writable",
  // Their messages already say what to do.
  OperationRefused: undefined,
  LockHeld: undefined
}

const hintOf = (tag: string | undefined): string | undefined =>
  tag !== undefined && Object.hasOwn(hints, tag) ? hints[tag as HintedFailure["_tag"]] : undefined

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
    const hint = hintOf(tag)
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
  // `host`, `host --help`, `host help`: the grouped page of src/cli/Help.ts, without loading any command.
  if (args.length === 0 || (args.length === 1 && ["--help", "-h", "help"].includes(args[0]!))) {
    const { helpPage } = await import("./Help.js")
    process.stdout.write(helpPage(frameworkVersion))
    return 0
  }
  // `host --version` needs no command either (@effect/cli would load them all to print the same line).
  if (args.length === 1 && args[0] === "--version") {
    process.stdout.write(`${frameworkVersion}\n\n`)
    return 0
  }
  // `host help <command>` is `host <command> --help`.
  if (args[0] === "help") return main([...args.slice(1), "--help"], frameworkRoot, env, cwd)
  const command = args[0] ?? "host"
  // A built-in command keeps a code cache of its own (bin/host.js, docs/decisions.md "A code cache per command").
  if (isBuiltin(command)) builtinCommandRuns()
  const program: Effect.Effect<void, unknown, CliInvocation | CliApp.CliApp.Environment> =
    isExtensionCommand(command)
      ? Effect.flatMap(
        Effect.promise(() => import("./commands/extensionCommands.js")),
        (module) => module.runExtensionCommand(command, args.slice(1))
      )
      : Effect.flatMap(
        Effect.promise(() => hostCommand(command)),
        (host) => Command.run(host, { name: "Host", version: frameworkVersion })(["node", "host", ...args])
      )
  const exit = await Effect.runPromiseExit(
    program.pipe(
      withUsageErrorLines(command),
      Effect.provideService(CliInvocation, invocation),
      // The platform is built once for the whole run: the commands' layers stand on it.
      Effect.provide(platformLayer),
      withStderrLogger,
      // HOST_DEBUG's `now`: the whole run reads time from this clock (docs/operations.md).
      (run) => invocation.debug?.now === undefined ? run : Effect.withClock(run, clockStartingAt(invocation.debug.now)),
      // HOST_DEBUG's `spans`: each span of the run is written to that file as it ends.
      (run) => invocation.debug?.spans === undefined ? run : Effect.provide(run, spansLayer(invocation.debug))
    )
  )
  return renderExit(exit, command, invocation.verbose, args.includes("--json"))
}
