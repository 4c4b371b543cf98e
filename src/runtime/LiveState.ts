import { FileSystem, Path } from "@effect/platform"
import { Context, Duration, Effect, Layer, Option, Schedule, Schema, Stream } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import type { LifecycleEvent } from "../domain/Events.js"
import { coreExtensionId } from "../domain/Installed.js"
import { SettingsRepo } from "../store/SettingsRepo.js"
import { LifecycleEvents } from "../lifecycle/Events.js"
import { type LoadedModule, ModuleLoader } from "../lifecycle/ModuleLoader.js"
import { Panel, type PanelDirectory, type PanelInfo } from "../panel/Panel.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { type ClientBodies, clientBodies } from "./ClientView.js"
import { recordQuarantine } from "./Quarantine.js"
import { dispatchEvent, dispatchHostEvent, serverEvents } from "./Backend.js"
import { devSignals } from "./DevSignal.js"
import { buildGeneration, type Generation } from "./Runtime.js"

// The live runtime of a server (docs/http.md "Runtime generations, quarantine, live state"): the current generation, swapped for a new one when
// the installed state changes — in this process (lifecycle events, at once) or in another (the CLI, a
// replica: the database is polled every second, so a change shows within 2 s). A request takes the
// generation current when it starts and finishes on it, so a swap drops nothing in flight.

export interface LiveGeneration {
  readonly generation: Generation
  readonly bodies: ClientBodies
  readonly panel: PanelDirectory
  readonly panelInfo: PanelInfo
}

export interface LiveRuntimeService {
  /** The current generation, or undefined before the first boot finished. */
  readonly current: () => LiveGeneration | undefined
  /** Re-reads the state now and swaps if it changed (or always, with `force`). */
  readonly refresh: (force?: boolean) => Effect.Effect<LiveGeneration>
  /** Called with every new generation once it is current (the bridge's events stream); returns an unsubscribe. */
  readonly onSwap: (listener: (live: LiveGeneration) => void) => () => void
}

export class LiveRuntime extends Context.Tag("host/runtime/LiveRuntime")<LiveRuntime, LiveRuntimeService>() {}

export interface LiveRuntimeOptions {
  /** How often the database is checked for changes made by other processes (default 1 s). */
  readonly pollInterval?: Duration.DurationInput
}

/** The panel's servers as last seen (a host/core settings row), to tell created and deleted ones apart. */
const knownServersKey = "panel_servers"

