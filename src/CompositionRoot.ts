import * as NodePath from "@effect/platform-node/NodePath"
import { FileSystem, type Path, Terminal } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { Cause, Context, Effect, Layer, Scope, Sink, Stream } from "effect"
import { join } from "node:path"
import { type DebugSettings, Faults, faultsFrom } from "./config/Debug.js"
import * as HostConfigModule from "./config/HostConfig.js"
import { HostConfig } from "./config/HostConfig.js"
import { InterruptedMigrations, recover } from "./lifecycle/FileSwitch.js"
import type { JournalEntry } from "./lifecycle/Journal.js"
import { refuseWhileUninstalling } from "./lifecycle/UninstallMarker.js"
import * as Database from "./store/Database.js"
import { MigrationsRepo } from "./store/MigrationsRepo.js"
import { LeaseLength } from "./store/OperationLock.js"
import * as StoreServices from "./store/Services.js"
import { StoreError } from "./store/StoreError.js"

// The one composition of Host's services, used by the CLI, the server (`host serve` builds it through
// the CLI) and the tests. See docs/architecture.md for the layers it stacks.
//
// It comes in two sizes, because a command should load only what it uses (cold start, docs/architecture.md
// "Startup"): `dataLayer` is configuration, the database and the repositories, with interrupted
// operations finished or rolled back first; `operationsLayer` adds the lifecycle operations and the
// extensions' event listeners. The modules behind the second are imported when that layer is built,
// so `host list` never evaluates the lifecycle, archive, registry or runtime code.

export interface Invocation {
  /** The framework's own checkout or package folder (holds sdk/dist). */
  readonly frameworkRoot: string
  readonly root: string
  readonly verbose: boolean
  readonly env: Readonly<Record<string, string | undefined>>
  /** `--init-database`: an existing but empty database file may be given the framework tables. */
  readonly initDatabase?: boolean
  /** HOST_DEBUG as the CLI decoded it (docs/operations.md): the faults to inject, if any. */
  readonly debug?: DebugSettings
}

const cliActor = { type: "cli" } as const

/**
 * The terminal @effect/cli asks for, made on first use. Node's terminal reads `process.stdin` when it is
 * made, and opening stdin costs every command several milliseconds of its cold start although only
 * prompts read it (docs/architecture.md, "Startup").
 */
const lazyTerminal = Effect.gen(function*() {
  const scope = yield* Effect.scope
  // Its module (and Node's readline under it) is loaded on first use too.
  const terminal = yield* Effect.cached(
    Effect.flatMap(
      Effect.promise(() => import("@effect/platform-node/NodeTerminal")),
      (NodeTerminal) => Effect.provideService(NodeTerminal.make(), Scope.Scope, scope)
    )
  )
  return Terminal.Terminal.of({
    columns: Effect.sync(() => process.stdout.columns ?? 0),
    rows: Effect.sync(() => process.stdout.rows ?? 0),
    isTTY: Effect.sync(() => Boolean(process.stdout.isTTY)),
    readInput: Effect.flatMap(terminal, (real) => real.readInput),
    readLine: Effect.flatMap(terminal, (real) => real.readLine),
    display: (text) => Effect.flatMap(terminal, (real) => real.display(text))
  })
})

/**
 * Node's file system, its module loaded on first use: it brings node:crypto with it, milliseconds that
 * `host list` and the other commands whose startup checks are synchronous never need (docs/architecture.md,
 * "Startup"). Every method hands over to the real one.
 */
const lazyFileSystem = Effect.gen(function*() {
  const real = yield* Effect.cached(
    Effect.flatMap(
      Effect.promise(() => import("@effect/platform-node/NodeFileSystem")),
      (NodeFileSystem) => Effect.provide(FileSystem.FileSystem, NodeFileSystem.layer)
    )
  )
  const on = <A, E, R>(use: (fs: FileSystem.FileSystem) => Effect.Effect<A, E, R>) => Effect.flatMap(real, use)
  return FileSystem.FileSystem.of({
    access: (path, options) => on((fs) => fs.access(path, options)),
    copy: (from, to, options) => on((fs) => fs.copy(from, to, options)),
    copyFile: (from, to) => on((fs) => fs.copyFile(from, to)),
    chmod: (path, mode) => on((fs) => fs.chmod(path, mode)),
    chown: (path, uid, gid) => on((fs) => fs.chown(path, uid, gid)),
    exists: (path) => on((fs) => fs.exists(path)),
    link: (from, to) => on((fs) => fs.link(from, to)),
    makeDirectory: (path, options) => on((fs) => fs.makeDirectory(path, options)),
    makeTempDirectory: (options) => on((fs) => fs.makeTempDirectory(options)),
    makeTempDirectoryScoped: (options) => on((fs) => fs.makeTempDirectoryScoped(options)),
    makeTempFile: (options) => on((fs) => fs.makeTempFile(options)),
    makeTempFileScoped: (options) => on((fs) => fs.makeTempFileScoped(options)),
    open: (path, options) => on((fs) => fs.open(path, options)),
    readDirectory: (path, options) => on((fs) => fs.readDirectory(path, options)),
    readFile: (path) => on((fs) => fs.readFile(path)),
    readFileString: (path, encoding) => on((fs) => fs.readFileString(path, encoding)),
    readLink: (path) => on((fs) => fs.readLink(path)),
    realPath: (path) => on((fs) => fs.realPath(path)),
    remove: (path, options) => on((fs) => fs.remove(path, options)),
    rename: (from, to) => on((fs) => fs.rename(from, to)),
    sink: (path, options) => Sink.unwrap(Effect.map(real, (fs) => fs.sink(path, options))),
    stat: (path) => on((fs) => fs.stat(path)),
    stream: (path, options) => Stream.unwrap(Effect.map(real, (fs) => fs.stream(path, options))),
    symlink: (from, to) => on((fs) => fs.symlink(from, to)),
    truncate: (path, length) => on((fs) => fs.truncate(path, length)),
    utimes: (path, atime, mtime) => on((fs) => fs.utimes(path, atime, mtime)),
    watch: (path, options) => Stream.unwrap(Effect.map(real, (fs) => fs.watch(path, options))),
    writeFile: (path, data, options) => on((fs) => fs.writeFile(path, data, options)),
    writeFileString: (path, data, options) => on((fs) => fs.writeFileString(path, data, options))
  })
})

