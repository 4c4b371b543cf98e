import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import type { FileSystem, Path } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { join } from "node:path"
import * as HostConfigModule from "./config/HostConfig.js"
import { HostConfig } from "./config/HostConfig.js"
import { InterruptedMigrations, recover } from "./lifecycle/FileSwitch.js"
import type { JournalEntry } from "./lifecycle/Journal.js"
import { refuseWhileUninstalling } from "./lifecycle/UninstallMarker.js"
import { ActivityRepo } from "./store/ActivityRepo.js"
import * as Database from "./store/Database.js"
import { ExtensionsRepo } from "./store/ExtensionsRepo.js"
import { MigrationsRepo } from "./store/MigrationsRepo.js"
import { OperationLocks } from "./store/OperationLock.js"
import { SettingsRepo } from "./store/SettingsRepo.js"

// The one composition of Host's services, used by the CLI, the server (`host serve` builds it through
// the CLI) and the tests. See docs/architecture.md for the layers it stacks.
//
// It comes in two sizes, because a command should load only what it uses (cold start, docs/architecture.md
// "Startup"): `dataLayer` is configuration, the database and the repositories, with interrupted
// operations finished or rolled back first; `storeLayer` adds the lifecycle operations and the
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
}

const cliActor = { type: "cli" } as const

/**
 * The Node services Host uses: files, paths and the terminal (@effect/cli prompts). Narrower than
 * NodeContext, which also starts a worker manager and a command executor nothing here needs.
 */
export const platformLayer = Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer)

export const configLayer = (invocation: Invocation) =>
  Layer.effect(
    HostConfig,
    HostConfigModule.loadHostConfig(invocation).pipe(
      Effect.tap(({ warnings }) =>
        Effect.forEach(warnings, (warning) => Effect.logWarning(`config/host.yaml: ${warning.path}: ${warning.message}`))
      )
    )
  ).pipe(Layer.provide(platformLayer))

export const repositoriesLayer = Layer.mergeAll(
  ExtensionsRepo.Default,
  MigrationsRepo.Default,
  SettingsRepo.Default,
  ActivityRepo.Default
)

export interface DataOptions {
  /** Finish or roll back interrupted operations while building the layer (default true). */
  readonly recover?: boolean
  /** `framework:uninstall` itself runs while an interrupted uninstall is pending (it finishes it). */
  readonly uninstalling?: boolean
}

/**
 * Undoing an interrupted operation's migrations (MySQL/MariaDB) needs the migration runner and the module
 * loader: loaded only when a journal entry asks for it, so recovery stays light otherwise.
 */
const interruptedMigrationsLayer = (invocation: Invocation) =>
  Layer.effect(
    InterruptedMigrations,
    Effect.map(Effect.context<FileSystem.FileSystem | Path.Path | HostConfig | SqlClient.SqlClient | MigrationsRepo>(), (context) => ({
      undo: (entry: JournalEntry) =>
        Effect.promise(() => Promise.all([import("./lifecycle/MigrationUndo.js"), import("./lifecycle/ModuleLoader.js")])).pipe(
          Effect.flatMap(([{ undoStartedMigrations }, ModuleLoader]) =>
            Effect.flatMap(HostConfig, ({ paths }) =>
              undoStartedMigrations(entry).pipe(
                Effect.provide(ModuleLoader.layer({ sdkDirectory: join(invocation.frameworkRoot, "sdk", "dist"), cacheDirectory: paths.modules }))
              ))
          ),
          Effect.provide(context),
          Effect.catchAllCause((cause) => Effect.logWarning(`undoing the migrations of ${entry.extensionId} failed: ${String(cause)}`))
        )
    }))
  )

/** Configuration, database (schema ensured), repositories and the operation lock. */
export const dataLayer = (invocation: Invocation, options: DataOptions = {}) => {
  const recovery = Layer.effectDiscard(options.recover !== false ? recover(cliActor) : Effect.void).pipe(
    Layer.provide(interruptedMigrationsLayer(invocation))
  )
  // Checked before the database is opened, so a half-removed framework is not given its tables back.
  const database = (options.uninstalling === true
    ? Database.layer
    : Layer.provide(Database.layer, Layer.effectDiscard(refuseWhileUninstalling))).pipe(
      Layer.provide(Layer.succeed(Database.DatabaseInitialisation, { allowEmpty: invocation.initDatabase === true }))
    )
  return recovery.pipe(
    Layer.provideMerge(OperationLocks.Default),
    Layer.provideMerge(repositoriesLayer),
    Layer.provideMerge(database),
    Layer.provideMerge(configLayer(invocation)),
    Layer.provideMerge(platformLayer)
  )
}

const lifecycleModules = Effect.promise(() =>
  Promise.all([
    import("./lifecycle/Lifecycle.js"),
    import("./lifecycle/Events.js"),
    import("./lifecycle/ModuleLoader.js"),
    import("./panel/Panel.js")
  ])
)

const listenerModule = Effect.promise(() => import("./runtime/Backend.js"))

export interface StoreOptions extends DataOptions {
  /** Attach the enabled extensions' event listeners in this process (default true; a server attaches its own). */
  readonly listeners?: boolean
}

/**
 * `dataLayer` plus the lifecycle operations, with the extensions' event listeners attached. Building it
 * first finishes or rolls back any operation a crash interrupted.
 */
export const storeLayer = (invocation: Invocation, options: StoreOptions = {}) => {
  const lifecycle = Layer.unwrapEffect(
    Effect.map(lifecycleModules, ([{ Lifecycle }, Events, ModuleLoader, Panel]) => {
      const loader = Layer.unwrapEffect(
        Effect.map(HostConfig, ({ paths }) =>
          ModuleLoader.layer({ sdkDirectory: join(invocation.frameworkRoot, "sdk", "dist"), cacheDirectory: paths.modules }))
      )
      return Lifecycle.Default.pipe(Layer.provideMerge(Layer.mergeAll(Events.layer, Panel.layerEmbedded, loader)))
    })
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
