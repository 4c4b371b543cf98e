import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Layer, Logger } from "effect"
import * as HostConfigModule from "../config/HostConfig.js"
import { HostConfig } from "../config/HostConfig.js"
import * as Database from "../store/Database.js"
import { ActivityRepo } from "../store/ActivityRepo.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { MigrationsRepo } from "../store/MigrationsRepo.js"
import { SettingsRepo } from "../store/SettingsRepo.js"
import { OperationLocks } from "../store/OperationLock.js"
import * as Events from "../lifecycle/Events.js"
import { Progress } from "../lifecycle/Events.js"
import { Lifecycle } from "../lifecycle/Lifecycle.js"
import { listenInThisProcess } from "../runtime/Backend.js"
import * as ModuleLoader from "../lifecycle/ModuleLoader.js"
import * as Panel from "../panel/Panel.js"
import { refuseWhileUninstalling } from "../lifecycle/Uninstall.js"
import { join } from "node:path"

// The layers commands run on. A command provides only what it uses, so `validate` never opens the database.

export interface Invocation {
  /** The framework's own checkout or package folder (holds sdk/dist). */
  readonly frameworkRoot: string
  readonly root: string
  readonly verbose: boolean
  readonly env: Readonly<Record<string, string | undefined>>
  /** `--init-database`: an existing but empty database file may be given the framework tables. */
  readonly initDatabase?: boolean
}

/** Logs go to stderr as `warning: …` lines, so stdout stays the command's output (and pure JSON). */
export const stderrLogger = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ logLevel, message }) => {
    const text = (Array.isArray(message) ? message : [message]).map(String).join(" ")
    process.stderr.write(`${logLevel._tag.toLowerCase()}: ${text}\n`)
  })
)

export const configLayer = (invocation: Invocation) =>
  Layer.effect(
    HostConfig,
    HostConfigModule.loadHostConfig(invocation).pipe(
      Effect.tap(({ warnings }) =>
        Effect.forEach(warnings, (warning) => Effect.logWarning(`config/host.yaml: ${warning.path}: ${warning.message}`))
      )
    )
  ).pipe(Layer.provide(NodeContext.layer))

export const repositoriesLayer = Layer.mergeAll(
  ExtensionsRepo.Default,
  MigrationsRepo.Default,
  SettingsRepo.Default,
  ActivityRepo.Default
)

const cliActor = { type: "cli" } as const

/** Prints each step of a long operation on stderr, so stdout stays the result. */
export const progressLayer = Layer.succeed(Progress, {
  step: (message: string) => Effect.sync(() => process.stderr.write(`  - ${message}\n`))
})

/**
 * Configuration, database (schema ensured), the repositories and the lifecycle operations, with the
 * extensions' event listeners attached. Building it first finishes or rolls back any operation a crash
 * interrupted.
 */
export const storeLayer = (
  invocation: Invocation,
  options: {
    readonly recover?: boolean
    readonly listeners?: boolean
    /** `framework:uninstall` itself runs while an interrupted uninstall is pending (it finishes it). */
    readonly uninstalling?: boolean
  } = {}
) => {
  const loader = Layer.unwrapEffect(
    Effect.map(HostConfig, ({ paths }) =>
      ModuleLoader.layer({ sdkDirectory: join(invocation.frameworkRoot, "sdk", "dist"), cacheDirectory: paths.modules }))
  )
  const lifecycle = Lifecycle.Default.pipe(
    Layer.provideMerge(Layer.mergeAll(OperationLocks.Default, Events.layer, Panel.layerEmbedded, loader))
  )
  const recovery = Layer.effectDiscard(
    options.recover !== false ? Effect.flatMap(Lifecycle, (operations) => operations.recover(cliActor)) : Effect.void
  )
  // A server attaches listeners to its live generation instead (runtime/LiveState).
  const listeners = Layer.effectDiscard(options.listeners !== false ? listenInThisProcess : Effect.void)
  // Checked before the database is opened, so a half-removed framework is not given its tables back.
  const database = (options.uninstalling === true
    ? Database.layer
    : Layer.provide(Database.layer, Layer.effectDiscard(refuseWhileUninstalling))).pipe(
      Layer.provide(Layer.succeed(Database.DatabaseInitialisation, { allowEmpty: invocation.initDatabase === true }))
    )
  return Layer.merge(recovery, listeners).pipe(
    Layer.provideMerge(lifecycle),
    Layer.provideMerge(repositoriesLayer),
    Layer.provideMerge(database),
    Layer.provideMerge(configLayer(invocation)),
    Layer.provideMerge(NodeContext.layer)
  )
}
