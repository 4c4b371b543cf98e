import { FileSystem, Path } from "@effect/platform"
import { Clock, Context, DateTime, Duration, Effect, Layer, Option, Ref, Schedule, Stream, SubscriptionRef } from "effect"
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
import { runtimeVersions } from "../system/RuntimeVersions.js"

// The live runtime of a server (docs/http.md "Runtime generations, quarantine, live state"): the current generation, swapped for a new one when
// the installed state changes — in this process (lifecycle events, at once) or in another (the CLI, a
// replica: the state generation row is polled every 500 ms, so a change shows within 2 s). Before a
// generation is built this root's files are converged to the records (docs/operations.md "Running
// replicas"); what this replica cannot get is unavailable here only. A request takes the generation
// current when it starts and finishes on it, so a swap drops nothing in flight.
//
// The current generation is a SubscriptionRef: a request reads it, and whoever follows swaps (the
// event streams) reads its `changes` — no listener set of our own (docs/decisions.md "Live state").
// What the poll remembers between runs (fingerprints, stamps, the panel last read) is one Ref written
// only under the rebuild's semaphore.

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
  readonly current: Effect.Effect<LiveGeneration | undefined>
  /**
   * Every generation once it is current, the one current at subscription first (the bridge's events
   * stream). A change of the panel's users or servers within one generation is not a new one.
   */
  readonly changes: Stream.Stream<LiveGeneration>
  /** Re-reads the state now and swaps if it changed (or always, with `force`). */
  readonly refresh: (force?: boolean) => Effect.Effect<LiveGeneration>
  /** The panel's base URL: `base_url` when configured, else the address the server listens on. */
  readonly baseUrl: Effect.Effect<string>
  /** Called once the server listens: its address becomes the base URL unless `base_url` is configured. */
  readonly useListenUrl: (url: string) => Effect.Effect<void>
}

export class LiveRuntime extends Context.Tag("host/runtime/LiveRuntime")<LiveRuntime, LiveRuntimeService>() {}

export interface LiveRuntimeOptions {
  /** How often the state generation is read for changes made by other processes (default 500 ms). */
  readonly pollInterval?: Duration.DurationInput
  /** How often extensions unavailable on this replica are tried again while nothing else changes (default 10 s). */
  readonly retryInterval?: Duration.DurationInput
}

/** What the poll remembers between runs (read and written under the rebuild's semaphore). */
interface Seen {
  /** The records, panel file stamp and unavailable extensions the current generation was built from. */
  readonly fingerprint: string
  /** The stamp of config/panel.yaml when it was last read, and what it said. */
  readonly panelStamp: string
  readonly panelState: { readonly info: PanelInfo; readonly directory: PanelDirectory }
  readonly installedVersions: ReadonlyMap<string, string>
  /** The state generation the current runtime was built from. */
  readonly lastGeneration: number
  /** What the last convergence left to do: try again at the next poll (deferred) or after a while (unavailable). */
  readonly convergeAgainAt: number
}

