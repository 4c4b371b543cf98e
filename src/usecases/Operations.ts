import { Path } from "@effect/platform"
import { Effect, Either, Option } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import { ExtensionNotFound } from "../domain/Errors.js"
import { type Actor, migrationsFolderOf } from "../domain/Installed.js"
import type { RegistryReference } from "../domain/Registry.js"
import { type AddOptions, Lifecycle, type OperationOptions, type RemoveOptions, type ToggleOptions } from "../lifecycle/Lifecycle.js"
import { discoverMigrations } from "../lifecycle/Migrations.js"
import * as RegistryUpdates from "../lifecycle/RegistryUpdates.js"
import { SourceSpec } from "../lifecycle/Source.js"
import { Registry } from "../registry/Registry.js"
import type { RegistryIndexError, RegistryLookupFailed } from "../registry/RegistryErrors.js"
import { LiveRuntime } from "../runtime/LiveState.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { MigrationsRepo } from "../store/MigrationsRepo.js"
import { OperationLocks } from "../store/OperationLock.js"
import type { AvailableUpdate, UpdateOutcome } from "./Views.js"

// The operations the CLI and the admin API run. Each is one lifecycle operation for the actor the front
// door names. The admin's variants add one thing: after a change the server's runtime swaps to a new
// generation before the answer goes out, so the next request sees it (docs/http.md "Runtime generations,
// quarantine, live state"); a CLI process has no runtime to swap.

/** A registry source pinned to the version the registry resolves now (so what is checked is what installs). */
const pinned = (spec: SourceSpec): Effect.Effect<SourceSpec, RegistryLookupFailed | RegistryIndexError, Registry> =>
  spec._tag === "Registry"
    ? Effect.map(Effect.flatMap(Registry, (registry) => registry.resolve(spec)), (resolved) =>
      SourceSpec.Registry({ id: resolved.id, range: resolved.version }))
    : Effect.succeed(spec)

/** `host add`: installs from a folder, an archive or the registry (pinned first; the id must be the one asked for). */
export const addExtension = (spec: SourceSpec, options: Omit<AddOptions, "expectedId">) =>
  Effect.flatMap(pinned(spec), (source) =>
    Effect.flatMap(Lifecycle, (lifecycle) =>
      lifecycle.add(source, { ...options, ...(source._tag === "Registry" ? { expectedId: source.id } : {}) })))

/** `host update <id> --source …`: the installed extension from another folder, archive or registry version. */
export const updateExtension = (id: string, spec: SourceSpec, options: Omit<AddOptions, "expectedId">) =>
  Effect.flatMap(pinned(spec), (source) => Effect.flatMap(Lifecycle, (lifecycle) => lifecycle.update(id, source, options)))

/** `enable` or `disable` of an installed extension. */
export const setEnabled = (operation: "enable" | "disable", id: string, options: ToggleOptions) =>
  Effect.flatMap(Lifecycle, (lifecycle) => lifecycle[operation](id, options))

/** `remove` of an installed extension. */
export const removeExtension = (id: string, options: RemoveOptions) =>
  Effect.flatMap(Lifecycle, (lifecycle) => lifecycle.remove(id, options))

/** `update --check`: the extensions installed from the registry (or the one named) and those it has newer. */
export const checkUpdates = (reference: Option.Option<RegistryReference>) => RegistryUpdates.checkUpdates(reference)

/**
 * `update [id]` from the registry: the one named (its failure fails the call), or every extension
 * installed from it, one failure reported and the rest updated.
 */
export const updateFromRegistryAll = (
  reference: Option.Option<RegistryReference>,
  options: OperationOptions & { readonly force: boolean; readonly noMigrate: boolean },
  reportFailure: (id: string, error: { readonly message: string }) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    if (Option.isNone(reference)) return yield* RegistryUpdates.updateAll(options, reportFailure)
    const [target] = yield* RegistryUpdates.updateTargets(reference)
    return [Either.right(yield* RegistryUpdates.updateTarget(target!, options))]
  })

/** `unlock`: clears the lock of an operation whose process is gone (or any, forced). */
export const unlockOperation = (lockId: string, force: boolean) => Effect.flatMap(OperationLocks, (locks) => locks.unlock(lockId, force))

/** `artifacts:prune`: removes the archives no installed extension references. */
export const pruneArtifacts = (options: OperationOptions) => Effect.flatMap(Lifecycle, (lifecycle) => lifecycle.pruneArtifacts(options))

