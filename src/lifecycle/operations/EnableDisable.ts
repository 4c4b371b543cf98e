import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ExtensionDisabled, ExtensionEnabled } from "../../domain/Events.js"
import { corruptReason, manifestOf } from "../../domain/Installed.js"
import { enablePreconditions, withdrawPreconditions } from "../../domain/Preconditions.js"
import { ExtensionsRepo } from "../../store/ExtensionsRepo.js"
import { StateGeneration } from "../../store/StateGeneration.js"
import { writeTransaction } from "../../store/Transaction.js"
import {
  currentStates,
  logWarnings,
  operate,
  type OperationOptions,
  type OperationResult,
  publish,
  recordActivity,
  refusedAs,
  requireInstalled
} from "../Operation.js"
import { uuid } from "../../system/Ids.js"

// enable and disable: a flag on the record, its activity row and the state generation in one
// transaction (no files move, so no journal). Enabling checks the requirements and dependencies;
// disabling is refused while enabled extensions depend on it (unless forced).

export interface ToggleOptions extends OperationOptions {
  readonly force?: boolean
}

export const toggle = (operation: "enable" | "disable", id: string, options: ToggleOptions) =>
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
      const installed = yield* currentStates
      const { warnings } = yield* refusedAs(operation, id, enable
        ? enablePreconditions(manifestOf(record)?.document, corruptReason(record), installed)
        : withdrawPreconditions("disable", id, installed, options.force === true))
      yield* logWarnings(warnings)
      yield* step(enable ? "enabling" : "disabling")
      const extensions = yield* ExtensionsRepo
      const stateGeneration = yield* StateGeneration
      yield* writeTransaction(
        yield* SqlClient.SqlClient,
        Effect.gen(function*() {
          yield* extensions.setEnabled(id, enable)
          yield* recordActivity(
            options,
            yield* uuid,
            { extensionId: id, action: enable ? "enabled" : "disabled", summary: enable ? "Enabled" : "Disabled" },
            warnings.length > 0 ? { forced: true } : {}
          )
          yield* stateGeneration.bump
        })
      )
      yield* publish(enable ? new ExtensionEnabled({ extensionId: id }) : new ExtensionDisabled({ extensionId: id }))
      return result(enable ? "enabled" : "disabled", warnings)
    }))
