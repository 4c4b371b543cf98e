import { FileSystem, Path } from "@effect/platform"
import { Clock, Context, DateTime, Duration, Effect, Layer, Option, Schedule, Stream } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import type { LifecycleEvent } from "../domain/Events.js"
import { CoreKeys, CoreRows } from "../store/CoreRows.js"
import { LifecycleEvents } from "../kernel/Events.js"
import { type LoadedModule, ModuleLoader } from "../kernel/ModuleLoader.js"
import type { PanelAccess } from "../panel/Access.js"
import type { IdentityStats } from "../panel/Access.js"
import { Panel, type PanelDirectory, type PanelInfo } from "../panel/Panel.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { StateGeneration } from "../store/StateGeneration.js"
import { ReplicaFiles, writePanelStats, writeReplicaReport } from "./ReplicaFiles.js"
import { type ClientBodies, clientBodies } from "./ClientView.js"
import { recordQuarantine } from "./Quarantine.js"
import { dispatchEvent, dispatchHostEvent, serverEvents } from "./Backend.js"
import { devSignals } from "./DevSignal.js"
import { buildGeneration, type Generation } from "./Runtime.js"

// The live runtime of a server (docs/http.md "Runtime generations, quarantine, live state"): the current generation, swapped for a new one when
// the installed state changes — in this process (lifecycle events, at once) or in another (the CLI, a
// replica: the state generation row is polled every 500 ms, so a change shows within 2 s). Before a
// generation is built this root's files are converged to the records (docs/operations.md "Running
// replicas"); what this replica cannot get is unavailable here only. A request takes the generation
// current when it starts and finishes on it, so a swap drops nothing in flight.

export interface LiveGeneration {
  readonly generation: Generation
  readonly bodies: ClientBodies
  readonly panel: PanelDirectory
  /** How requests are checked against the panel (every driver, docs/panels.md "Drivers"). */
  readonly access: PanelAccess
  readonly panelInfo: PanelInfo
}

export interface LiveRuntimeService {
  /** The current generation, or undefined before the first boot finished. */
  readonly current: () => LiveGeneration | undefined
  /** Re-reads the state now and swaps if it changed (or always, with `force`). */
  readonly refresh: (force?: boolean) => Effect.Effect<LiveGeneration>
  /** Called with every new generation once it is current (the bridge's events stream); returns an unsubscribe. */
  readonly onSwap: (listener: (live: LiveGeneration) => void) => () => void
  /** The panel's base URL: `base_url` when configured, else the address the server listens on. */
  readonly baseUrl: () => string
  /** Called once the server listens: its address becomes the base URL unless `base_url` is configured. */
  readonly useListenUrl: (url: string) => void
}

export class LiveRuntime extends Context.Tag("host/runtime/LiveRuntime")<LiveRuntime, LiveRuntimeService>() {}

export interface LiveRuntimeOptions {
  /** How often the state generation is read for changes made by other processes (default 500 ms). */
  readonly pollInterval?: Duration.DurationInput
  /** How often extensions unavailable on this replica are tried again while nothing else changes (default 10 s). */
  readonly retryInterval?: Duration.DurationInput
}