/** One migration of an extension: whether it ran, and in which batch. */
export interface MigrationStatus {
  readonly migration: string
  readonly ran: boolean
  readonly batch: number | null
}

/** `migrate:status`: the migration files in the extension's tree and the ones recorded as run, by name. */
export const migrationStatus = (id: string) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const { paths } = yield* HostConfig
    const record = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.find(id))
    if (Option.isNone(record)) return yield* new ExtensionNotFound({ id })
    const folder = path.join(paths.extensions, ...id.split("/"), migrationsFolderOf(record.value))
    const files = yield* discoverMigrations(folder)
    const recorded = yield* Effect.flatMap(MigrationsRepo, (repo) => repo.listFor(id))
    const byName = new Map(recorded.map((row) => [row.migration, row]))
    const names = [...new Set([...files.map((file) => file.name), ...recorded.map((row) => row.migration)])].sort()
    return names.map((migration): MigrationStatus => ({ migration, ran: byName.has(migration), batch: byName.get(migration)?.batch ?? null }))
  })

/** An admin waits this long (seconds) for another operation's lock before the request is refused. */
export const adminLockTimeout = 5

/** After a change: swap the runtime now, so the next request sees it. */
export const swapRuntime = Effect.flatMap(LiveRuntime, (runtime) => runtime.refresh())

const thenSwap = <A, E, R>(change: Effect.Effect<A, E, R>) => Effect.tap(change, () => swapRuntime)

/** An uploaded archive, already received into its own folder. */
export type UploadSource = SourceSpec & { readonly _tag: "Upload" }

export interface InstallFlags {
  readonly force: boolean
  readonly disabled: boolean
  readonly noMigrate: boolean
}

/** `POST extensions`: installs an uploaded archive. */
export const installUpload = (upload: UploadSource, flags: InstallFlags, actor: Actor) =>
  thenSwap(addExtension(upload, { actor, ...flags }))

/** `POST registry/install {id, version?}`: installs an extension (a chosen version) from the registry. */
export const installFromRegistry = (request: { readonly id: string; readonly version?: string | undefined }, actor: Actor) =>
  Effect.flatMap(Lifecycle, (lifecycle) =>
    thenSwap(lifecycle.add(SourceSpec.Registry({ id: request.id, range: request.version }), {
      actor,
      expectedId: request.id,
      lockTimeout: adminLockTimeout
    })))

/** `update` from an uploaded archive. */
export const updateFromUpload = (id: string, upload: UploadSource, force: boolean, actor: Actor) =>
  Effect.flatMap(Lifecycle, (lifecycle) => thenSwap(lifecycle.update(id, upload, { actor, lockTimeout: adminLockTimeout, force })))

/** `update` from the registry: the latest version, or the one asked for (asking by name is the force: it may be older). */
export const updateFromRegistry = (id: string, version: string | undefined, actor: Actor) =>
  Effect.flatMap(Lifecycle, (lifecycle) =>
    thenSwap(lifecycle.update(id, SourceSpec.Registry({ id, range: version }), {
      actor,
      lockTimeout: adminLockTimeout,
      force: version !== undefined
    })))

export interface OperationFlags {
  readonly force: boolean
  readonly keepData: boolean
}

/** `enable`, `disable` or `remove` of an installed extension. */
export const toggleOrRemove = (operation: "enable" | "disable" | "remove", id: string, flags: OperationFlags, actor: Actor) =>
  thenSwap(
    operation === "remove"
      ? removeExtension(id, { actor, force: flags.force, keepData: flags.keepData, lockTimeout: adminLockTimeout })
      : setEnabled(operation, id, { actor, force: flags.force, lockTimeout: adminLockTimeout })
  )

/** `GET updates`: the extensions installed from the registry that it has a newer version of. */
export const availableUpdates = Effect.map(
  RegistryUpdates.checkUpdates(Option.none()),
  ({ updates }): ReadonlyArray<AvailableUpdate> => updates
)

/** `POST updates`: updates every extension installed from the registry; one failure does not stop the rest. */
export const updateAll = (actor: Actor) =>
  thenSwap(RegistryUpdates.updateAll({ actor, lockTimeout: adminLockTimeout })).pipe(
    Effect.map((outcomes): ReadonlyArray<UpdateOutcome> => outcomes.map(Either.merge))
  )
