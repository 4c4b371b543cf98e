import { FileSystem, Path } from "@effect/platform"
import { Clock, Context, DateTime, Duration, Effect, Layer, Option, Ref, Schedule, Stream, SubscriptionRef } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import type { LifecycleEvent } from "../domain/Events.js"
import type { InstalledExtension } from "../domain/Installed.js"
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
   * The same, read synchronously, for code outside any fiber (the fast lane, http/FastLane.ts): running
   * `current` there would start a fiber per request, most of the lane's own work.
   */
  readonly currentNow: () => LiveGeneration | undefined
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
  readonly panelState: PanelState
  readonly installedVersions: ReadonlyMap<string, string>
  /** The state generation the current runtime was built from. */
  readonly lastGeneration: number
  /** What the last convergence left to do: try again at the next poll (deferred) or after a while (unavailable). */
  readonly convergeAgainAt: number
}

interface PanelState {
  readonly info: PanelInfo
  readonly directory: PanelDirectory
}

/** Everything the pieces below share: the services, and the live runtime's own state. */
interface Live {
  readonly fs: FileSystem.FileSystem
  readonly path: Path.Path
  readonly paths: HostConfig["Type"]["paths"]
  readonly hostVersion: string
  readonly panel: Panel["Type"]
  readonly context: Context.Context<FileSystem.FileSystem | Path.Path | HostConfig | CoreRows>
  readonly panelFile: string
  /**
   * The current generation (undefined before the first boot finished), written only by `swapServing`,
   * which also keeps `servingNow` (the synchronous read of it) the same.
   */
  readonly serving: SubscriptionRef.SubscriptionRef<LiveGeneration | undefined>
  readonly servingNow: { value: LiveGeneration | undefined }
  readonly seen: Ref.Ref<Seen>
  readonly baseUrl: Ref.Ref<string>
}

/** Makes `update`'s answer the current generation: the one way `serving` (and `servingNow` with it) is written. */
const swapServing = (live: Live, update: (now: LiveGeneration | undefined) => LiveGeneration | undefined) =>
  Effect.tap(SubscriptionRef.updateAndGet(live.serving, update), (next) =>
    Effect.sync(() => {
      live.servingNow.value = next
    }))

/** `mtime:size` of a file, or `absent`: what the poll compares to notice an edited panel.yaml. */
const stampOf = (live: Live, file: string) =>
  live.fs.stat(file).pipe(
    Effect.map((info) => `${Option.getOrElse(Option.map(info.mtime, (date) => date.getTime()), () => 0)}:${info.size}`),
    Effect.orElseSucceed(() => "absent")
  )

/** What this replica serves and lacks, for `host status` on this root: written when it changes. */
const makeReplicaReporter = (live: Live) =>
  Effect.map(Ref.make(""), (reported) => (generation: Generation, stateGenerationSeen: number) =>
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
    }).pipe(Effect.provide(live.context)))

/**
 * Servers that appeared in or vanished from the panel since it was last read — by this server or, at
 * start, by an earlier one (the list is kept in a host/core settings row) — become ServerCreated and
 * ServerDeleted events for the generation's listeners.
 */
const announceServers = (live: Live, generation: Generation, directory: PanelDirectory) =>
  Effect.gen(function*() {
    const rows = yield* CoreRows
    const servers = directory.servers.map((server) => ({ uuid: server.uuid, name: server.name }))
    const known = yield* rows.get(CoreKeys.panelServers).pipe(Effect.map(Option.getOrUndefined), Effect.orElseSucceed(() => undefined))
    const events = serverEvents(known ?? servers, servers)
    if (known === undefined || events.length > 0) {
      yield* rows.put(CoreKeys.panelServers, servers).pipe(
        Effect.catchAll((error) => Effect.logWarning(`could not record the panel's servers: ${error.message}`))
      )
    }
    for (const event of events) yield* dispatchHostEvent(generation, event)
  }).pipe(Effect.provide(live.context))

/**
 * Brings this root's files to the records (docs/operations.md "Running replicas") and says when to try
 * again. Deferred (an operation on this host is switching files): what was unavailable stays so until
 * checked again. Modules of a tree replaced under the same record are dropped from the cache.
 */