const make = (options: LiveRuntimeOptions) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const { baseUrlConfigured, config, paths } = yield* HostConfig
    let baseUrl = config.base_url
    const extensionsRepo = yield* ExtensionsRepo
    const stateGeneration = yield* StateGeneration
    const replicaFiles = yield* ReplicaFiles
    const panel = yield* Panel
    const loader = yield* ModuleLoader
    const events = yield* LifecycleEvents
    const context = yield* Effect.context<FileSystem.FileSystem | Path.Path | HostConfig | CoreRows>()
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
    const interval = options.pollInterval ?? Duration.millis(500)
    const retryInterval = options.retryInterval ?? Duration.seconds(10)
    /** The state generation the current runtime was built from. */
    let lastGeneration = -1

    /** What this replica serves and lacks, for `host status` on this root (written when it changes). */
    const report = (generation: Generation, stateGenerationSeen: number) => {
      const unavailable = [...generation.unavailable].map(([id, reason]) => ({ id, reason }))
      const key = JSON.stringify([stateGenerationSeen, unavailable])
      if (key === reported) return Effect.void
      reported = key
      return Effect.flatMap(DateTime.now, (now) =>
        writeReplicaReport({
          pid: process.pid,
          state_generation: stateGenerationSeen,
          runtime_generation: generation.number,
          updated_at: DateTime.formatIso(now),
          unavailable
        })).pipe(
        Effect.catchAll((error) => Effect.logWarning(`could not write this replica's report: ${error.message}`)),
        Effect.provide(context)
      )
    }

    // The panel's servers as last seen (a host/core row), to tell created and deleted ones apart.
    const readKnownServers = Effect.flatMap(CoreRows, (rows) => rows.get(CoreKeys.panelServers)).pipe(
      Effect.map(Option.getOrUndefined),
      Effect.orElseSucceed(() => undefined),
      Effect.provide(context)
    )
    const writeKnownServers = (servers: ReadonlyArray<{ readonly uuid: string; readonly name: string }>) =>
      Effect.flatMap(CoreRows, (rows) => rows.put(CoreKeys.panelServers, servers)).pipe(
        Effect.catchAll((error) => Effect.logWarning(`could not record the panel's servers: ${error.message}`)),
        Effect.provide(context)
      )

    // What the last convergence left to do: try again at the next poll (deferred) or after a while (unavailable).
    let convergeAgainAt = 0
    let reported = ""

    const rebuild = (force: boolean) =>
      Effect.gen(function*() {
        // Read before the records, so a generation raised meanwhile is seen again at the next poll.
        const seenGeneration = yield* stateGeneration.current
        const installed = yield* extensionsRepo.list
        const stamp = yield* stampOf(panelFile)
        const converged = yield* replicaFiles.converge(installed)
        // Deferred (an operation on this host is switching files): what was unavailable stays so until checked again.
        const files = converged.deferred
          ? { ...converged, unavailable: new Map([...(current?.generation.unavailable ?? [])].filter(([id]) => installed.some((e) => e.extensionId === id && e.enabled))) }
          : converged
        const now = yield* Clock.currentTimeMillis
        convergeAgainAt = files.deferred
          ? now
          : files.unavailable.size > 0
          ? now + Duration.toMillis(retryInterval)
          : Number.POSITIVE_INFINITY
        for (const id of files.changed) {
          // Modules are cached by file and record; a tree replaced under the same record must be loaded again.
          const directory = path.join(paths.extensions, ...id.split("/")) + path.sep
          for (const key of moduleCache.keys()) if (key.startsWith(directory)) moduleCache.delete(key)
        }
        const nextFingerprint = `${stamp}\n${
          installed.map((e) => `${e.extensionId}|${e.version}|${e.enabled}|${e.updatedAt}`).join("\n")
        }\n${[...files.unavailable].map(([id, reason]) => `${id}|${reason}`).join("\n")}`
        if (!force && current !== undefined && nextFingerprint === fingerprint && files.changed.length === 0) {
          lastGeneration = seenGeneration
          yield* report(current.generation, seenGeneration)
          return current
        }
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
        const started = yield* Clock.currentTimeMillis
        const generation = yield* buildGeneration({
          number,
          installed,
          extensionsPath: paths.extensions,
          versions: { host: hostVersion, panel: panelState.info.version, php: panelState.info.php, node: process.versions.node },
          loader,
          moduleCache,
          unavailable: files.unavailable
        }).pipe(Effect.provide(context))
        for (const warning of generation.warnings) yield* Effect.logWarning(warning)
        for (const [id, reason] of generation.quarantined) {
          if (current?.generation.quarantined.get(id) !== reason) yield* Effect.logWarning(`quarantined ${id}: ${reason}`)
        }
        for (const [id, reason] of generation.unavailable) {
          if (current?.generation.unavailable.get(id) !== reason) yield* Effect.logWarning(`unavailable on this replica: ${id}: ${reason}`)
        }
        const next: LiveGeneration = {
          generation,
          bodies: clientBodies(generation, { version: hostVersion, baseUrl }),
          panel: panelState.directory,
          access: panel.access(panelState.directory),
          panelInfo: panelState.info
        }
        current = next
        fingerprint = nextFingerprint
        // Only a generation that was built counts as seen: a failed build is tried again at the next poll.
        lastGeneration = seenGeneration
        yield* Effect.forEach([...swapListeners], (listener) =>
          Effect.try(() => listener(next)).pipe(
            Effect.catchAll((error) => Effect.logWarning(`a generation listener failed: ${String(error.error)}`))
          ), { discard: true })
        yield* Effect.logInfo(
          `runtime generation ${number}: ${generation.extensions.size} extension(s) booted, ${generation.quarantined.size} quarantined, in ${(yield* Clock.currentTimeMillis) - started} ms`
        )
        yield* persistQuarantine(generation)
        yield* report(generation, seenGeneration)
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

    // The poll: one row by its key, and a stat of config/panel.yaml. Only a change (or convergence left to
    // retry) rebuilds; a database that cannot be read keeps the current generation serving.
    let pollFailing = false
    const poll = Effect.gen(function*() {
      const seen = yield* stateGeneration.current
      const stamp = yield* stampOf(panelFile)
      if (pollFailing) yield* Effect.logInfo("the database answers again")
      pollFailing = false
      if (seen !== lastGeneration || stamp !== panelStamp || (yield* Clock.currentTimeMillis) >= convergeAgainAt) yield* refresh()
    }).pipe(
      Effect.catchAll((error) =>
        pollFailing ? Effect.void : Effect.zipRight(Effect.sync(() => (pollFailing = true)), Effect.logWarning(`${error.message}; serving the current generation`))
      )
    )
    yield* refresh(true).pipe(
      Effect.zipRight(Effect.repeat(Effect.delay(poll, interval), Schedule.forever)),
      Effect.ignore,
      Effect.forkScoped
    )

    // A real panel's server list (its application API, when a key is configured) is read again every
    // `panel.reloadEvery`: servers that appeared or vanished become ServerCreated/ServerDeleted events.
    const reloadEvery = panel.reloadEvery
    if (reloadEvery !== undefined) {
      const pollPanel = Effect.gen(function*() {
        const next = yield* panel.reload
        const before = panelState.directory.servers.map((server) => server.uuid).join("\n")
        panelState = next
        if (current === undefined || before === next.directory.servers.map((server) => server.uuid).join("\n")) return
        current = { ...current, panel: next.directory, access: panel.access(next.directory), panelInfo: next.info }
        const servers = next.directory.servers.map((server) => ({ uuid: server.uuid, name: server.name }))
        const known = yield* readKnownServers
        const events = serverEvents(known ?? servers, servers)
        if (known === undefined || events.length > 0) yield* writeKnownServers(servers)
        for (const event of events) yield* dispatchHostEvent(current.generation, event)
      }).pipe(Effect.catchAll((error) => Effect.logWarning(`the panel's server list could not be read: ${error.message}`)))
      yield* Effect.repeat(Effect.delay(pollPanel, reloadEvery), Schedule.forever).pipe(Effect.ignore, Effect.forkScoped)
    }

    // Identity-cache counters, where `host panel:status` (another process) reads them: storage/host/replica/panel.json
    // (docs/panels.md "Identity cache counters"), written when they change.
    let lastStats = ""
    const writeStats = (counters: Effect.Effect<IdentityStats>) => Effect.gen(function*() {
      const stats = yield* counters
      const report = {
        pid: process.pid,
        driver: panel.info.kind,
        identity_cache: { hits: stats.hits, misses: stats.misses, panel_requests: stats.panelRequests },
        updated_at: new Date(yield* Clock.currentTimeMillis).toISOString()
      }
      const key = `${stats.hits}|${stats.misses}|${stats.panelRequests}`
      if (key === lastStats) return
      lastStats = key
      yield* writePanelStats(report)
    }).pipe(Effect.provide(context), Effect.catchAll((error) => Effect.logWarning(`panel.json: ${error.message}`)))
    if (panel.stats !== undefined) {
      yield* Effect.repeat(Effect.delay(writeStats(panel.stats), Duration.seconds(1)), Schedule.forever).pipe(Effect.ignore, Effect.forkScoped)
    }

    // `host dev --watch` signals a saved change through storage/host/dev-signal: re-read now, not at the next poll.
    yield* devSignals(paths.storage).pipe(
      Stream.runForEach(() => refresh()),
      Effect.forkScoped
    )

    const useListenUrl = (url: string) => {
      if (baseUrlConfigured === true) return
      baseUrl = url
      // The precomputed bodies of the generation already built carry the old URL.
      if (current !== undefined) current = { ...current, bodies: clientBodies(current.generation, { version: hostVersion, baseUrl }) }
    }
    return { current: () => current, refresh, onSwap, baseUrl: () => baseUrl, useListenUrl } satisfies LiveRuntimeService
  })

export const layer = (options: LiveRuntimeOptions = {}) => Layer.scoped(LiveRuntime, make(options))
