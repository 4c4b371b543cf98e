import type { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"
import type { Faults } from "../config/Debug.js"
import { ActivityRepo, makeActivityRepo } from "./ActivityRepo.js"
import { CoreRows, makeCoreRows } from "./CoreRows.js"
import { ExtensionsRepo, makeExtensionsRepo } from "./ExtensionsRepo.js"
import { makeMigrationsRepo, MigrationsRepo } from "./MigrationsRepo.js"
import { makeOperationLocks, OperationLocks } from "./OperationLock.js"
import { makeSettingsRepo, SettingsRepo } from "./SettingsRepo.js"
import { makeStateGeneration, StateGeneration } from "./StateGeneration.js"

/** The repositories every command reads and writes through. */
export type Repositories = CoreRows | ExtensionsRepo | MigrationsRepo | SettingsRepo | ActivityRepo | StateGeneration

const makeRepositories = Effect.gen(function*() {
  return Context.make(CoreRows, CoreRows.make(yield* makeCoreRows)).pipe(
    Context.add(ExtensionsRepo, ExtensionsRepo.make(yield* makeExtensionsRepo)),
    Context.add(MigrationsRepo, MigrationsRepo.make(yield* makeMigrationsRepo)),
    Context.add(SettingsRepo, SettingsRepo.make(yield* makeSettingsRepo)),
    Context.add(ActivityRepo, ActivityRepo.make(yield* makeActivityRepo)),
    Context.add(StateGeneration, StateGeneration.make(yield* makeStateGeneration))
  )
})

/**
 * The six repositories as one layer: the same services their `Default` layers give, made in one build,
 * since every layer is a memoised build of its own and each costs a short command's run loop hundreds of
 * steps (docs/decisions.md "P1: the stack's floor").
 */
export const repositoriesLayer: Layer.Layer<Repositories, never, SqlClient.SqlClient> = Layer.effectContext(makeRepositories)

/** The repositories and the operation lock, made together (what the composition root's data layer stands on). */
export const makeStoreServices: Effect.Effect<Context.Context<Repositories | OperationLocks>, never, SqlClient.SqlClient | Faults> = Effect
  .flatMap(makeRepositories, (repositories) =>
    Effect.map(Effect.provide(makeOperationLocks, repositories), (locks) => Context.add(repositories, OperationLocks, OperationLocks.make(locks))))

/** makeStoreServices as one layer build. */
export const storeServicesLayer: Layer.Layer<Repositories | OperationLocks, never, SqlClient.SqlClient | Faults> = Layer.effectContext(
  makeStoreServices
)
