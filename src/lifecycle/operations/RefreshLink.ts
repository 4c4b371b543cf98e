import { Path } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { HostConfig } from "../../config/HostConfig.js"
import { ExtensionsRepo } from "../../store/ExtensionsRepo.js"
import { StateGeneration } from "../../store/StateGeneration.js"
import { writeTransaction } from "../../store/Transaction.js"
import { OperationRefused } from "../Errors.js"
import { migrateUp } from "../Migrations.js"
import { operate, type OperationOptions, type OperationResult, requireInstalled } from "../Operation.js"
import { stageSource } from "../Source.js"

/**
 * `host dev --watch` after a saved change: re-reads the linked folder's manifest, runs migrations it
 * added, and saves the record. The new updated_at is what makes a running server swap its runtime
 * (recompiling the backend) and the bridge reload the bundle. No activity row: saves are not events,
 * and no journal: the files stay where the author keeps them.
 */
export const refreshLink = (id: string, options: OperationOptions) =>
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
      const { config } = yield* HostConfig
      const staged = yield* stageSource({ _tag: "DevLink", path: record.source.ref }, id, config.version)
      if (staged.manifest.id !== id) {
        return yield* new OperationRefused({
          operation: "update",
          extensionId: id,
          reason: "id-mismatch",
          detail: `${record.source.ref} now holds ${staged.manifest.id}`,
          hint: `host dev ${record.source.ref} --unlink, then link it again`
        })
      }
      const path = yield* Path.Path
      const extensions = yield* ExtensionsRepo
      const stateGeneration = yield* StateGeneration
      const migrations = yield* writeTransaction(
        yield* SqlClient.SqlClient,
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
        })
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
