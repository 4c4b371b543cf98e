import { FileSystem, Path } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Faults } from "../../config/Debug.js"
import { HostConfig } from "../../config/HostConfig.js"
import { ExtensionRemoved } from "../../domain/Events.js"
import { type InstalledExtension, migrationsFolderOf } from "../../domain/Installed.js"
import { withdrawPreconditions } from "../../domain/Preconditions.js"
import { afterDdl } from "../../store/Dialect.js"
import { ExtensionsRepo } from "../../store/ExtensionsRepo.js"
import { SettingsRepo } from "../../store/SettingsRepo.js"
import { migrateDownAll } from "../Migrations.js"
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
  requireInstalled,
  type Step
} from "../Operation.js"
import { removeMark } from "../TreeMarks.js"
import { uuid } from "../../system/Ids.js"

// remove: one journaled change — roll the extension's migrations back (unless --keep-data), move its
// files aside, drop its record — then clean up. Refused while enabled extensions depend on it (unless forced).

export interface RemoveOptions extends OperationOptions {
  readonly keepData?: boolean
  readonly force?: boolean
}

export const remove = (id: string, options: RemoveOptions) =>
  operate("remove", id, options, (step) =>
    Effect.gen(function*() {
      const record = yield* requireInstalled("remove", id)
      const { warnings } = yield* refusedAs("remove", id, withdrawPreconditions("remove", id, yield* currentStates, options.force === true))
      yield* logWarnings(warnings)
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const { paths } = yield* HostConfig
      const operationId = yield* uuid
      const target = path.join(paths.extensions, ...id.split("/"))
      const journal = yield* openJournal(yield* newEntry({
        id: operationId,
        operation: "remove",
        extensionId: id,
        target,
        staged: null,
        backup: path.join(paths.staging, `${operationId}.removed`),
        hadPrevious: yield* fs.exists(target).pipe(Effect.orElseSucceed(() => false))
      }))
      yield* journal.advance("begin")
      const rolledBack = yield* journal.commit(step, revertAndForget(id, record, options, step, journal, operationId))
      yield* dropUnreferenced([record.source.sha256])
      yield* Effect.ignore(removeMark(id))
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

/** The transaction: migrations down (or kept), files aside, record and settings gone, activity written. */
const revertAndForget = (
  id: string,
  record: InstalledExtension,
  options: RemoveOptions,
  step: Step,
  journal: JournaledChange,
  operationId: string
) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const sql = yield* SqlClient.SqlClient
    const { reached: crashPoint } = yield* Faults
    const { target } = yield* journal.entry
    let reverted: ReadonlyArray<string> = []
    if (options.keepData !== true) {
      yield* step("rolling back migrations")
      reverted = yield* migrateDownAll(id, path.join(target, migrationsFolderOf(record)), journal.downStarting(target))
      yield* afterDdl(sql)
      yield* Effect.flatMap(SettingsRepo, (settings) => settings.removeAll(id))
    } else {
      yield* step("keeping tables, migration records and settings (--keep-data)")
    }
    yield* crashPoint("migrated")
    yield* step("removing files")
    yield* journal.switchFiles()
    yield* step("recording")
    yield* Effect.flatMap(ExtensionsRepo, (extensions) => extensions.remove(id))
    yield* recordActivity(options, operationId, { extensionId: id, action: "removed", summary: "Removed" }, {
      version: record.version,
      keep_data: options.keepData === true,
      migrations: reverted
    })
    return reverted
  })