const make = (options: LiveRuntimeOptions) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const { config, paths } = yield* HostConfig
    const extensionsRepo = yield* ExtensionsRepo
    const panel = yield* Panel
    const loader = yield* ModuleLoader
    const events = yield* LifecycleEvents
    const context = yield* Effect.context<FileSystem.FileSystem | Path.Path | HostConfig | SettingsRepo>()
    const hostVersion = config.version
    const moduleCache = new Map<string, LoadedModule>()
    const lock = yield* Effect.makeSemaphore(1)
    const panelFile = path.join(paths.root, "config", "panel.yaml")

    let current: LiveGeneration | undefined = undefined
    const swapListeners = new Set<(live: LiveGeneration) => void>()
    const onSwap = (listener: (live: LiveGeneration) => void) => {
      swapListeners.add(listener)
      return () => {
        swapListeners.delete(listener)
      }
    }
    let fingerprint = ""
    let panelStamp = ""
    let panelState = { info: panel.info, directory: panel.directory }

    const stampOf = (file: string) =>
      fs.stat(file).pipe(
        Effect.map((info) => `${Option.getOrElse(Option.map(info.mtime, (date) => date.getTime()), () => 0)}:${info.size}`),
        Effect.orElseSucceed(() => "absent")
      )

    const persistQuarantine = (generation: Generation) =>
      recordQuarantine(generation, installedVersions).pipe(Effect.provide(context))

    let installedVersions = new Map<string, string>()

    const KnownServers = Schema.Array(Schema.Struct({ uuid: Schema.String, name: Schema.String }))
    const readKnownServers = Effect.flatMap(SettingsRepo, (settings) => settings.get(coreExtensionId, knownServersKey)).pipe(
      Effect.map((value) => Option.getOrUndefined(Option.flatMap(value, Schema.decodeUnknownOption(KnownServers)))),
      Effect.orElseSucceed(() => undefined),
      Effect.provide(context)
    )
    const writeKnownServers = (servers: ReadonlyArray<{ readonly uuid: string; readonly name: string }>) =>
      Effect.flatMap(SettingsRepo, (settings) => settings.put(coreExtensionId, knownServersKey, servers)).pipe(
        Effect.catchAll((error) => Effect.logWarning(`could not record the panel's servers: ${error.message}`)),
        Effect.provide(context)
      )

    const rebuild = (force: boolean) =>
      Effect.gen(function*() {
        const installed = yield* extensionsRepo.list
        const stamp = yield* stampOf(panelFile)
        const nextFingerprint = `${stamp}\n${
          installed.map((e) => `${e.extensionId}|${e.version}|${e.enabled}|${e.updatedAt}`).join("\n")
        }`
        if (!force && current !== undefined && nextFingerprint === fingerprint) return current
        if (stamp !== panelStamp) {
          panelState = yield* panel.reload.pipe(
            Effect.catchAll((error) =>
              Effect.as(Effect.logWarning(`config/panel.yaml: ${error.message}; keeping the previous users and servers`), panelState)
            )
          )
          panelStamp = stamp
        }
        installedVersions = new Map(installed.map((e) => [e.extensionId, e.version]))
        const number = (current?.generation.number ?? 0) + 1
        const started = Date.now()
        const generation = yield* buildGeneration({
          number,
          installed,
          extensionsPath: paths.extensions,
          frameworkVersion: hostVersion,
          versions: { host: hostVersion, panel: panelState.info.version, php: panelState.info.php, node: process.versions.node },
          loader,
          moduleCache
        }).pipe(Effect.provide(context))
        for (const warning of generation.warnings) yield* Effect.logWarning(warning)
        for (const [id, reason] of generation.quarantined) {
          if (current?.generation.quarantined.get(id) !== reason) yield* Effect.logWarning(`quarantined ${id}: ${reason}`)
        }
        const next: LiveGeneration = {
          generation,
          bodies: clientBodies(generation, { version: hostVersion, baseUrl: config.base_url }),
          panel: panelState.directory,
          panelInfo: panelState.info
        }
        current = next
        fingerprint = nextFingerprint
        yield* Effect.forEach([...swapListeners], (listener) =>
          Effect.try(() => listener(next)).pipe(
            Effect.catchAll((error) => Effect.logWarning(`a generation listener failed: ${String(error.error)}`))
          ), { discard: true })
        yield* Effect.logInfo(
          `runtime generation ${number}: ${generation.extensions.size} extension(s) booted, ${generation.quarantined.size} quarantined, in ${Date.now() - started} ms`
        )
        yield* persistQuarantine(generation)
        // Servers that appeared in or vanished from config/panel.yaml since it was last read — by this
        // server or, at start, by an earlier one (the list is kept in a host/core settings row).
        const servers = panelState.directory.servers.map((server) => ({ uuid: server.uuid, name: server.name }))
        const known = yield* readKnownServers
        const events = serverEvents(known ?? servers, servers)
        if (known === undefined || events.length > 0) yield* writeKnownServers(servers)
        for (const event of events) yield* dispatchHostEvent(generation, event)
        return next
      })

    const refresh = (force = false): Effect.Effect<LiveGeneration> =>
      lock.withPermits(1)(rebuild(force)).pipe(
        Effect.catchAllCause((cause) =>
          Effect.flatMap(
            Effect.logError("could not build a runtime generation; keeping the current one", cause),
            () => current === undefined ? Effect.dieMessage("no runtime generation could be built") : Effect.succeed(current)
          )
        )
      )

    // Listeners of the current generation get framework events; every event also triggers a swap.
    const dispatch = (event: LifecycleEvent) =>
      Effect.gen(function*() {
        const live = current
        if (live === undefined) return
        yield* dispatchEvent(live.generation, event)
      })
    const scope = yield* Effect.scope
    yield* events.subscribe((event) =>
      dispatch(event).pipe(Effect.zipRight(Effect.forkIn(Effect.ignore(refresh()), scope)), Effect.asVoid)
    )

    const interval = options.pollInterval ?? Duration.seconds(1)
    yield* refresh(true).pipe(
      Effect.zipRight(Effect.repeat(Effect.delay(refresh(), interval), Schedule.forever)),
      Effect.ignore,
      Effect.forkScoped
    )

    // `host dev --watch` signals a saved change through storage/host/dev-signal: re-read now, not at the next poll.
    yield* devSignals(paths.storage).pipe(
      Stream.runForEach(() => refresh()),
      Effect.forkScoped
    )

    return { current: () => current, refresh, onSwap } satisfies LiveRuntimeService
  })

export const layer = (options: LiveRuntimeOptions = {}) => Layer.scoped(LiveRuntime, make(options))
