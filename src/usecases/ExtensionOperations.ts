import { Path } from "@effect/platform"
import { Effect, Either, Option } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import { ExtensionNotFound } from "../domain/Errors.js"
import { migrationsFolderOf } from "../domain/Installed.js"
import type { RegistryReference } from "../domain/Registry.js"
import { type AddOptions, Lifecycle, type OperationOptions, type RemoveOptions, type ToggleOptions } from "../lifecycle/Lifecycle.js"
import { discoverMigrations } from "../lifecycle/Migrations.js"
import { pinRegistryVersion } from "../lifecycle/RegistryPin.js"
import * as RegistryUpdates from "../lifecycle/RegistryUpdates.js"
import { classify } from "../lifecycle/Errors.js"
import { describeSource, SourceSpec } from "../lifecycle/Source.js"
import { Registry } from "../registry/Registry.js"
import type { RegistryIndexError, RegistryLookupFailed } from "../registry/RegistryErrors.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { MigrationsRepo } from "../store/MigrationsRepo.js"
import { OperationLocks } from "../store/OperationLock.js"

// The operations on installed extensions the CLI runs, each one lifecycle operation for the actor the
// front door names; the admin API's variants in ./Operations.ts wrap them. Kept apart from those so a
// CLI command does not load the server's live runtime.

/**
 * A registry source pinned to the version the registry resolves now (so what is checked is what installs),
 * through the one pinning rule of every front door, lifecycle/RegistryPin.ts `pinRegistryVersion`
 * (DESIGN.md §23; the reconciler's plan resolves through it too).
 */
export const pinned = (spec: SourceSpec): Effect.Effect<SourceSpec, RegistryLookupFailed | RegistryIndexError, Registry> =>
  spec._tag === "Registry"
    ? Effect.map(pinRegistryVersion({ id: spec.id, range: spec.range }, spec.registry), RegistryUpdates.pinnedSource)
    : Effect.succeed(spec)

/**
 * `pinned`, failing as the operation itself would have (a lookup failure is the operation's SourceRejected,
 * naming the step): for the admin API, whose answers name the operation that failed.
 */
export const pinnedFor = (operation: "add" | "update", id: string, spec: SourceSpec) =>
  Effect.mapError(pinned(spec), (error) => classify(operation, id, `resolving ${describeSource(spec)} in the registry`, error, ""))

/**
 * An update of installed `id` from the registry, pinned as `host update <id>[@version]` pins it: in the
 * registry it was installed from while that one is configured (RegistryUpdates `pinUpdate`), failing as the
 * update itself would have. For the admin API.
 */
export const pinnedUpdateFor = (id: string, range: string | undefined) =>
  Effect.mapError(
    RegistryUpdates.pinUpdate({ id, range }),
    (error) => classify("update", id, `resolving ${describeSource(SourceSpec.Registry({ id, range }))} in the registry`, error, "")
  ).pipe(Effect.map(RegistryUpdates.pinnedSource))

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
export const checkUpdates = (reference: Option.Option<RegistryReference>, registry?: string) =>
  RegistryUpdates.checkUpdates(reference, registry)

/**
 * `update [id]` from the registry: the one named (its failure fails the call), or every extension
 * installed from it, one failure reported and the rest updated.
 */
export const updateFromRegistryAll = (
  reference: Option.Option<RegistryReference>,
  options: OperationOptions & { readonly force: boolean; readonly noMigrate: boolean },
  reportFailure: (id: string, error: { readonly message: string }) => Effect.Effect<void>,
  registry?: string
) =>
  Effect.gen(function*() {
    if (Option.isNone(reference)) return yield* RegistryUpdates.updateAll(options, reportFailure)
    const [target] = yield* RegistryUpdates.updateTargets(reference, registry)
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

