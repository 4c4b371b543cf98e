import { FileSystem, Path } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Option, Ref } from "effect"
import { Faults } from "../../config/Debug.js"
import { HostConfig } from "../../config/HostConfig.js"
import { ExtensionInstalled, ExtensionUpdated } from "../../domain/Events.js"
import { type ExtensionSource, type InstalledExtension, migrationsFolderOf } from "../../domain/Installed.js"
import { installPreconditions } from "../../domain/Preconditions.js"
import { Panel } from "../../panel/Panel.js"
import { afterDdl } from "../../store/Dialect.js"
import { ExtensionsRepo } from "../../store/ExtensionsRepo.js"
import { OperationRefused } from "../Errors.js"
import { migrateDownNamed, migrateUp } from "../Migrations.js"
import {
  currentStates,
  dropUnreferenced,
  type JournaledChange,
  logWarnings,
  newEntry,
  openJournal,
  operate,
  type OperationOptions,
  type OperationResult,
  publish,
  recordActivity,
  refusedAs,
  type Step
} from "../Operation.js"
import { describeSource, type SourceSpec, stageSource, type StagedExtension } from "../Source.js"
import { removeMark, writeMark } from "../TreeMarks.js"
import { uuid } from "../../system/Ids.js"
import { runtimeVersions } from "../../system/RuntimeVersions.js"

// add and update (docs/architecture.md "One install"): stage the source, check it, then one journaled
// change — migrate, switch the files in, record — and clean up. An update is an add over an installed
// extension that must already be there under the expected id.

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

type InstallOperation = "add" | "update"

/** What the checks found: the staged tree, what it replaces, and what the preconditions let through. */
interface Checked {
  readonly staged: StagedExtension
  readonly id: string
  readonly version: string
  readonly target: string
  readonly existing: Option.Option<InstalledExtension>
  readonly enabled: boolean
  readonly warnings: ReadonlyArray<string>
  /** Whether this records an update (of an installed extension) rather than an install. */
  readonly isUpdate: boolean
}

export const add = (spec: SourceSpec, options: AddOptions) =>
  operate("add", options.expectedId ?? describeSource(spec), options, (step) => install("add", spec, options, step))

export const update = (id: string, spec: SourceSpec, options: Omit<AddOptions, "expectedId">) =>
  operate("update", id, options, (step) => install("update", spec, { ...options, expectedId: id }, step))

const install = (operation: InstallOperation, spec: SourceSpec, options: AddOptions, step: Step) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const { paths } = yield* HostConfig
    const operationId = yield* uuid
    const journal = yield* openJournal(yield* newEntry({
      id: operationId,
      operation,
      extensionId: options.expectedId ?? describeSource(spec),
      target: "",
      staged: path.join(paths.staging, operationId),
      backup: path.join(paths.staging, `${operationId}.previous`),
      hadPrevious: false
    }))
    // An artifact this operation put in the store goes again when the operation fails.
    const added = yield* Ref.make<string | null>(null)
    const dropAdded = Effect.flatMap(Ref.get(added), (digest) => dropUnreferenced([digest]))

    return yield* Effect.gen(function*() {
      const checked = yield* stageAndCheck(operation, spec, options, step, journal, operationId, added)
      const migrations = yield* journal.commit(step, migrateAndRecord(options, step, journal, operationId, checked))
      yield* Ref.set(added, null)
      yield* afterCommit(options, checked)
      const { id, version, existing, enabled, warnings, isUpdate } = checked
      return {
        operation,
        id,
        action: isUpdate ? "updated" : "installed",
        version,
        fromVersion: Option.getOrNull(Option.map(existing, (record) => record.version)),
        enabled,
        migrations,
        warnings
      } satisfies OperationResult
    }).pipe(Effect.tapErrorCause(() => Effect.zipRight(journal.dropStaging, dropAdded)))
  })