const convergeFiles = (
  live: Live,
  replicaFiles: ReplicaFiles["Type"],
  installed: ReadonlyArray<InstalledExtension>,
  retryInterval: Duration.Duration,
  moduleCache: Map<string, LoadedModule>
) =>
  Effect.gen(function*() {
    const converged = yield* replicaFiles.converge(installed)
    const previous = yield* SubscriptionRef.get(live.serving)
    const files = converged.deferred
      ? { ...converged, unavailable: new Map([...(previous?.generation.unavailable ?? [])].filter(([id]) => installed.some((e) => e.extensionId === id && e.enabled))) }
      : converged
    const now = yield* Clock.currentTimeMillis
    const convergeAgainAt = files.deferred ? now : files.unavailable.size > 0 ? now + Duration.toMillis(retryInterval) : Number.POSITIVE_INFINITY
    yield* Ref.update(live.seen, (state) => ({ ...state, convergeAgainAt }))
    for (const id of files.changed) {
      const directory = live.path.join(live.paths.extensions, ...id.split("/")) + live.path.sep
      for (const key of moduleCache.keys()) if (key.startsWith(directory)) moduleCache.delete(key)
    }
    return { files, previous }
  })

/** What a generation is built from: the panel file's stamp, the records, and what is unavailable here. */
const fingerprintOf = (stamp: string, installed: ReadonlyArray<InstalledExtension>, unavailable: ReadonlyMap<string, string>) =>
  `${stamp}\n${installed.map((e) => `${e.extensionId}|${e.version}|${e.enabled}|${e.updatedAt}`).join("\n")}\n${
    [...unavailable].map(([id, reason]) => `${id}|${reason}`).join("\n")
  }`

/** Logs what a new generation quarantined or cannot serve here, once per reason. */
const logNewProblems = (generation: Generation, previous: Generation | undefined) =>
  Effect.gen(function*() {
    for (const warning of generation.warnings) yield* Effect.logWarning(warning)
    for (const [id, reason] of generation.quarantined) {
      if (previous?.quarantined.get(id) !== reason) yield* Effect.logWarning(`quarantined ${id}: ${reason}`)
    }
    for (const [id, reason] of generation.unavailable) {
      if (previous?.unavailable.get(id) !== reason) yield* Effect.logWarning(`unavailable on this replica: ${id}: ${reason}`)
    }
  })

/**
 * The rebuild: reads the records, converges the files, and — when anything a generation is built from
 * changed (or with `force`) — builds the next generation and makes it current. Run under one semaphore.
 */
const makeRebuild = (live: Live, retryInterval: Duration.Duration) =>
  Effect.gen(function*() {
    const extensionsRepo = yield* ExtensionsRepo
    const stateGeneration = yield* StateGeneration
    const replicaFiles = yield* ReplicaFiles
    const loader = yield* ModuleLoader
    const report = yield* makeReplicaReporter(live)
    const moduleCache = new Map<string, LoadedModule>()

    /** The panel's users and servers: read again only when config/panel.yaml changed. */
    const panelStateFor = (stamp: string, before: Seen) =>
      stamp === before.panelStamp ? Effect.succeed(before.panelState) : live.panel.reload.pipe(
        Effect.catchAll((error) =>
          Effect.as(Effect.logWarning(`config/panel.yaml: ${error.message}; keeping the previous users and servers`), before.panelState)
        )
      )

    return (force: boolean) =>
      Effect.gen(function*() {
        // Read before the records, so a generation raised meanwhile is seen again at the next poll.
        const seenGeneration = yield* stateGeneration.current
        const installed = yield* extensionsRepo.list
        const stamp = yield* stampOf(live, live.panelFile)
        const { files, previous } = yield* convergeFiles(live, replicaFiles, installed, retryInterval, moduleCache)
        const nextFingerprint = fingerprintOf(stamp, installed, files.unavailable)
        const before = yield* Ref.get(live.seen)
        if (!force && previous !== undefined && nextFingerprint === before.fingerprint && files.changed.length === 0) {
          yield* Ref.update(live.seen, (state) => ({ ...state, lastGeneration: seenGeneration }))
          yield* report(previous.generation, seenGeneration)
          return previous
        }
        const panelState = yield* panelStateFor(stamp, before)
        const installedVersions = new Map(installed.map((e) => [e.extensionId, e.version]))
        yield* Ref.update(live.seen, (state) => ({ ...state, panelStamp: stamp, panelState, installedVersions }))
        const number = (previous?.generation.number ?? 0) + 1
        const started = yield* Clock.currentTimeMillis
        const generation = yield* buildGeneration({
          number,
          installed,
          extensionsPath: live.paths.extensions,
          versions: runtimeVersions(live.hostVersion, panelState.info),
          loader,
          moduleCache,
          unavailable: files.unavailable
        }).pipe(Effect.provide(live.context))
        yield* logNewProblems(generation, previous?.generation)
        const next: LiveGeneration = {
          generation,
          bodies: clientBodies(generation, { version: live.hostVersion, baseUrl: yield* Ref.get(live.baseUrl) }),
          panel: panelState.directory,
          access: live.panel.access(panelState.directory),
          panelInfo: panelState.info
        }
        // Only a generation that was built counts as seen: a failed build is tried again at the next poll.
        yield* Ref.update(live.seen, (state) => ({ ...state, fingerprint: nextFingerprint, lastGeneration: seenGeneration }))
        yield* swapServing(live, () => next)
        yield* Effect.logInfo(
          `runtime generation ${number}: ${generation.extensions.size} extension(s) booted, ${generation.quarantined.size} quarantined, in ${(yield* Clock.currentTimeMillis) - started} ms`
        )
        yield* recordQuarantine(generation, installedVersions).pipe(Effect.provide(live.context))
        yield* report(generation, seenGeneration)
        yield* announceServers(live, generation, panelState.directory)
        return next
      })
  })