/**
 * The Node services Host uses: files, paths and the terminal (@effect/cli prompts). Narrower than
 * NodeContext, which also starts a worker manager and a command executor nothing here needs.
 */
export const platformLayer = Layer.merge(
  NodePath.layer,
  // The two lazy services in one layer: each layer is a memoised build of its own (docs/decisions.md "P1: the stack's floor").
  Layer.scopedContext(
    Effect.zipWith(lazyFileSystem, lazyTerminal, (fs, terminal) => Context.make(FileSystem.FileSystem, fs).pipe(Context.add(Terminal.Terminal, terminal)))
  )
)

/** The configuration of this root, its warnings logged (config/host.yaml, the environment, the defaults). */
const loadConfig = (invocation: Invocation) =>
  HostConfigModule.loadHostConfig(invocation).pipe(
    Effect.tap(({ warnings }) =>
      Effect.forEach(warnings, (warning) => Effect.logWarning(`config/host.yaml: ${warning.path}: ${warning.message}`))
    )
  )

/**
 * The configuration alone. Like every layer here it stands on the platform (files, paths), which the CLI
 * builds once for the whole run (`platformLayer`, provided by cli/main.ts) rather than once per layer.
 */
export const configLayer = (invocation: Invocation) => Layer.effect(HostConfig, loadConfig(invocation))

/** The six repositories, made in one layer build (store/Services.ts). */
export const repositoriesLayer = StoreServices.repositoriesLayer

export interface DataOptions {
  /** Finish or roll back interrupted operations while building the layer (default true). */
  readonly recover?: boolean
  /** Remove leftover uploads and staging entries while recovering (default true; `status` reports them instead). */
  readonly sweepLeftovers?: boolean
  /** `framework:uninstall` itself runs while an interrupted uninstall is pending (it finishes it). */
  readonly uninstalling?: boolean
}

/**
 * The module loader over this root's compiled-module cache (HostConfig's `paths.modules`). Its module is
 * imported when the layer is built, so a command that never loads extension code never reads it.
 */
export const moduleLoaderLayer = (invocation: Invocation) =>
  Layer.unwrapEffect(
    Effect.map(
      Effect.zip(Effect.promise(() => import("./kernel/ModuleLoader.js")), HostConfig),
      ([ModuleLoader, { paths }]) =>
        ModuleLoader.layer({ sdkDirectory: join(invocation.frameworkRoot, "sdk", "dist"), cacheDirectory: paths.modules })
    )
  )

/**
 * Undoing an interrupted operation's migrations (MySQL/MariaDB) needs the migration runner and the module
 * loader: loaded only when a journal entry asks for it, so recovery stays light otherwise.
 */
const interruptedMigrations = (invocation: Invocation) =>
  Effect.map(Effect.context<FileSystem.FileSystem | Path.Path | HostConfig | SqlClient.SqlClient | MigrationsRepo>(), (context) => ({
    undo: (entry: JournalEntry) =>
      Effect.promise(() => import("./lifecycle/MigrationUndo.js")).pipe(
        Effect.flatMap(({ undoStartedMigrations }) => Effect.provide(undoStartedMigrations(entry, { strict: true }), moduleLoaderLayer(invocation))),
        Effect.provide(context),
        // Not a warning: recovery stops and says so (DESIGN.md §23); the entry stays for the next attempt.
        Effect.catchAllCause((cause) =>
          Effect.fail(
            new StoreError({
              operation: `undoing the migrations of an interrupted ${entry.operation} of ${entry.extensionId}`,
              cause: Cause.squash(cause),
              outcome: "recovery stopped and that migration's changes stay in the database: undo them by hand and delete its row from host_migrations, then run any host command to finish recovery"
            })
          ))
      )
  }))

