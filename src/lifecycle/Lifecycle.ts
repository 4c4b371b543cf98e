import { FileSystem, Path } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { SqlClient } from "@effect/sql"
import { Context, Duration, Effect, Either, Option, Ref, Schema } from "effect"
import semver from "semver"
import { randomUUID } from "node:crypto"
import { HostConfig } from "../config/HostConfig.js"
import {
  ExtensionDisabled,
  ExtensionEnabled,
  ExtensionInstalled,
  ExtensionRemoved,
  ExtensionUpdated,
  type LifecycleEvent
} from "../domain/Events.js"
import type { Actor, ExtensionSource, InstalledExtension } from "../domain/Installed.js"
import type { OperationLock } from "../domain/Lock.js"
import { decodeManifest, ManifestDocument } from "../domain/Manifest.js"
import { validateSettingValues } from "../domain/Settings.js"
import {
  checkRequires,
  dependencyProblems,
  dependentsOutOfRange,
  enabledDependents,
  type InstalledState
} from "../domain/Rules.js"
import { Panel } from "../panel/Panel.js"
import { ActivityRepo } from "../store/ActivityRepo.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { MigrationsRepo } from "../store/MigrationsRepo.js"
import { LockHeld, OperationLocks } from "../store/OperationLock.js"
import { SettingsRepo } from "../store/SettingsRepo.js"
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
import { describeSource, type SourceSpec, stageSource, type StagedExtension } from "./Source.js"

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

/** Test hook: `HOST_TEST_CRASH_AT=<step>` kills the process (SIGKILL) when the operation reaches that step. */
const crashPoint = (step: string) =>
  Effect.sync(() => {
    if (process.env.HOST_TEST_CRASH_AT === step) process.kill(process.pid, "SIGKILL")
  })

const decodeDocument = Schema.decodeUnknownOption(ManifestDocument)

