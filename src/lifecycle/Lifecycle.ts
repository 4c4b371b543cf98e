import { FileSystem, Path } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { SqlClient } from "@effect/sql"
import { Context, DateTime, Duration, Effect, Either, Option, Ref } from "effect"
import { ArtifactStore } from "../archive/ArtifactStore.js"
import { HostConfig } from "../config/HostConfig.js"
import {
  ExtensionDisabled,
  ExtensionEnabled,
  ExtensionInstalled,
  ExtensionRemoved,
  ExtensionUpdated,
  type LifecycleEvent
} from "../domain/Events.js"
import {
  type Actor,
  corruptReason,
  dependenciesOf,
  type ExtensionSource,
  type InstalledExtension,
  manifestOf,
  migrationsFolderOf
} from "../domain/Installed.js"
import type { OperationLock } from "../domain/Lock.js"
import { validateSettingValues } from "../domain/Settings.js"
import { enablePreconditions, installPreconditions, type Refusal, withdrawPreconditions } from "../domain/Preconditions.js"
import type { InstalledState } from "../domain/Rules.js"
import { Panel } from "../panel/Panel.js"
import { ActivityRepo } from "../store/ActivityRepo.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { MigrationsRepo } from "../store/MigrationsRepo.js"
import { LockHeld, OperationLocks } from "../store/OperationLock.js"
import { SettingsRepo } from "../store/SettingsRepo.js"
import { StateGeneration } from "../store/StateGeneration.js"
import type { StoreError } from "../store/StoreError.js"
import { writeTransaction } from "../store/Transaction.js"
import { afterDdl } from "../store/Dialect.js"
import { type FailureKind, failureKinds, type OperationFailed, type OperationName, OperationRefused } from "./Errors.js"
import { LifecycleEvents, Progress } from "./Events.js"
import { finishFiles, holderName, recover, recoverHeld, restoreFiles, switchFiles } from "./FileSwitch.js"
import { type JournalEntry, type JournalStep, writeJournal } from "./Journal.js"
import { undoStartedMigrations } from "./MigrationUndo.js"
import { migrateDownAll, migrateDownNamed, migrateUp } from "./Migrations.js"
import { ModuleLoader } from "./ModuleLoader.js"
import { Registry } from "../registry/Registry.js"
import { Faults } from "../config/Debug.js"
import { describeSource, type SourceSpec, stageSource, type StagedExtension } from "./Source.js"
import { removeMark, writeMark } from "./TreeMarks.js"
import { redactUrl } from "../store/Dialect.js"
import { uuid } from "../system/Ids.js"
import { runtimeVersions } from "../system/RuntimeVersions.js"

// The five operations (docs/architecture.md "One install"), each all-or-nothing under the operation lock:
// stage → check → [one transaction: migrate → switch files → record + activity] → clean up → event.
// A failure rolls the transaction back and puts the files back; a crash is finished or rolled back by
// `recover` from the journal (committed means: the activity row carrying the operation id exists).

export interface OperationOptions {
  readonly actor: Actor
  /** Seconds to wait for another operation's lock (0: fail at once). */
  readonly lockTimeout?: number
  /** Goes into the activity context (the reconciler's plan id). */
  readonly context?: Readonly<Record<string, unknown>>
}

export interface AddOptions extends OperationOptions {
  readonly force?: boolean
  readonly noMigrate?: boolean
  readonly disabled?: boolean
  /** Refuse a source whose manifest id differs (registry installs, `update <id>`). */
  readonly expectedId?: string
  /**
   * Migrations of the installed version to roll back (down, newest first) in the same transaction,
   * before the new files go in: a health gate taking an update back to the previous tree.
   */
  readonly revertMigrations?: ReadonlyArray<string>
  /** The source to record instead of the staged one (a rollback from a kept copy records the original). */
  readonly recordSource?: ExtensionSource
}

export interface RemoveOptions extends OperationOptions {
  readonly keepData?: boolean
  readonly force?: boolean
}

export interface ToggleOptions extends OperationOptions {
  readonly force?: boolean
}

