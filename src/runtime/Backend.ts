import { FileSystem, Path } from "@effect/platform"
import { Duration, Effect, Schema } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import type { LifecycleEvent } from "../domain/Events.js"
import { normalizeHealthStatus, type HealthStatus } from "../domain/Health.js"
import { LifecycleEvents } from "../kernel/Events.js"
import { ModuleLoader } from "../kernel/ModuleLoader.js"
import { Panel } from "../panel/Panel.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { CoreRows } from "../store/CoreRows.js"
import type { HostEvent } from "@host/sdk/server"
import { buildGeneration, type Generation, type LoadedExtension, toHostEvent } from "./Runtime.js"
import { callExtensionCode } from "./ExtensionCode.js"
import { recordQuarantine } from "./Quarantine.js"
import { runtimeVersions } from "../system/RuntimeVersions.js"
// Backend parts outside HTTP (docs/backend.md): the console commands and health checks of booted
// extensions, for the CLI (`host <command>`, `host commands`, `status --health`, `schedule:run`) and the
// server alike.

/** Boots the enabled extensions once, for a command-line process. */
export const bootForCli = Effect.gen(function*() {
  const { config, paths } = yield* HostConfig
  const panel = yield* Panel
  const loader = yield* ModuleLoader
  const installed = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.list)
  const generation = yield* buildGeneration({
    number: 0,
    installed,
    extensionsPath: paths.extensions,
    versions: runtimeVersions(config.version, panel.info),
    loader,
    moduleCache: new Map()
  })
  for (const [id, reason] of generation.quarantined) yield* Effect.logWarning(`quarantined ${id}: ${reason}`)
  yield* recordQuarantine(generation, new Map(installed.map((record) => [record.extensionId, record.version])))
  return generation
}).pipe(Effect.withSpan("Backend.bootForCli"))

// ---- console commands ----------------------------------------------------------------------------

export interface ExtensionCommand {
  readonly name: string
  readonly description: string
  readonly extensionId: string
  readonly run: (args: ReadonlyArray<string>) => unknown
}

const CommandEntry = Schema.Struct({
  name: Schema.String.pipe(Schema.pattern(/^[a-z0-9-]+(:[a-z0-9-]+)+$/)),
  description: Schema.optional(Schema.String),
  run: Schema.declare((value: unknown): value is (args: ReadonlyArray<string>) => unknown => typeof value === "function")
})

/** The `HasCommands` entries of every booted extension (malformed entries are skipped with a warning). */
export const extensionCommands = (generation: Generation) =>
  Effect.gen(function*() {
    const commands: Array<ExtensionCommand> = []
    for (const extension of generation.extensions.values()) {
      const instance = extension.instance as { getCommands?: () => unknown } | undefined
      if (instance === undefined || typeof instance.getCommands !== "function") continue
      const entries = yield* callExtensionCode(extension.id, "getCommands()", () => instance.getCommands!(), Duration.seconds(5)).pipe(
        Effect.catchAll((error) => Effect.as(Effect.logWarning(error.message), []))
      )
      for (const entry of Array.isArray(entries) ? entries : []) {
        const decoded = Schema.decodeUnknownOption(CommandEntry)(entry)
        if (decoded._tag === "None") {
          yield* Effect.logWarning(`${extension.id}: a command entry is not {name: "vendor:thing", run()}; skipped`)
          continue
        }
        const taken = commands.find((command) => command.name === decoded.value.name)
        if (taken !== undefined) {
          // `host <name>` runs the first one (extensions in dependency order); a task runs its own extension's.
          yield* Effect.logWarning(`${extension.id}: the command ${decoded.value.name} is also declared by ${taken.extensionId}; host ${decoded.value.name} runs ${taken.extensionId}'s`)
        }
        commands.push({
          name: decoded.value.name,
          description: decoded.value.description ?? "",
          extensionId: extension.id,
          run: (args) => decoded.value.run.call(entry, args)
        })
      }
    }
    return commands.sort((a, b) => a.name.localeCompare(b.name))
  })

// ---- health checks -------------------------------------------------------------------------------

export interface HealthCheckResult {
  readonly id: string
  readonly label: string
  readonly severity: string | null
  readonly status: HealthStatus
  readonly message: string | null
  readonly details: unknown
  /** Declared in the manifest's `health.checks` (undeclared results are shown, not counted). */
  readonly declared: boolean
}

export interface ExtensionHealth {
  readonly extensionId: string
  readonly checks: ReadonlyArray<HealthCheckResult>
}

const HealthEntry = Schema.Struct({
  id: Schema.String,
  status: Schema.optional(Schema.Unknown),
  message: Schema.optional(Schema.String),
  details: Schema.optional(Schema.Unknown)
})

/**
 * Runs one extension's `HasHealthChecks` under a time limit and joins the results with its declared
 * checks: a declared check without a result is `unknown`; a throw or a timeout makes every declared
 * check `error` with the message.
 */
