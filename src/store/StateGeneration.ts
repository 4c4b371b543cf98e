import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Option, Schema } from "effect"
import { coreExtensionId } from "../domain/Installed.js"
import { isUniqueViolation, storeError } from "./StoreError.js"
import { onFirstCall } from "../domain/OnFirstCall.js"

// The state generation (docs/operations.md "Running replicas"): one `host/core` row in host_settings whose
// value is a number that every committed operation raises inside its own transaction. A server polls it
// (one row by its unique key, so the poll costs next to nothing) and converges its files and runtime only
// when it moved: the CLI beside it, or another replica on the same database, changed something.

export const stateGenerationKey = "state_generation"

const Row = Schema.Struct({ value: Schema.NumberFromString })
const decodeRows = onFirstCall(() => Schema.decodeUnknown(Schema.Array(Row)))

/** What StateGeneration is made of: the store's services are built together (store/Services.ts). */
export const makeStateGeneration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const key = sql("key")

  /** The generation now: 0 before the first operation committed. */
  const current = sql`SELECT value FROM host_settings WHERE extension_id = ${coreExtensionId} AND ${key} = ${stateGenerationKey}`.pipe(
    Effect.flatMap(decodeRows),
    Effect.map((rows) => Option.match(Option.fromNullable(rows[0]), { onNone: () => 0, onSome: (row) => row.value })),
    Effect.mapError(storeError("reading the state generation"))
  )

  // The value column holds JSON text, so the number is raised in SQL and written back as text: no
  // read-then-write race even if two transactions raised it at once (operations hold the lock anyway).
  const raise = sql.onDialectOrElse({
    pg: () => sql`(CAST(value AS BIGINT) + 1)::text`,
    mysql: () => sql`CAST(CAST(value AS SIGNED) + 1 AS CHAR)`,
    orElse: () => sql`CAST(CAST(value AS INTEGER) + 1 AS TEXT)`
  })

  /**
   * Raises the generation by one. Call it inside the transaction of the operation it announces, so
   * the new number is seen exactly when the operation's rows are.
   */
  const bump = Effect.gen(function*() {
    const now = DateTime.formatIso(yield* DateTime.now)
    const update = sql`UPDATE host_settings SET value = ${raise}, updated_at = ${now}
                       WHERE extension_id = ${coreExtensionId} AND ${key} = ${stateGenerationKey}`
    const exists = (yield* sql`SELECT id FROM host_settings WHERE extension_id = ${coreExtensionId} AND ${key} = ${stateGenerationKey}`).length > 0
    if (exists) return yield* update
    // The first operation ever: the row appears with 1. Should another process insert it first, raise theirs.
    yield* sql`INSERT INTO host_settings ${
      sql.insert({ extension_id: coreExtensionId, key: stateGenerationKey, value: "1", created_at: now, updated_at: now })
    }`.pipe(Effect.catchIf(isUniqueViolation, () => update))
  }).pipe(Effect.asVoid, Effect.mapError(storeError("raising the state generation")), Effect.withSpan("StateGeneration.bump"))

  return { current, bump } as const
})

export class StateGeneration extends Effect.Service<StateGeneration>()("host/StateGeneration", { effect: makeStateGeneration }) {}