/**
 * What the database stands on, made in one step: the configuration, the operation lock's lease, the faults
 * HOST_DEBUG asks for and whether an empty database may be given the tables; then (unless
 * `framework:uninstall` itself runs) the check that no uninstall is pending, before the database is opened,
 * so a half-removed framework is not given its tables back.
 */
const foundation = (invocation: Invocation, options: DataOptions) =>
  Effect.gen(function*() {
    const hostConfig = yield* loadConfig(invocation)
    const context = Context.make(HostConfig, hostConfig).pipe(
      Context.add(LeaseLength, { millis: hostConfig.config.lock_lease_seconds * 1000 }),
      Context.add(Faults, faultsFrom(invocation.debug ?? {})),
      Context.add(Database.DatabaseInitialisation, { allowEmpty: invocation.initDatabase === true })
    )
    if (options.uninstalling !== true) yield* Effect.provide(refuseWhileUninstalling, context)
    return context
  })

/**
 * Configuration, database (schema ensured), repositories, the operation lock and the faults HOST_DEBUG asks
 * for, with interrupted operations finished or rolled back first. It stands on the platform layer (files,
 * paths), which the caller provides once for the whole run.
 *
 * One layer build, each step handing its services to the next in the layer's scope (where the database
 * client is closed): every layer is a memoised build of its own, the short commands' largest cost after
 * loading the bundle (docs/decisions.md "P1: the stack's floor").
 */
export const dataLayer = (invocation: Invocation, options: DataOptions = {}) =>
  Layer.scopedContext(Effect.gen(function*() {
    const base = yield* foundation(invocation, options)
    const withDatabase = Context.merge(base, yield* Effect.provide(Database.open, base))
    const context = Context.merge(withDatabase, yield* Effect.provide(StoreServices.makeStoreServices, withDatabase))
    if (options.recover !== false) {
      const undo = yield* Effect.provide(interruptedMigrations(invocation), context)
      yield* Effect.provide(
        Effect.provideService(recover(cliActor, { sweepLeftovers: options.sweepLeftovers !== false }), InterruptedMigrations, undo),
        context
      )
    }
    return context
  }))

const lifecycleModules = Effect.promise(() =>
  Promise.all([
    import("./lifecycle/Lifecycle.js"),
    import("./kernel/Events.js"),
    import("./panel/RealPanel.js"),
    import("./archive/ArtifactStore.js")
  ])
)

const listenerModule = Effect.promise(() => import("./runtime/Backend.js"))

/**
 * The Registry over Node's HTTP client, with timeouts from HOST_REGISTRY_CONNECT_TIMEOUT and
 * HOST_REGISTRY_TIMEOUT. It is part of every layer the lifecycle runs on, so code that installs from a
 * registry requires the service (a missing layer is a compile error); with no `registry_url` configured
 * each lookup fails with RegistryNotConfigured. Needs HostConfig and the platform.
 */
export const registryLayer = (invocation: Invocation) =>
  Layer.unwrapEffect(
    Effect.map(Effect.promise(() => import("./registry/Registry.js")), ({ layerNode, optionsFromEnv }) => {
      const { options, warnings } = optionsFromEnv(invocation.env)
      return Layer.merge(
        layerNode(options),
        Layer.effectDiscard(Effect.forEach(warnings, (warning) => Effect.logWarning(warning), { discard: true }))
      )
    })
  )

export interface OperationsOptions extends DataOptions {
  /** Attach the enabled extensions' event listeners in this process (default true; a server attaches its own). */
  readonly listeners?: boolean
}

/**
 * `dataLayer` plus the lifecycle operations, the artifact store they keep archives in and the registry,
 * with the extensions' event listeners attached. Building it first finishes or rolls back any operation a
 * crash interrupted.
 */
export const operationsLayer = (invocation: Invocation, options: OperationsOptions = {}) => {
  const lifecycle = Layer.unwrapEffect(
    Effect.map(lifecycleModules, ([{ Lifecycle }, Events, PanelDrivers, ArtifactStore]) =>
      Lifecycle.Default.pipe(
        Layer.provideMerge(
          Layer.mergeAll(Events.layer, PanelDrivers.layerFromConfig, moduleLoaderLayer(invocation), ArtifactStore.layer, registryLayer(invocation))
        )
      ))
  )
  // A server attaches listeners to its live generation instead (runtime/LiveState).
  const listeners = Layer.effectDiscard(
    options.listeners !== false ? Effect.flatMap(listenerModule, (backend) => backend.listenInThisProcess) : Effect.void
  )
  return listeners.pipe(
    Layer.provideMerge(lifecycle),
    Layer.provideMerge(dataLayer(invocation, options))
  )
}