export interface OperationResult {
  readonly operation: OperationName
  readonly id: string
  readonly action: "installed" | "updated" | "enabled" | "disabled" | "removed" | "configured" | "unchanged"
  readonly version: string
  readonly fromVersion: string | null
  readonly enabled: boolean
  readonly migrations: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
}

export type { RecoveryOutcome } from "./FileSwitch.js"

/** Present while a caller (the reconciler) holds the operation lock for a run of operations. */
export class HeldOperationLock extends Context.Tag("host/HeldOperationLock")<HeldOperationLock, OperationLock>() {}


const installedStates = (extensions: ReadonlyArray<InstalledExtension>): ReadonlyMap<string, InstalledState> =>
  new Map(extensions.map((extension) => [extension.extensionId, {
    version: extension.version,
    enabled: extension.enabled,
    dependencies: dependenciesOf(extension)
  }]))

/** A precondition's refusal (domain/Preconditions.ts) as the operation's OperationRefused. */
const refusedAs = <A>(operation: OperationName, extensionId: string, outcome: Either.Either<A, Refusal>) =>
  Either.match(outcome, {
    onLeft: (refusal) => Effect.fail(new OperationRefused({ operation, extensionId, ...refusal })),
    onRight: Effect.succeed
  })

/**
 * The kind of failure each error an operation's steps can raise is. `operate` accepts only bodies whose
 * errors are all listed here, so a step that starts raising something new does not compile until it is
 * classified (and so gets its HTTP status and CLI hint).
 */
const kindByTag = {
  // archive/, registry/ and the manifest: the input was refused
  ArchiveRefused: "SourceRejected",
  SignatureRefused: "SourceRejected",
  KeyInvalid: "SourceRejected",
  ManifestInvalid: "SourceRejected",
  ChecksumMismatch: "SourceRejected",
  RegistryArchiveMismatch: "SourceRejected",
  RegistryIndexInvalid: "SourceRejected",
  RegistryLookupFailed: "SourceRejected",
  RegistryNotConfigured: "SourceRejected",
  // the registry could not be reached
  RegistryFetchFailed: "SourceUnreachable",
  // the artifact store lost (or damaged) the bytes a plan verified: fetch them again with a new plan
  ArtifactUnavailable: "SourceUnreachable",
  RegistryCacheError: "SourceUnreachable",
  // the extension's migrations
  MigrationFailed: "MigrationsFailed",
  ModuleLoadError: "MigrationsFailed",
  // the database
  StoreError: "StoreUnavailable",
  SqlError: "StoreUnavailable",
  // files
  ArchiveIOError: "FilesFailed",
  SystemError: "FilesFailed",
  BadArgument: "FilesFailed"
} as const satisfies Record<string, FailureKind>

/** An error a step may raise: classified above, or already a refusal or a held lock. */
type StepError = { readonly _tag: keyof typeof kindByTag; readonly message: string } | OperationRefused | LockHeld

const classify = (
  operation: OperationName,
  extensionId: string,
  step: string,
  error: { readonly _tag: keyof typeof kindByTag; readonly message: string },
  database: string
): OperationFailed =>
  new failureKinds[kindByTag[error._tag]]({
    operation,
    extensionId,
    step,
    reason: error._tag,
    detail: error._tag === "SqlError" || error._tag === "StoreError"
      ? databaseDetail(error, database)
      : error.message === "" ? error._tag : error.message
  })

/**
 * A database failure names the database (its URL without the password) and the cause: a StoreError's own
 * message, or a raw SqlError (one a transaction's end raised, docs/decisions.md "Database cuts").
 */
const databaseDetail = (error: { readonly _tag: string; readonly message: string }, database: string) => {
  if (error._tag === "StoreError") return `database ${database}: ${error.message.replace(/^database: /, "")}`
  const cause = (error as { readonly cause?: { readonly message?: unknown } }).cause
  const why = typeof cause?.message === "string" && cause.message !== "" ? `: ${cause.message}` : ""
  return `database ${database}: ${error.message === "" ? "a statement failed" : error.message}${why}`
}

