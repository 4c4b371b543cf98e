import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Layer, Logger } from "effect"
import * as HostConfigModule from "../config/HostConfig.js"
import { HostConfig } from "../config/HostConfig.js"
import * as Database from "../store/Database.js"
import { ActivityRepo } from "../store/ActivityRepo.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { MigrationsRepo } from "../store/MigrationsRepo.js"
import { SettingsRepo } from "../store/SettingsRepo.js"

// The layers commands run on. A command provides only what it uses, so `validate` never opens the database.

export interface Invocation {
  readonly root: string
  readonly verbose: boolean
  readonly env: Readonly<Record<string, string | undefined>>
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

/** Configuration, database (schema ensured) and the four repositories. */
export const storeLayer = (invocation: Invocation) =>
  repositoriesLayer.pipe(
    Layer.provideMerge(Database.layer),
    Layer.provideMerge(configLayer(invocation)),
    Layer.provideMerge(NodeContext.layer)
  )