const installedStates = (extensions: ReadonlyArray<InstalledExtension>): ReadonlyMap<string, InstalledState> =>
  new Map(extensions.map((extension) => [extension.extensionId, {
    version: extension.version,
    enabled: extension.enabled,
    dependencies: Option.match(decodeDocument(extension.manifest), {
      onNone: () => ({}),
      onSome: (document) => document.dependencies ?? {}
    })
  }]))

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
  RegistryServiceMissing: "SourceRejected",
  // the registry could not be reached
  RegistryFetchFailed: "SourceUnreachable",
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
  error: { readonly _tag: keyof typeof kindByTag; readonly message: string }
): OperationFailed =>
  new failureKinds[kindByTag[error._tag]]({
    operation,
    extensionId,
    step,
    reason: error._tag,
    detail: error.message === "" ? error._tag : error.message
  })

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
    const events = yield* LifecycleEvents
    const panel = yield* Panel
    const loader = yield* ModuleLoader
    const provideLoader = Effect.provideService(ModuleLoader, loader)
    // The journal and staging helpers read these from the context; methods get them from the layer.
    type Internal = FileSystem.FileSystem | Path.Path | HostConfig | SqlClient.SqlClient | MigrationsRepo | ActivityRepo | OperationLocks
    const platform = yield* Effect.context<Internal>()
    const closed = <A, E>(effect: Effect.Effect<A, E, Internal>) => Effect.provide(effect, platform)
    const hostVersion = config.version

    const targetOf = (id: string) => path.join(paths.extensions, ...id.split("/"))
    const exists = (file: string) => fs.exists(file).pipe(Effect.orElseSucceed(() => false))

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
              : Effect.flatMap(Ref.get(current), (stepName) => Effect.fail(classify(operation, extensionId, stepName, error))))
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
        const operationId = randomUUID()
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
          startedAt: new Date().toISOString()
        })
        const journalStep = (next: JournalStep, patch: Partial<JournalEntry> = {}) =>
          Effect.tap(Ref.updateAndGet(journal, (entry) => ({ ...entry, ...patch, step: next })), (entry) => writeJournal(entry))
        // Until the transaction starts only the staging folder and the journal exist: drop them on failure.
        const dropStaging = Effect.flatMap(Ref.get(journal), (entry) =>
          entry.step === "begin" || entry.step === "staged" ? restoreFiles(entry) : Effect.void).pipe(Effect.ignore)

        return yield* Effect.gen(function*() {
          yield* step(`verifying and staging ${describeSource(spec)}`)
          yield* journalStep("begin")
          const staged: StagedExtension = yield* stageSource(spec, operationId, hostVersion)
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
          if (operation === "add" && Option.isSome(existing) && options.force !== true) {
            return yield* new OperationRefused({
              operation,
              extensionId: id,
              reason: "already-installed",
              detail: `already installed (v${existing.value.version}); use host update or --force`,
              hint: `use host update ${id} --source ${describeSource(spec)} or host add --force`
            })
          }
          if (operation === "update" && Option.isNone(existing)) {
            return yield* new OperationRefused({
              operation,
              extensionId: id,
              reason: "not-installed",
              detail: "it is not installed",
              hint: `use host add ${describeSource(spec)}`
            })
          }
          // An update moves forward; the same version again or an older one is asked for with --force.
          if (
            operation === "update" && Option.isSome(existing) && options.force !== true &&
            semver.valid(version) !== null && semver.valid(existing.value.version) !== null && semver.lte(version, existing.value.version)
          ) {
            return yield* new OperationRefused({
              operation,
              extensionId: id,
              reason: "not-newer",
              detail: version === existing.value.version
                ? `already at v${version}; use --force to reinstall it`
                : `v${version} is older than the installed v${existing.value.version}; use --force to downgrade`
            })
          }
          const requirements = checkRequires(staged.manifest.document, {
            host: hostVersion,
            panel: panel.info.version,
            php: panel.info.php,
            node: process.versions.node
          })
          if (requirements.unmet.length > 0) {
            return yield* new OperationRefused({ operation, extensionId: id, reason: "requirements", detail: requirements.unmet.join("; ") })
          }
          const enabled = Option.match(existing, {
            onNone: () => options.disabled !== true,
            onSome: (record) => (options.disabled === true ? false : record.enabled)
          })
          const installed = installedStates(yield* extensions.list)
          if (enabled) {
            const problems = dependencyProblems(staged.manifest.document, installed)
            if (problems.length > 0) {
              return yield* new OperationRefused({
                operation,
                extensionId: id,
                reason: "dependencies",
                detail: problems.join("; "),
                hint: "install and enable its dependencies first, or add it with --disabled"
              })
            }
          }
          const brokenDependents = dependentsOutOfRange(id, version, installed)
          if (brokenDependents.length > 0 && options.force !== true) {
            return yield* new OperationRefused({
              operation,
              extensionId: id,
              reason: "dependents",
              detail: `enabled extensions need another version of it: ${brokenDependents.join(", ")}`,
              hint: "use --force to install it anyway"
            })
          }
          const warnings = [
            ...requirements.warnings,
            ...(brokenDependents.length > 0 ? [`dependents that need another version: ${brokenDependents.join(", ")}`] : [])
          ]
          for (const warning of warnings) yield* Effect.logWarning(warning)

          const fromVersion = Option.map(existing, (record) => record.version)
          const isUpdate = Option.isSome(existing) && (operation === "update" || existing.value.version !== version)
          const migrations = yield* writeTransaction(sql,
            Effect.gen(function*() {
              if (options.revertMigrations !== undefined && options.revertMigrations.length > 0 && Option.isSome(existing)) {
                yield* step(`rolling back ${options.revertMigrations.length} migration(s) of v${existing.value.version}`)
                const folder = Option.match(decodeDocument(existing.value.manifest), {
                  onNone: () => "database/migrations",
                  onSome: (document) => document.backend?.migrations ?? "database/migrations"
                })
                yield* migrateDownNamed(id, path.join(target, folder), options.revertMigrations)
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
                source: options.recordSource ?? staged.source,
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
        }).pipe(Effect.tapErrorCause(() => dropStaging))
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
          const warnings: Array<string> = []
          if (enable) {
            const document = decodeDocument(record.manifest)
            const problems = Option.match(document, {
              onNone: () => ["its stored manifest is unreadable; reinstall it"],
              onSome: (doc) => dependencyProblems(doc, installed)
            })
            if (problems.length > 0) {
              return yield* new OperationRefused({ operation, extensionId: id, reason: "dependencies", detail: problems.join("; ") })
            }
          } else {
            const dependents = enabledDependents(id, installed)
            if (dependents.length > 0 && options.force !== true) {
              return yield* new OperationRefused({
                operation,
                extensionId: id,
                reason: "dependents",
                detail: `enabled extensions depend on it: ${dependents.join(", ")}`,
                hint: "disable them first, or use --force"
              })
            }
            if (dependents.length > 0) warnings.push(`enabled dependents will lose it: ${dependents.join(", ")}`)
          }
          for (const warning of warnings) yield* Effect.logWarning(warning)
          yield* step(enable ? "enabling" : "disabling")
          yield* writeTransaction(sql,
            Effect.gen(function*() {
              yield* extensions.setEnabled(id, enable)
              yield* activity.append({
                extensionId: id,
                action: enable ? "enabled" : "disabled",
                summary: enable ? "Enabled" : "Disabled",
                context: activityContext(options, randomUUID(), warnings.length > 0 ? { forced: true } : {})
              })
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
          const fields = decodeManifest(record.manifest).manifest?.settings ?? []
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
            )
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
          const installed = installedStates(yield* extensions.list)
          const dependents = enabledDependents(id, installed)
          if (dependents.length > 0 && options.force !== true) {
            return yield* new OperationRefused({
              operation: "remove",
              extensionId: id,
              reason: "dependents",
              detail: `enabled extensions depend on it: ${dependents.join(", ")}`,
              hint: "remove or disable them first, or use --force"
            })
          }
          const warnings = dependents.length > 0 ? [`enabled dependents will lose it: ${dependents.join(", ")}`] : []
          for (const warning of warnings) yield* Effect.logWarning(warning)
          const operationId = randomUUID()
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
            startedAt: new Date().toISOString()
          })
          const journalStep = (next: JournalStep) =>
            Effect.tap(Ref.updateAndGet(journal, (entry) => ({ ...entry, step: next })), (entry) => writeJournal(entry))
          yield* journalStep("begin")
          const migrationsFolder = Option.match(decodeDocument(record.manifest), {
            onNone: () => "database/migrations",
            onSome: (document) => document.backend?.migrations ?? "database/migrations"
          })
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
      recover: (actor: Actor) => closed(recover(actor))
    } as const
  })
}) {}
