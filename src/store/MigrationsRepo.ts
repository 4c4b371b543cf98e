import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Schema } from "effect"
import type { MigrationRecord } from "../domain/Installed.js"
import { storeError } from "./StoreError.js"
import { onFirstCall } from "../domain/OnFirstCall.js"

const MigrationRow = Schema.Struct({
  id: Schema.Number,
  extension_id: Schema.String,
  migration: Schema.String,
  batch: Schema.Number,
  ran_at: Schema.String
})

const decodeRows = onFirstCall(() => Schema.decodeUnknown(Schema.Array(MigrationRow)))

const toRecord = (row: typeof MigrationRow.Type): MigrationRecord => ({
  id: row.id,
  extensionId: row.extension_id,
  migration: row.migration,
  batch: row.batch,
  ranAt: row.ran_at
})

/** host_migrations: which migration of which extension ran in which batch. */
/** What MigrationsRepo is made of: the store's services are built together (store/Services.ts). */
export const makeMigrationsRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** The extension's recorded migrations, in the order they ran. */
  const listFor = (extensionId: string) =>
    sql`SELECT * FROM host_migrations WHERE extension_id = ${extensionId} ORDER BY batch, id`.pipe(
      Effect.flatMap(decodeRows),
      Effect.map((rows) => rows.map(toRecord)),
      Effect.mapError(storeError(`reading migrations of ${extensionId}`)),
      Effect.withSpan("MigrationsRepo.listFor")
    )

  const nextBatch = (extensionId: string) =>
    sql<{ batch: number | null }>`SELECT MAX(batch) AS batch FROM host_migrations WHERE extension_id = ${extensionId}`.pipe(
      Effect.map(([row]) => (row?.batch ?? 0) + 1),
      Effect.mapError(storeError(`reading the last batch of ${extensionId}`)),
      Effect.withSpan("MigrationsRepo.nextBatch")
    )

  const record = (extensionId: string, migration: string, batch: number) =>
    Effect.flatMap(DateTime.now, (now) =>
      sql`INSERT INTO host_migrations ${
        sql.insert({ extension_id: extensionId, migration, batch, ran_at: DateTime.formatIso(now) })
      }`).pipe(
      Effect.asVoid,
      Effect.mapError(storeError(`recording migration ${migration} of ${extensionId}`)),
      Effect.withSpan("MigrationsRepo.record")
    )

  const forget = (extensionId: string, migration: string) =>
    sql`DELETE FROM host_migrations WHERE extension_id = ${extensionId} AND migration = ${migration}`.pipe(
      Effect.asVoid,
      Effect.mapError(storeError(`forgetting migration ${migration} of ${extensionId}`)),
      Effect.withSpan("MigrationsRepo.forget")
    )

  return { listFor, nextBatch, record, forget } as const
})

export class MigrationsRepo extends Effect.Service<MigrationsRepo>()("host/MigrationsRepo", { effect: makeMigrationsRepo }) {}