const make = (options: LiveRuntimeOptions) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const { baseUrlConfigured, config, paths } = yield* HostConfig
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

    const live = yield* SubscriptionRef.make<LiveGeneration | undefined>(undefined)
    const current = SubscriptionRef.get(live)
    const baseUrl = yield* Ref.make(config.base_url)
    const seen = yield* Ref.make<Seen>({
      fingerprint: "",
      panelStamp: "",
      panelState: { info: panel.info, directory: panel.directory },
      installedVersions: new Map(),
      lastGeneration: -1,
      convergeAgainAt: 0
    })
    /** The replica report last written, so an unchanged one is not written again. */
    const reported = yield* Ref.make("")

    const stampOf = (file: string) =>
      fs.stat(file).pipe(
        Effect.map((info) => `${Option.getOrElse(Option.map(info.mtime, (date) => date.getTime()), () => 0)}:${info.size}`),
        Effect.orElseSucceed(() => "absent")
      )

    const persistQuarantine = (generation: Generation, installedVersions: ReadonlyMap<string, string>) =>
      recordQuarantine(generation, installedVersions).pipe(Effect.provide(context))

    const interval = options.pollInterval ?? Duration.millis(500)
    const retryInterval = options.retryInterval ?? Duration.seconds(10)

    /** What this replica serves and lacks, for `host status` on this root (written when it changes). */
    const report = (generation: Generation, stateGenerationSeen: number) =>
      Effect.gen(function*() {
        const unavailable = [...generation.unavailable].map(([id, reason]) => ({ id, reason }))
        const key = JSON.stringify([stateGenerationSeen, unavailable])
        if ((yield* Ref.getAndSet(reported, key)) === key) return
        const now = yield* DateTime.now
        yield* writeReplicaReport({
          pid: process.pid,
          state_generation: stateGenerationSeen,
          runtime_generation: generation.number,
          updated_at: DateTime.formatIso(now),
          unavailable
        }).pipe(Effect.catchAll((error) => Effect.logWarning(`could not write this replica's report: ${error.message}`)))
      }).pipe(Effect.provide(context))

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

    const rebuild = (force: boolean) =>
      Effect.gen(function*() {
        // Read before the records, so a generation raised meanwhile is seen again at the next poll.
        const seenGeneration = yield* stateGeneration.current
        const installed = yield* extensionsRepo.list
        const stamp = yield* stampOf(panelFile)
        const converged = yield* replicaFiles.converge(installed)
        const previous = yield* current
        // Deferred (an operation on this host is switching files): what was unavailable stays so until checked again.
        const files = converged.deferred
          ? { ...converged, unavailable: new Map([...(previous?.generation.unavailable ?? [])].filter(([id]) => installed.some((e) => e.extensionId === id && e.enabled))) }
          : converged
        const now = yield* Clock.currentTimeMillis
        const convergeAgainAt = files.deferred
          ? now
          : files.unavailable.size > 0
          ? now + Duration.toMillis(retryInterval)
          : Number.POSITIVE_INFINITY
        yield* Ref.update(seen, (state) => ({ ...state, convergeAgainAt }))
        for (const id of files.changed) {
          // Modules are cached by file and record; a tree replaced under the same record must be loaded again.
          const directory = path.join(paths.extensions, ...id.split("/")) + path.sep
          for (const key of moduleCache.keys()) if (key.startsWith(directory)) moduleCache.delete(key)
        }
        const nextFingerprint = `${stamp}\n${
          installed.map((e) => `${e.extensionId}|${e.version}|${e.enabled}|${e.updatedAt}`).join("\n")
        }\n${[...files.unavailable].map(([id, reason]) => `${id}|${reason}`).join("\n")}`
        const before = yield* Ref.get(seen)
        if (!force && previous !== undefined && nextFingerprint === before.fingerprint && files.changed.length === 0) {
          yield* Ref.update(seen, (state) => ({ ...state, lastGeneration: seenGeneration }))
          yield* report(previous.generation, seenGeneration)
          return previous
        }
        const panelState = stamp === before.panelStamp ? before.panelState : yield* panel.reload.pipe(
          Effect.catchAll((error) =>
            Effect.as(Effect.logWarning(`config/panel.yaml: ${error.message}; keeping the previous users and servers`), before.panelState)
          )
        )
        const installedVersions = new Map(installed.map((e) => [e.extensionId, e.version]))
        yield* Ref.update(seen, (state) => ({ ...state, panelStamp: stamp, panelState, installedVersions }))
        const number = (previous?.generation.number ?? 0) + 1
        const started = yield* Clock.currentTimeMillis
        const generation = yield* buildGeneration({
          number,
          installed,
          extensionsPath: paths.extensions,
          versions: runtimeVersions(hostVersion, panelState.info),
          loader,
          moduleCache,
          unavailable: files.unavailable
        }).pipe(Effect.provide(context))
        for (const warning of generation.warnings) yield* Effect.logWarning(warning)
        for (const [id, reason] of generation.quarantined) {
          if (previous?.generation.quarantined.get(id) !== reason) yield* Effect.logWarning(`quarantined ${id}: ${reason}`)
        }
        for (const [id, reason] of generation.unavailable) {
          if (previous?.generation.unavailable.get(id) !== reason) yield* Effect.logWarning(`unavailable on this replica: ${id}: ${reason}`)
        }
        const next: LiveGeneration = {
          generation,
          bodies: clientBodies(generation, { version: hostVersion, baseUrl: yield* Ref.get(baseUrl) }),
          panel: panelState.directory,
          access: panel.access(panelState.directory),
          panelInfo: panelState.info
        }
        // Only a generation that was built counts as seen: a failed build is tried again at the next poll.
        yield* Ref.update(seen, (state) => ({ ...state, fingerprint: nextFingerprint, lastGeneration: seenGeneration }))
        yield* SubscriptionRef.set(live, next)
        yield* Effect.logInfo(
          `runtime generation ${number}: ${generation.extensions.size} extension(s) booted, ${generation.quarantined.size} quarantined, in ${(yield* Clock.currentTimeMillis) - started} ms`
        )
        yield* persistQuarantine(generation, installedVersions)
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
            () => Effect.flatMap(current, (previous) => previous === undefined ? Effect.dieMessage("no runtime generation could be built") : Effect.succeed(previous))
          )
        )
      )

    // Listeners of the current generation get framework events; every event also triggers a swap.
    const dispatch = (event: LifecycleEvent) =>
      Effect.flatMap(current, (now) => now === undefined ? Effect.void : dispatchEvent(now.generation, event))
    const scope = yield* Effect.scope
    yield* events.subscribe((event) =>
      dispatch(event).pipe(Effect.zipRight(Effect.forkIn(Effect.ignore(refresh()), scope)), Effect.asVoid)
    )

    // The poll: one row by its key, and a stat of config/panel.yaml. Only a change (or convergence left to
    // retry) rebuilds; a database that cannot be read keeps the current generation serving. A failing poll
    // warns once, and says so when the database answers again.
    const pollOnce = Effect.gen(function*() {
      const generationNow = yield* stateGeneration.current
      const stamp = yield* stampOf(panelFile)
      const state = yield* Ref.get(seen)
      return generationNow !== state.lastGeneration || stamp !== state.panelStamp || (yield* Clock.currentTimeMillis) >= state.convergeAgainAt
    })
    const poll = (failing: boolean): Effect.Effect<boolean> =>
      pollOnce.pipe(
        Effect.tap(() => failing ? Effect.logInfo("the database answers again") : Effect.void),
        Effect.flatMap((changed) => changed ? refresh() : Effect.void),
        Effect.as(false),
        Effect.catchAll((error) =>
          failing ? Effect.succeed(true) : Effect.as(Effect.logWarning(`${error.message}; serving the current generation`), true)
        )
      )
    yield* refresh(true).pipe(
      Effect.zipRight(Effect.iterate(false, { while: () => true, body: (failing) => Effect.delay(poll(failing), interval) })),
      Effect.ignore,
      Effect.forkScoped
    )

    // A real panel's server list (its application API, when a key is configured) is read again every
    // `panel.reloadEvery`: servers that appeared or vanished become ServerCreated/ServerDeleted events.
    const reloadEvery = panel.reloadEvery
    if (reloadEvery !== undefined) {
      const pollPanel = Effect.gen(function*() {
        const next = yield* panel.reload
        const previous = yield* Ref.modify(seen, (state) => [state.panelState, { ...state, panelState: next }])
        const before = previous.directory.servers.map((server) => server.uuid).join("\n")
        if (before === next.directory.servers.map((server) => server.uuid).join("\n")) return
        const updated = yield* SubscriptionRef.updateAndGet(live, (now) =>
          now === undefined ? now : { ...now, panel: next.directory, access: panel.access(next.directory), panelInfo: next.info })
        if (updated === undefined) return
        const servers = next.directory.servers.map((server) => ({ uuid: server.uuid, name: server.name }))
        const known = yield* readKnownServers
        const events = serverEvents(known ?? servers, servers)
        if (known === undefined || events.length > 0) yield* writeKnownServers(servers)
        for (const event of events) yield* dispatchHostEvent(updated.generation, event)
      }).pipe(Effect.catchAll((error) => Effect.logWarning(`the panel's server list could not be read: ${error.message}`)))
      yield* Effect.repeat(Effect.delay(pollPanel, reloadEvery), Schedule.forever).pipe(Effect.ignore, Effect.forkScoped)
    }

    // Identity-cache counters, where `host panel:status` (another process) reads them: storage/host/replica/panel.json
    // (docs/panels.md "Identity cache counters"), written when they change.
    const lastStats = yield* Ref.make("")
    const writeStats = (counters: Effect.Effect<IdentityStats>) => Effect.gen(function*() {
      const stats = yield* counters
      const report = {
        pid: process.pid,
        driver: panel.info.kind,
        identity_cache: { hits: stats.hits, misses: stats.misses, panel_requests: stats.panelRequests },
        updated_at: new Date(yield* Clock.currentTimeMillis).toISOString()
      }
      const key = `${stats.hits}|${stats.misses}|${stats.panelRequests}`
      if ((yield* Ref.getAndSet(lastStats, key)) === key) return
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

    const useListenUrl = (url: string) =>
      baseUrlConfigured === true ? Effect.void : Effect.zipRight(
        Ref.set(baseUrl, url),
        // The precomputed bodies of the generation already built carry the old URL.
        SubscriptionRef.update(live, (now) => now === undefined ? now : { ...now, bodies: clientBodies(now.generation, { version: hostVersion, baseUrl: url }) })
      )

    // Swaps only: the same generation with other panel users or a new base URL is not announced again.
    const changes = live.changes.pipe(
      Stream.filterMap(Option.fromNullable),
      Stream.changesWith((a, b) => a.generation.number === b.generation.number)
    )
    return { current, changes, refresh, baseUrl: Ref.get(baseUrl), useListenUrl } satisfies LiveRuntimeService
  })

export const layer = (options: LiveRuntimeOptions = {}) => Layer.scoped(LiveRuntime, make(options))