/**
 * The poll of changes made by other processes (runs until interrupted): one row by its key, and a stat of config/panel.yaml. Only
 * a change (or convergence left to retry) rebuilds; a database that cannot be read keeps the current
 * generation serving. A failing poll warns once, and says so when the database answers again.
 */
const pollStateGeneration = (live: Live, refresh: () => Effect.Effect<LiveGeneration>, interval: Duration.Duration) =>
  Effect.gen(function*() {
    const stateGeneration = yield* StateGeneration
    const changed = Effect.gen(function*() {
      const generationNow = yield* stateGeneration.current
      const stamp = yield* stampOf(live, live.panelFile)
      const state = yield* Ref.get(live.seen)
      return generationNow !== state.lastGeneration || stamp !== state.panelStamp || (yield* Clock.currentTimeMillis) >= state.convergeAgainAt
    })
    const poll = (failing: boolean): Effect.Effect<boolean> =>
      changed.pipe(
        Effect.tap(() => failing ? Effect.logInfo("the database answers again") : Effect.void),
        // refresh logged a failed build; with no generation yet it dies, and the poll must outlive that.
        Effect.flatMap((changed) => changed ? Effect.catchAllDefect(refresh(), () => Effect.void) : Effect.void),
        Effect.as(false),
        Effect.catchAll((error) =>
          failing ? Effect.succeed(true) : Effect.as(Effect.logWarning(`${error.message}; serving the current generation`), true)
        )
      )
    return yield* Effect.iterate(false, { while: () => true, body: (failing) => Effect.delay(poll(failing), interval) })
  })

/**
 * A real panel's server list (its application API, when a key is configured), read again every
 * `panel.reloadEvery`: servers that appeared or vanished become ServerCreated/ServerDeleted events.
 */
const followPanelServers = (live: Live, lock: Effect.Semaphore, every: Duration.DurationInput) => {
  // The read happens outside the semaphore (a slow panel must not hold rebuilds up); what it changes in
  // the shared state is written under it, as a rebuild writes it.
  const pollPanel = Effect.flatMap(live.panel.reload, (next) => lock.withPermits(1)(Effect.gen(function*() {
    const previous = yield* Ref.modify(live.seen, (state) => [state.panelState, { ...state, panelState: next }])
    const before = previous.directory.servers.map((server) => server.uuid).join("\n")
    if (before === next.directory.servers.map((server) => server.uuid).join("\n")) return
    const updated = yield* swapServing(live, (now) =>
      now === undefined ? now : { ...now, panel: next.directory, access: live.panel.access(next.directory), panelInfo: next.info })
    if (updated === undefined) return
    yield* announceServers(live, updated.generation, next.directory)
  }))).pipe(Effect.catchAll((error) => Effect.logWarning(`the panel's server list could not be read: ${error.message}`)))
  return Effect.repeat(Effect.delay(pollPanel, every), Schedule.forever)
}

/**
 * Identity-cache counters, where `host panel:status` (another process) reads them:
 * storage/host/replica/panel.json (docs/panels.md "Identity cache counters"), written when they change.
 */