export const extensionHealth = (extension: LoadedExtension, timeout: Duration.DurationInput) =>
  Effect.gen(function*() {
    const declared = extension.manifest.document.health?.checks ?? []
    const instance = extension.instance as { getHealthChecks?: () => unknown } | undefined
    const reported = instance !== undefined && typeof instance.getHealthChecks === "function"
      ? yield* Effect.either(callExtensionCode(extension.id, "getHealthChecks()", () => instance.getHealthChecks!(), timeout))
      : undefined
    if (reported !== undefined && reported._tag === "Left") {
      return {
        extensionId: extension.id,
        checks: declared.map((check) => ({
          id: check.id,
          label: check.label,
          severity: check.severity ?? null,
          status: "error" as const,
          message: reported.left.detail,
          details: null,
          declared: true
        }))
      } satisfies ExtensionHealth
    }
    const results = (reported === undefined || !Array.isArray(reported.right) ? [] : reported.right)
      .flatMap((entry) => Schema.decodeUnknownOption(HealthEntry)(entry).pipe((option) => (option._tag === "Some" ? [option.value] : [])))
    const byId = new Map(results.map((result) => [result.id, result]))
    const declaredIds = new Set(declared.map((check) => check.id))
    return {
      extensionId: extension.id,
      checks: [
        ...declared.map((check): HealthCheckResult => {
          const result = byId.get(check.id)
          return {
            id: check.id,
            label: check.label,
            severity: check.severity ?? null,
            status: result === undefined ? "unknown" : normalizeHealthStatus(result.status),
            message: result?.message ?? (result === undefined ? "no result reported" : null),
            details: result?.details ?? null,
            declared: true
          }
        }),
        ...results.filter((result) => !declaredIds.has(result.id)).map((result): HealthCheckResult => ({
          id: result.id,
          label: result.id,
          severity: null,
          status: normalizeHealthStatus(result.status),
          message: result.message ?? null,
          details: result.details ?? null,
          declared: false
        }))
      ]
    } satisfies ExtensionHealth
  })

/** Every booted extension's health, the checks of one extension at a time limit each. */
export const runHealthChecks = (generation: Generation, timeout: Duration.DurationInput = Duration.seconds(5)) =>
  Effect.forEach([...generation.extensions.values()], (extension) => extensionHealth(extension, timeout), { concurrency: 8 })

/** A declared `critical` check in `error`: what makes `status --health` exit 1. */
export const criticalFailures = (report: ReadonlyArray<ExtensionHealth>): ReadonlyArray<string> =>
  report.flatMap((extension) =>
    extension.checks
      .filter((check) => check.declared && check.severity === "critical" && check.status === "error")
      .map((check) => `${extension.extensionId} ${check.id}`)
  )

// ---- event listeners -----------------------------------------------------------------------------

/**
 * Gives a framework event to every `HasEventListeners` listener of the booted extensions for its name.
 * A listener that throws is logged; it never undoes the operation that published the event.
 */
export const dispatchHostEvent = (generation: Generation, event: HostEvent) =>
  Effect.gen(function*() {
    for (const extension of generation.extensions.values()) {
      for (const listener of extension.listeners[event.name] ?? []) {
        yield* callExtensionCode(extension.id, `a listener for ${event.name}`, () => listener(event), Duration.seconds(30)).pipe(
          Effect.catchAll((error) => Effect.logWarning(error.message))
        )
      }
    }
  })

export const dispatchEvent = (generation: Generation, event: LifecycleEvent) => dispatchHostEvent(generation, toHostEvent(event))

/** Panel events for the servers that appeared in or vanished from the panel between two readings. */
export const serverEvents = (
  before: ReadonlyArray<{ readonly uuid: string; readonly name: string }>,
  after: ReadonlyArray<{ readonly uuid: string; readonly name: string }>
): ReadonlyArray<HostEvent> => {
  const old = new Set(before.map((server) => server.uuid))
  const next = new Set(after.map((server) => server.uuid))
  return [
    ...after.filter((server) => !old.has(server.uuid))
      .map((server): HostEvent => ({ name: "ServerCreated", server: { uuid: server.uuid, name: server.name } })),
    ...before.filter((server) => !next.has(server.uuid))
      .map((server): HostEvent => ({ name: "ServerDeleted", server: { uuid: server.uuid, name: server.name } }))
  ]
}

/**
 * In a command-line process, listeners get the events of the operations it runs: the extensions are
 * booted when an event is published (so a freshly installed extension hears its own install).
 */
export const listenInThisProcess = Effect.gen(function*() {
  const events = yield* LifecycleEvents
  const context = yield* Effect.context<
    HostConfig | Panel | ModuleLoader | ExtensionsRepo | CoreRows | FileSystem.FileSystem | Path.Path
  >()
  yield* events.subscribe((event) =>
    Effect.flatMap(bootForCli, (generation) => dispatchEvent(generation, event)).pipe(
      Effect.catchAll((error) => Effect.logWarning(`listeners of ${event._tag} could not run: ${error.message}`)),
      Effect.provide(context)
    )
  )
})
