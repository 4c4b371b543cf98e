import { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import { manifestOf } from "../../domain/Installed.js"
import { validateSettingValues } from "../../domain/Settings.js"
import { SettingsRepo } from "../../store/SettingsRepo.js"
import { StateGeneration } from "../../store/StateGeneration.js"
import { writeTransaction } from "../../store/Transaction.js"
import { OperationRefused } from "../Errors.js"
import { operate, type OperationOptions, type OperationResult, requireInstalled } from "../Operation.js"

/**
 * Writes settings values, each validated against the extension's normalized settings schema. Keys
 * not given keep their values. Settings have no activity action of their own (docs/architecture.md "Store").
 */
export const configure = (id: string, values: Readonly<Record<string, unknown>>, options: OperationOptions) =>
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
      const settings = yield* SettingsRepo
      yield* writeTransaction(
        yield* SqlClient.SqlClient,
        Effect.zipRight(
          Effect.forEach(cleared, (key) => settings.remove(id, key), { discard: true }),
          Effect.forEach(Object.entries(accepted), ([key, value]) => settings.put(id, key, value), { discard: true })
        ).pipe(Effect.zipRight(Effect.flatMap(StateGeneration, (generation) => generation.bump)))
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