const writeIdentityStats = (live: Live, counters: Effect.Effect<IdentityStats>) =>
  Effect.gen(function*() {
    const lastStats = yield* Ref.make("")
    const write = Effect.gen(function*() {
      const stats = yield* counters
      const report = {
        pid: process.pid,
        driver: live.panel.info.kind,
        identity_cache: { hits: stats.hits, misses: stats.misses, panel_requests: stats.panelRequests },
        updated_at: new Date(yield* Clock.currentTimeMillis).toISOString()
      }
      const key = `${stats.hits}|${stats.misses}|${stats.panelRequests}`
      if ((yield* Ref.getAndSet(lastStats, key)) === key) return
      yield* writePanelStats(report)
    }).pipe(Effect.provide(live.context), Effect.catchAll((error) => Effect.logWarning(`panel.json: ${error.message}`)))
    return yield* Effect.repeat(Effect.delay(write, Duration.seconds(1)), Schedule.forever)
  })

const make = (options: LiveRuntimeOptions) =>
  Effect.gen(function*() {
    const { baseUrlConfigured, config, paths } = yield* HostConfig
    const panel = yield* Panel
    const events = yield* LifecycleEvents
    const path = yield* Path.Path
    const live: Live = {
      fs: yield* FileSystem.FileSystem,
      path,
      paths,
      hostVersion: config.version,
      panel,
      context: yield* Effect.context<FileSystem.FileSystem | Path.Path | HostConfig | CoreRows>(),
      panelFile: path.join(paths.root, "config", "panel.yaml"),
      serving: yield* SubscriptionRef.make<LiveGeneration | undefined>(undefined),
      servingNow: { value: undefined },
      seen: yield* Ref.make<Seen>({
        fingerprint: "",
        panelStamp: "",
        panelState: { info: panel.info, directory: panel.directory },
        installedVersions: new Map(),
        lastGeneration: -1,
        convergeAgainAt: 0
      }),
      baseUrl: yield* Ref.make(config.base_url)
    }
    const currentNow = () => live.servingNow.value
    const current = Effect.sync(currentNow)
    const lock = yield* Effect.makeSemaphore(1)
    const rebuild = yield* makeRebuild(live, Duration.decode(options.retryInterval ?? Duration.seconds(10)))

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

    const poll = pollStateGeneration(live, refresh, Duration.decode(options.pollInterval ?? Duration.millis(500)))
    // Supervised (DESIGN.md §23): a first build that fails (refresh logs why) is tried again on a schedule,
    // backing off to every 30 s, until one is built; the poll runs from the start regardless, so a first
    // failure never leaves /host/ready at 503 for good.
    yield* refresh(true).pipe(
      Effect.catchAllDefect(Effect.fail),
      Effect.retry(Schedule.exponential(Duration.millis(500)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(30))))),
      Effect.ignore,
      Effect.forkScoped
    )
    yield* Effect.forkScoped(poll)
    if (panel.reloadEvery !== undefined) yield* followPanelServers(live, lock, panel.reloadEvery).pipe(Effect.ignore, Effect.forkScoped)
    if (panel.stats !== undefined) yield* writeIdentityStats(live, panel.stats).pipe(Effect.ignore, Effect.forkScoped)
    // `host dev --watch` signals a saved change through storage/host/dev-signal: re-read now, not at the next poll.
    yield* devSignals(paths.storage).pipe(Stream.runForEach(() => Effect.catchAllDefect(refresh(), () => Effect.void)), Effect.forkScoped)

    // Under the rebuild's semaphore, like every other write of the shared state: a rebuild running
    // meanwhile would otherwise set bodies built with the old URL after this one.
    const useListenUrl = (url: string) =>
      baseUrlConfigured === true ? Effect.void : lock.withPermits(1)(Effect.zipRight(
        Ref.set(live.baseUrl, url),
        // The precomputed bodies of the generation already built carry the old URL.
        swapServing(live, (now) => now === undefined ? now : { ...now, bodies: clientBodies(now.generation, { version: live.hostVersion, baseUrl: url }) })
      ))

    // Swaps only: the same generation with other panel users or a new base URL is not announced again.
    const changes = live.serving.changes.pipe(
      Stream.filterMap(Option.fromNullable),
      Stream.changesWith((a, b) => a.generation.number === b.generation.number)
    )
    return { current, currentNow, changes, refresh, baseUrl: Ref.get(live.baseUrl), useListenUrl } satisfies LiveRuntimeService
  })

export const layer = (options: LiveRuntimeOptions = {}) => Layer.scoped(LiveRuntime, make(options))
