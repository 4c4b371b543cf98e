import { Effect, Either, Option } from "effect"
import semver from "semver"
import { ExtensionNotFound } from "../domain/Errors.js"
import type { InstalledExtension } from "../domain/Installed.js"
import type { RegistryReference } from "../domain/Registry.js"
import { Registry } from "../registry/Registry.js"
import type { RegistryLookupFailed } from "../registry/RegistryErrors.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { type AddOptions, Lifecycle, type OperationResult } from "./Lifecycle.js"
import { type PinnedRegistryVersion, pinRegistryVersion } from "./RegistryPin.js"
import { SourceSpec } from "./Source.js"

// Updates from the registry (`host update [id] [--check]`, the admin API): which extensions, which
// version, and updating them all with one failure not stopping the rest. Every version is pinned by
// ./RegistryPin.ts, the one pinning rule of every front door (DESIGN.md §23).

/** A pinned registry version as the lifecycle's source: that exact version, from that registry. */
export const pinnedSource = (pinned: PinnedRegistryVersion): SourceSpec =>
  SourceSpec.Registry({ id: pinned.id, range: pinned.version, registry: pinned.registry })

/**
 * The registry an update of an installed extension resolves in: `asked` (`--registry`) when given, else
 * the one its record remembers while that one is still configured (docs/registry.md "Several registries"),
 * else undefined (the resolution order).
 */
const updateRegistryOf = (record: InstalledExtension, configured: ReadonlySet<string>, asked: string | undefined) =>
  asked ?? (record.source.registry !== undefined && configured.has(record.source.registry) ? record.source.registry : undefined)

/**
 * An update of installed `reference.id` from the registry, pinned: resolved in the registry `updateTargets`
 * would pick for it (the one it was installed from, while configured). Not installed: in the resolution
 * order (the update itself then refuses it).
 */
export const pinUpdate = (reference: RegistryReference, asked?: string) =>
  Effect.gen(function*() {
    const record = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.find(reference.id))
    const configured = new Set((yield* Registry).registries.map((entry) => entry.name))
    const registry = Option.match(record, { onNone: () => asked, onSome: (found) => updateRegistryOf(found, configured, asked) })
    return yield* pinRegistryVersion(reference, registry)
  })

export interface UpdateTarget {
  readonly reference: RegistryReference
  readonly current: string
  /** The registry to resolve in: `--registry`, else the one it was installed from while it is configured. */
  readonly registry: string | undefined
}

export interface AvailableUpdate {
  readonly id: string
  readonly current: string
  readonly available: string
}

/** How updating one of several extensions ended: its result, or why it failed. */
export type UpdateOutcome = Either.Either<OperationResult, { readonly id: string; readonly action: "failed"; readonly error: string }>

/**
 * The named extension (which must be installed), or every extension installed from the registry. Each
 * resolves in `registry` when given, else in the registry its record remembers while that one is still
 * configured (docs/registry.md "Several registries"), else in the resolution order.
 */
export const updateTargets = (reference: Option.Option<RegistryReference>, registry?: string) =>
  Effect.gen(function*() {
    const installed = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.list)
    const configured = new Set((yield* Registry).registries.map((entry) => entry.name))
    const registryOf = (record: InstalledExtension) => updateRegistryOf(record, configured, registry)
    if (Option.isNone(reference)) {
      return installed
        .filter((record) => record.source.type === "registry")
        .map((record): UpdateTarget => ({ reference: { id: record.extensionId, range: undefined }, current: record.version, registry: registryOf(record) }))
    }
    const record = installed.find((candidate) => candidate.extensionId === reference.value.id)
    if (record === undefined) return yield* new ExtensionNotFound({ id: reference.value.id })
    return [{ reference: reference.value, current: record.version, registry: registryOf(record) }]
  })

/**
 * The version to update to, pinned (`pinRegistryVersion`), or undefined when there is nothing to do: the
 * registry's latest when it is newer, or the version an explicit `@version`/`@range` resolves to when it
 * differs from the installed one.
 */
export const availableUpdate = (target: UpdateTarget) =>
  Effect.map(pinRegistryVersion(target.reference, target.registry), (pinned) => {
    const { version } = pinned
    const newer = semver.valid(target.current) === null || semver.gt(version, target.current)
    const wanted = target.reference.range === undefined ? newer : version !== target.current
    return wanted ? pinned : undefined
  })

/**
 * The targets and those with an update. Checking all, an extension the registry no longer lists is a
 * warning, not a failure.
 */
export const checkUpdates = (reference: Option.Option<RegistryReference>, registry?: string) =>
  Effect.gen(function*() {
    const targets = yield* updateTargets(reference, registry)
    const updates = yield* Effect.forEach(targets, (target) =>
      availableUpdate(target).pipe(
        Effect.map((available): ReadonlyArray<AvailableUpdate> =>
          available === undefined ? [] : [{ id: target.reference.id, current: target.current, available: available.version }]
        ),
        Effect.catchTag("RegistryLookupFailed", (error: RegistryLookupFailed) =>
          Option.isNone(reference) ? Effect.as(Effect.logWarning(error.message), []) : Effect.fail(error))
      ))
    return { targets, updates: updates.flat() }
  })

const upToDate = (target: UpdateTarget, enabled: boolean): OperationResult => ({
  operation: "update",
  id: target.reference.id,
  action: "unchanged",
  version: target.current,
  fromVersion: null,
  enabled,
  migrations: [],
  warnings: []
})

/** Updates one target to what the registry offers now, or reports it unchanged. */
export const updateTarget = (target: UpdateTarget, options: Omit<AddOptions, "expectedId" | "disabled">) =>
  Effect.gen(function*() {
    const pinned = yield* availableUpdate(target)
    if (pinned === undefined) {
      const record = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.find(target.reference.id))
      return upToDate(target, Option.match(record, { onNone: () => false, onSome: (found) => found.enabled }))
    }
    const lifecycle = yield* Lifecycle
    // A version asked for by name (`vendor/name@1.0.0`) may be older: asking is the --force.
    const named = target.reference.range !== undefined
    return yield* lifecycle.update(target.reference.id, pinnedSource(pinned), { ...options, force: options.force === true || named })
  })

/** Updates every extension installed from the registry, each on its own: one failure does not stop the rest. */
export const updateAll = (
  options: Omit<AddOptions, "expectedId" | "disabled">,
  onFailure: (id: string, error: { readonly message: string }) => Effect.Effect<void> = () => Effect.void
) =>
  Effect.flatMap(updateTargets(Option.none()), (targets) =>
    Effect.forEach(targets, (target): Effect.Effect<UpdateOutcome, never, Lifecycle | Registry | ExtensionsRepo> =>
      updateTarget(target, options).pipe(
        Effect.tapError((error) => onFailure(target.reference.id, error)),
        Effect.either,
        Effect.map(Either.mapLeft((error) => ({ id: target.reference.id, action: "failed" as const, error: error.message })))
      )))