export class Lifecycle extends Effect.Service<Lifecycle>()("host/Lifecycle", {
  effect: Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const sql = yield* SqlClient.SqlClient
    const { config, paths } = yield* HostConfig
    const extensions = yield* ExtensionsRepo
    const settings = yield* SettingsRepo
    const activity = yield* ActivityRepo
    const locks = yield* OperationLocks
    const stateGeneration = yield* StateGeneration
    const events = yield* LifecycleEvents
    const panel = yield* Panel
    const loader = yield* ModuleLoader
    // The crash suites end the process at these steps (docs/operations.md, "The debug variable").
    const { reached: crashPoint } = yield* Faults
    const provideLoader = Effect.provideService(ModuleLoader, loader)
    // The journal and staging helpers read these from the context; methods get them from the layer.
    type Internal =
      | FileSystem.FileSystem
      | Path.Path
      | HostConfig
      | SqlClient.SqlClient
      | MigrationsRepo
      | ActivityRepo
      | OperationLocks
      | ArtifactStore
      | Registry
    const platform = yield* Effect.context<Internal>()
    const closed = <A, E>(effect: Effect.Effect<A, E, Internal>) => Effect.provide(effect, platform)
    const hostVersion = config.version
    const databaseLabel = redactUrl(config.database)

    const targetOf = (id: string) => path.join(paths.extensions, ...id.split("/"))
    const exists = (file: string) => fs.exists(file).pipe(Effect.orElseSucceed(() => false))
    const artifacts = yield* ArtifactStore

    /**
     * Drops the artifacts no installed record references any more (held under the lock, so no operation
     * records one meanwhile). Best effort: an artifact left behind costs space, not correctness.
     */
    const dropUnreferenced = (digests: ReadonlyArray<string | null>) =>
      Effect.gen(function*() {
        const wanted = digests.filter((digest): digest is string => digest !== null)
        if (wanted.length === 0) return
        const referenced = new Set((yield* extensions.list).map((record) => record.source.sha256))
        for (const digest of wanted) {
          if (!referenced.has(digest)) yield* artifacts.remove(digest)
        }
      }).pipe(Effect.catchAllCause((cause) => Effect.logWarning(`dropping unreferenced artifacts failed: ${String(cause)}`)))

    // ---- the lock and error shaping ------------------------------------------------------------

    /**
     * Runs `body` holding the lock, after recovering interrupted operations. Every failure that is not
     * a refusal or a held lock becomes the OperationFailed of its kind, naming the step it happened in.
     */
    const operate = <A, E extends StepError, R>(
      operation: OperationName,
      extensionId: string,
      options: OperationOptions,
      body: (step: (name: string) => Effect.Effect<void>) => Effect.Effect<A, E, R>
    ) =>
      Effect.gen(function*() {
        const current = yield* Ref.make("waiting for the operation lock")
        const step = (name: string) =>
          Effect.zipRight(
            Ref.set(current, name),
            Effect.flatMap(Effect.serviceOption(Progress), Option.match({ onNone: () => Effect.void, onSome: (progress) => progress.step(name) }))
          )
        const held = yield* Effect.serviceOption(HeldOperationLock)
        const run: Effect.Effect<A, E | PlatformError | StoreError | LockHeld, R | FileSystem.FileSystem | Path.Path | HostConfig | ActivityRepo> =
          Option.isSome(held) ? body(step) : withLockHeld(`${operation} ${extensionId}`, options, body(step))
        return yield* run.pipe(
          Effect.catchAll((error: StepError): Effect.Effect<never, OperationFailed | OperationRefused | LockHeld> =>
            error._tag === "OperationRefused" || error._tag === "LockHeld"
              ? Effect.fail(error)
              : Effect.flatMap(Ref.get(current), (stepName) => Effect.fail(classify(operation, extensionId, stepName, error, databaseLabel))))
        )
      }).pipe(Effect.withSpan(`Lifecycle.${operation}`, { attributes: { extensionId } }))

    /** Takes the lock (recovering interrupted operations first) for `effect`, which may run several operations. */
    const withLockHeld = <A, E, R>(operation: string, options: OperationOptions, effect: Effect.Effect<A, E, R>) =>
      Effect.scoped(
        Effect.gen(function*() {
          const lock = yield* locks.acquire({
            operation,
            holder: holderName(options.actor),
            timeout: Duration.seconds(options.lockTimeout ?? 0)
          })
          yield* recoverHeld
          return yield* Effect.provideService(effect, HeldOperationLock, lock)
        })
      )

    const activityContext = (options: OperationOptions, operationId: string, extra: Record<string, unknown> = {}) => ({
      actor: options.actor,
      operation: operationId,
      ...options.context,
      ...extra
    })

    const publish = (event: LifecycleEvent) => events.publish(event)

    // ---- add / update ----------------------------------------------------------------------------

    const install = (
      operation: "add" | "update",
      spec: SourceSpec,
      options: AddOptions,
      step: (name: string) => Effect.Effect<void>
    ) =>
      Effect.gen(function*() {
        const operationId = yield* uuid
        const stagedPath = path.join(paths.staging, operationId)
        const journal = yield* Ref.make<JournalEntry>({
          id: operationId,
          operation,
          extensionId: options.expectedId ?? describeSource(spec),
          step: "begin",
          target: "",
          staged: stagedPath,
          backup: path.join(paths.staging, `${operationId}.previous`),
          hadPrevious: false,
          startedAt: DateTime.formatIso(yield* DateTime.now)
        })
        const journalStep = (next: JournalStep, patch: Partial<JournalEntry> = {}) =>
          Effect.tap(Ref.updateAndGet(journal, (entry) => ({ ...entry, ...patch, step: next })), (entry) => writeJournal(entry))
        // Until the transaction starts only the staging folder and the journal exist: drop them on failure.
        const dropStaging = Effect.flatMap(Ref.get(journal), (entry) =>
          entry.step === "begin" || entry.step === "staged" ? restoreFiles(entry) : Effect.void).pipe(Effect.ignore)
        // An artifact this operation put in the store goes again when the operation fails.
        const added = yield* Ref.make<string | null>(null)
        const dropAdded = Effect.flatMap(Ref.get(added), (digest) => dropUnreferenced([digest]))

        return yield* Effect.gen(function*() {
          yield* step(`verifying and staging ${describeSource(spec)}`)
          yield* journalStep("begin")
          const staged: StagedExtension = yield* stageSource(spec, operationId, hostVersion)
          if (staged.artifactAdded) yield* Ref.set(added, staged.source.sha256)
          const id = staged.manifest.id
          const version = staged.manifest.version
          const target = targetOf(id)
          const hadPrevious = yield* exists(target)
          yield* journalStep("staged", { extensionId: id, target, hadPrevious })
          yield* crashPoint("staged")

          yield* step(`checking ${id} ${version}`)
          if (options.expectedId !== undefined && options.expectedId !== id) {
            return yield* new OperationRefused({
              operation,
              extensionId: options.expectedId,
              reason: "id-mismatch",
              detail: `${describeSource(spec)} holds ${id}, not ${options.expectedId}`
            })
          }
          const existing = yield* extensions.find(id)
          const { enabled, warnings } = yield* refusedAs(operation, id, installPreconditions({
            operation,
            document: staged.manifest.document,
            source: describeSource(spec),
            existing: Option.getOrUndefined(existing),
            force: options.force === true,
            disabled: options.disabled === true,
            versions: runtimeVersions(hostVersion, panel.info),
            installed: installedStates(yield* extensions.list)
          }))
          for (const warning of warnings) yield* Effect.logWarning(warning)

          const fromVersion = Option.map(existing, (record) => record.version)
          const isUpdate = Option.isSome(existing) && (operation === "update" || existing.value.version !== version)
          const migrations = yield* writeTransaction(sql,
            Effect.gen(function*() {
              if (options.revertMigrations !== undefined && options.revertMigrations.length > 0 && Option.isSome(existing)) {
                yield* step(`rolling back ${options.revertMigrations.length} migration(s) of v${existing.value.version}`)
                yield* migrateDownNamed(id, path.join(target, migrationsFolderOf(existing.value)), options.revertMigrations)
              }
              yield* step(options.noMigrate === true ? "skipping migrations (--no-migrate)" : "running migrations")
              const ran = options.noMigrate === true
                ? []
                : yield* migrateUp(
                  id,
                  staged.layout.migrations === undefined ? undefined : path.join(staged.directory, staged.layout.migrations),
                  (migration) =>
                    closed(Effect.flatMap(
                      Ref.updateAndGet(journal, (entry) => ({
                        ...entry,
                        migrations: [...(entry.migrations ?? []), { name: migration.name, file: path.relative(staged.directory, migration.file) }]
                      })),
                      writeJournal
                    ))
                )
              yield* afterDdl(sql)
              yield* crashPoint("migrated")
              yield* step("switching files")
              yield* journalStep("switching")
              // A dev link is served from the author's folder itself: the installed path only points there.
              yield* switchFiles({ ...(yield* Ref.get(journal)), staged: staged.directory }, { link: staged.source.type === "dev-link" })
              yield* journalStep("switched")
              yield* crashPoint("switched")
              yield* step("recording")
              yield* extensions.save({
                extensionId: id,
                name: staged.manifest.document.name,
                version,
                enabled,
                manifest: staged.manifest.document,
                // The recorded sha256 always names the artifact installed (a rollback keeps the original's
                // type and ref, but its files come from the kept copy, stored under its own digest).
                source: options.recordSource === undefined ? staged.source : { ...options.recordSource, sha256: staged.source.sha256 },
                signature: staged.signature
              })
              yield* activity.append({
                extensionId: id,
                action: isUpdate ? "updated" : "installed",
                summary: !isUpdate
                  ? `Installed v${version}`
                  : Option.getOrThrow(fromVersion) === version
                  ? `Reinstalled v${version}`
                  : `Updated ${Option.getOrThrow(fromVersion)} → ${version}`,
                context: activityContext(options, operationId, {
                  version,
                  source: staged.source,
                  migrations: ran,
                  ...(options.noMigrate === true ? { no_migrate: true } : {})
                })
              })
              // Replicas converge to this operation once it commits (docs/operations.md "Running replicas").
              yield* stateGeneration.bump
              yield* crashPoint("recorded")
              return ran
            }).pipe(provideLoader)
          ).pipe(Effect.tapErrorCause(() =>
            Effect.flatMap(Ref.get(journal), (entry) => Effect.zipRight(Effect.ignore(undoStartedMigrations(entry).pipe(provideLoader, closed)), restoreFiles(entry))).pipe(
              Effect.ignore
            )
          ))
          const done = yield* journalStep("committed")
          yield* crashPoint("committed")
          yield* step("cleaning up")
          yield* finishFiles(done).pipe(Effect.ignore)
          yield* Ref.set(added, null)
          const previousArtifact = Option.match(existing, { onNone: () => null, onSome: (record) => record.source.sha256 })
          if (previousArtifact !== staged.source.sha256) yield* dropUnreferenced([previousArtifact])
          // This root's tree is now the recorded archive: a server on this root has nothing to converge.
          const recorded = options.recordSource ?? staged.source
          yield* Effect.ignore(closed(
            recorded.sha256 === null || recorded.type === "dev-link" ? removeMark(id) : writeMark(id, { sha256: recorded.sha256, version })
          ))
          yield* publish(
            isUpdate
              ? new ExtensionUpdated({ extensionId: id, fromVersion: Option.getOrThrow(fromVersion), toVersion: version })
              : new ExtensionInstalled({ extensionId: id, version })
          )
          return {
            operation,
            id,
            action: isUpdate ? "updated" : "installed",
            version,
            fromVersion: Option.getOrNull(fromVersion),
            enabled,
            migrations,
            warnings
          } satisfies OperationResult
        }).pipe(Effect.tapErrorCause(() => Effect.zipRight(dropStaging, dropAdded)))
      })

    const add = (spec: SourceSpec, options: AddOptions) =>
      operate("add", options.expectedId ?? describeSource(spec), options, (step) => install("add", spec, options, step))

    const update = (id: string, spec: SourceSpec, options: Omit<AddOptions, "expectedId">) =>
      operate("update", id, options, (step) => install("update", spec, { ...options, expectedId: id }, step))

    // ---- dev links -------------------------------------------------------------------------------

    /**
     * `host dev --watch` after a saved change: re-reads the linked folder's manifest, runs migrations it
     * added, and saves the record. The new updated_at is what makes a running server swap its runtime
     * (recompiling the backend) and the bridge reload the bundle. No activity row: saves are not events.
     */
    const refreshLink = (id: string, options: OperationOptions) =>
      operate("update", id, options, (step) =>
        Effect.gen(function*() {
          const record = yield* requireInstalled("update", id)
          if (record.source.type !== "dev-link") {
            return yield* new OperationRefused({
              operation: "update",
              extensionId: id,
              reason: "id-mismatch",
              detail: `it is installed from ${record.source.type} ${record.source.ref}, not linked`,
              hint: `host remove ${id} first to link a folder instead`
            })
          }
          yield* step(`reading ${record.source.ref}`)
          const staged = yield* stageSource({ _tag: "DevLink", path: record.source.ref }, id, hostVersion)
          if (staged.manifest.id !== id) {
            return yield* new OperationRefused({
              operation: "update",
              extensionId: id,
              reason: "id-mismatch",
              detail: `${record.source.ref} now holds ${staged.manifest.id}`,
              hint: `host dev ${record.source.ref} --unlink, then link it again`
            })
          }
          const migrations = yield* writeTransaction(sql,
            Effect.gen(function*() {
              yield* step("running new migrations")
              const ran = yield* migrateUp(id, staged.layout.migrations === undefined ? undefined : path.join(staged.directory, staged.layout.migrations))
              yield* step("recording")
              yield* extensions.save({
                extensionId: id,
                name: staged.manifest.document.name,
                version: staged.manifest.version,
                enabled: record.enabled,
                manifest: staged.manifest.document,
                source: record.source,
                signature: record.signature
              })
              yield* stateGeneration.bump
              return ran
            }).pipe(provideLoader)
          )
          return {
            operation: "update",
            id,
            action: "updated",
            version: staged.manifest.version,
            fromVersion: record.version,
            enabled: record.enabled,
            migrations,
            warnings: []
          } satisfies OperationResult
        }))

    // ---- enable / disable ----------------------------------------------------------------------

    const requireInstalled = (operation: OperationName, id: string) =>
      Effect.flatMap(extensions.find(id), Option.match({
        onNone: () =>
          Effect.fail(new OperationRefused({ operation, extensionId: id, reason: "not-installed", detail: "it is not installed", hint: "see host list" })),
        onSome: Effect.succeed
      }))

    const toggle = (operation: "enable" | "disable", id: string, options: ToggleOptions) =>
      operate(operation, id, options, (step) =>
        Effect.gen(function*() {
          const record = yield* requireInstalled(operation, id)
          const enable = operation === "enable"
          const result = (action: OperationResult["action"], warnings: ReadonlyArray<string> = []): OperationResult => ({
            operation,
            id,
            action,
            version: record.version,
            fromVersion: null,
            enabled: enable,
            migrations: [],
            warnings
          })
          if (record.enabled === enable) return result("unchanged")
          yield* step(`checking ${id}`)
          const installed = installedStates(yield* extensions.list)
          const { warnings } = yield* refusedAs(operation, id, enable
            ? enablePreconditions(manifestOf(record)?.document, corruptReason(record), installed)
            : withdrawPreconditions("disable", id, installed, options.force === true))
          for (const warning of warnings) yield* Effect.logWarning(warning)
          yield* step(enable ? "enabling" : "disabling")
          yield* writeTransaction(sql,
            Effect.gen(function*() {
              yield* extensions.setEnabled(id, enable)
              yield* activity.append({
                extensionId: id,
                action: enable ? "enabled" : "disabled",
                summary: enable ? "Enabled" : "Disabled",
                context: activityContext(options, yield* uuid, warnings.length > 0 ? { forced: true } : {})
              })
              yield* stateGeneration.bump
            })
          )
          yield* publish(enable ? new ExtensionEnabled({ extensionId: id }) : new ExtensionDisabled({ extensionId: id }))
          return result(enable ? "enabled" : "disabled", warnings)
        }))

    // ---- configure -------------------------------------------------------------------------------

    /**
     * Writes settings values, each validated against the extension's normalized settings schema. Keys
     * not given keep their values. Settings have no activity action of their own (docs/architecture.md "Store").
     */
    const configure = (id: string, values: Readonly<Record<string, unknown>>, options: OperationOptions) =>
      operate("configure", id, options, (step) =>
        Effect.gen(function*() {
          const record = yield* requireInstalled("configure", id)
          const fields = manifestOf(record)?.settings ?? []
          const accepted = yield* Either.match(validateSettingValues(fields, values, "settings"), {
            onLeft: (problems) =>
              Effect.fail(new OperationRefused({
                operation: "configure",
                extensionId: id,
                reason: "settings",
                detail: problems.map((problem) => `${problem.path}: ${problem.message}`).join("; "),
                problems
              })),
            onRight: Effect.succeed
          })
          // null (or undefined) clears a stored value, so the field reads as its default again.
          const cleared = Object.keys(values).filter((key) => values[key] === null || values[key] === undefined)
          yield* step(`writing ${Object.keys(accepted).length} setting(s)${cleared.length > 0 ? `, clearing ${cleared.length}` : ""}`)
          yield* writeTransaction(
            sql,
            Effect.zipRight(
              Effect.forEach(cleared, (key) => settings.remove(id, key), { discard: true }),
              Effect.forEach(Object.entries(accepted), ([key, value]) => settings.put(id, key, value), { discard: true })
            ).pipe(Effect.zipRight(stateGeneration.bump))
          )
          return {
            operation: "configure",
            id,
            action: "configured",
            version: record.version,
            fromVersion: null,
            enabled: record.enabled,
            migrations: [],
            warnings: []
          } satisfies OperationResult
        }))

    // ---- remove ----------------------------------------------------------------------------------

    const remove = (id: string, options: RemoveOptions) =>
      operate("remove", id, options, (step) =>
        Effect.gen(function*() {
          const record = yield* requireInstalled("remove", id)
          const { warnings } = yield* refusedAs(
            "remove",
            id,
            withdrawPreconditions("remove", id, installedStates(yield* extensions.list), options.force === true)
          )
          for (const warning of warnings) yield* Effect.logWarning(warning)
          const operationId = yield* uuid
          const target = targetOf(id)
          const journal = yield* Ref.make<JournalEntry>({
            id: operationId,
            operation: "remove",
            extensionId: id,
            step: "begin",
            target,
            staged: null,
            backup: path.join(paths.staging, `${operationId}.removed`),
            hadPrevious: yield* exists(target),
            startedAt: DateTime.formatIso(yield* DateTime.now)
          })
          const journalStep = (next: JournalStep) =>
            Effect.tap(Ref.updateAndGet(journal, (entry) => ({ ...entry, step: next })), (entry) => writeJournal(entry))
          yield* journalStep("begin")
          const migrationsFolder = migrationsFolderOf(record)
          const rolledBack = yield* writeTransaction(sql,
            Effect.gen(function*() {
              let reverted: ReadonlyArray<string> = []
              if (options.keepData !== true) {
                yield* step("rolling back migrations")
                reverted = yield* migrateDownAll(id, path.join(target, migrationsFolder), (migration, batch) =>
                  closed(Effect.flatMap(
                    Ref.updateAndGet(journal, (entry) => ({
                      ...entry,
                      reverted: [...(entry.reverted ?? []), { name: migration.name, file: path.relative(target, migration.file), batch }]
                    })),
                    writeJournal
                  )))
                yield* afterDdl(sql)
                yield* settings.removeAll(id)
              } else {
                yield* step("keeping tables, migration records and settings (--keep-data)")
              }
              yield* crashPoint("migrated")
              yield* step("removing files")
              yield* journalStep("switching")
              yield* switchFiles(yield* Ref.get(journal))
              yield* journalStep("switched")
              yield* crashPoint("switched")
              yield* step("recording")
              yield* extensions.remove(id)
              yield* activity.append({
                extensionId: id,
                action: "removed",
                summary: "Removed",
                context: activityContext(options, operationId, {
                  version: record.version,
                  keep_data: options.keepData === true,
                  migrations: reverted
                })
              })
              // Replicas converge to this operation once it commits (docs/operations.md "Running replicas").
              yield* stateGeneration.bump
              yield* crashPoint("recorded")
              return reverted
            }).pipe(provideLoader)
          ).pipe(Effect.tapErrorCause(() =>
            Effect.flatMap(Ref.get(journal), (entry) => Effect.zipRight(Effect.ignore(undoStartedMigrations(entry).pipe(provideLoader, closed)), restoreFiles(entry))).pipe(
              Effect.ignore
            )
          ))
          yield* journalStep("committed")
          yield* crashPoint("committed")
          yield* step("cleaning up")
          yield* finishFiles(yield* Ref.get(journal)).pipe(Effect.ignore)
          yield* dropUnreferenced([record.source.sha256])
          yield* Effect.ignore(closed(removeMark(id)))
          yield* publish(new ExtensionRemoved({ extensionId: id }))
          return {
            operation: "remove",
            id,
            action: "removed",
            version: record.version,
            fromVersion: null,
            enabled: false,
            migrations: rolledBack,
            warnings
          } satisfies OperationResult
        }))

    // ---- artifacts -------------------------------------------------------------------------------

    /**
     * Drops every artifact no installed record references (kept by plans never applied, or left by a
     * crash between commit and clean-up) and the temporary files of puts older than an hour, under the
     * lock so that no install records one meanwhile (docs/operations.md "Artifacts").
     */
    const pruneArtifacts = (options: OperationOptions) =>
      withLockHeld(
        "artifacts:prune",
        options,
        Effect.gen(function*() {
          const referenced = new Set((yield* extensions.list).map((record) => record.source.sha256))
          const stored = yield* artifacts.list
          const removed = stored.filter((artifact) => !referenced.has(artifact.sha256))
          for (const artifact of removed) yield* artifacts.remove(artifact.sha256)
          const temporary = yield* artifacts.sweepTemporary(60 * 60 * 1000)
          return { removed, kept: stored.length - removed.length, temporary }
        })
      )

    return {
      add: (spec: SourceSpec, options: AddOptions) => closed(add(spec, options)),
      update: (id: string, spec: SourceSpec, options: Omit<AddOptions, "expectedId">) => closed(update(id, spec, options)),
      enable: (id: string, options: ToggleOptions) => closed(toggle("enable", id, options)),
      disable: (id: string, options: ToggleOptions) => closed(toggle("disable", id, options)),
      remove: (id: string, options: RemoveOptions) => closed(remove(id, options)),
      /** Re-reads a dev-linked folder (manifest, new migrations) and bumps its record; see refreshLink. */
      refreshLink: (id: string, options: OperationOptions) => closed(refreshLink(id, options)),
      configure: (id: string, values: Readonly<Record<string, unknown>>, options: OperationOptions) =>
        closed(configure(id, values, options)),
      /** Runs `effect` holding the operation lock; lifecycle operations inside it do not take it again. */
      withLock: <A, E, R>(operation: string, options: OperationOptions, effect: Effect.Effect<A, E, R>) =>
        withLockHeld(operation, options, effect).pipe(Effect.provide(platform)),
      recover: (actor: Actor) => closed(recover(actor)),
      pruneArtifacts: (options: OperationOptions) => closed(pruneArtifacts(options))
    } as const
  })
}) {}