/** Stages the source (journaled, so a crash leaves nothing behind) and checks it against what is installed. */
const stageAndCheck = (
  operation: InstallOperation,
  spec: SourceSpec,
  options: AddOptions,
  step: Step,
  journal: JournaledChange,
  operationId: string,
  added: Ref.Ref<string | null>
) =>
  Effect.gen(function*() {
    const { config, paths } = yield* HostConfig
    const path = yield* Path.Path
    const { reached: crashPoint } = yield* Faults
    yield* step(`verifying and staging ${describeSource(spec)}`)
    yield* journal.advance("begin")
    const staged = yield* stageSource(spec, operationId, config.version)
    if (staged.artifactAdded) yield* Ref.set(added, staged.source.sha256)
    const id = staged.manifest.id
    const version = staged.manifest.version
    const target = path.join(paths.extensions, ...id.split("/"))
    const hadPrevious = yield* Effect.flatMap(FileSystem.FileSystem, (fs) => fs.exists(target)).pipe(Effect.orElseSucceed(() => false))
    yield* journal.advance("staged", { extensionId: id, target, hadPrevious })
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
    const existing = yield* Effect.flatMap(ExtensionsRepo, (extensions) => extensions.find(id))
    const panel = yield* Panel
    const { enabled, warnings } = yield* refusedAs(operation, id, installPreconditions({
      operation,
      document: staged.manifest.document,
      source: describeSource(spec),
      existing: Option.getOrUndefined(existing),
      force: options.force === true,
      disabled: options.disabled === true,
      versions: runtimeVersions(config.version, panel.info),
      installed: yield* currentStates
    }))
    yield* logWarnings(warnings)
    const isUpdate = Option.isSome(existing) && (operation === "update" || existing.value.version !== version)
    return { staged, id, version, target, existing, enabled, warnings, isUpdate } satisfies Checked
  })

/** The transaction: roll back what a health gate names, run the new migrations, switch the files, record. */
const migrateAndRecord = (
  options: AddOptions,
  step: Step,
  journal: JournaledChange,
  operationId: string,
  { staged, id, version, target, existing, enabled, isUpdate }: Checked
) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const sql = yield* SqlClient.SqlClient
    const { reached: crashPoint } = yield* Faults
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
        journal.upStarting(staged.directory)
      )
    yield* afterDdl(sql)
    yield* crashPoint("migrated")
    yield* step("switching files")
    // A dev link is served from the author's folder itself: the installed path only points there.
    yield* journal.switchFiles({ staged: staged.directory, link: staged.source.type === "dev-link" })
    yield* step("recording")
    yield* Effect.flatMap(ExtensionsRepo, (extensions) =>
      extensions.save({
        extensionId: id,
        name: staged.manifest.document.name,
        version,
        enabled,
        manifest: staged.manifest.document,
        // The recorded sha256 always names the artifact installed (a rollback keeps the original's
        // type and ref, but its files come from the kept copy, stored under its own digest).
        source: options.recordSource === undefined ? staged.source : { ...options.recordSource, sha256: staged.source.sha256 },
        signature: staged.signature
      }))
    const fromVersion = Option.map(existing, (record) => record.version)
    yield* recordActivity(options, operationId, {
      extensionId: id,
      action: isUpdate ? "updated" : "installed",
      summary: !isUpdate
        ? `Installed v${version}`
        : Option.getOrThrow(fromVersion) === version
        ? `Reinstalled v${version}`
        : `Updated ${Option.getOrThrow(fromVersion)} → ${version}`
    }, {
      version,
      source: staged.source,
      migrations: ran,
      ...(options.noMigrate === true ? { no_migrate: true } : {})
    })
    return ran
  })

/** After the commit: the replaced artifact goes, the tree mark follows the record, listeners hear of it. */
const afterCommit = (options: AddOptions, { staged, id, version, existing, isUpdate }: Checked) =>
  Effect.gen(function*() {
    const previousArtifact = Option.match(existing, { onNone: () => null, onSome: (record) => record.source.sha256 })
    if (previousArtifact !== staged.source.sha256) yield* dropUnreferenced([previousArtifact])
    // This root's tree is now the recorded archive: a server on this root has nothing to converge.
    const recorded = options.recordSource ?? staged.source
    yield* Effect.ignore(
      recorded.sha256 === null || recorded.type === "dev-link" ? removeMark(id) : writeMark(id, { sha256: recorded.sha256, version })
    )
    yield* publish(
      Option.isSome(existing) && isUpdate
        ? new ExtensionUpdated({ extensionId: id, fromVersion: existing.value.version, toVersion: version })
        : new ExtensionInstalled({ extensionId: id, version })
    )
  })
