import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { coreExtensionId } from "../domain/Installed.js"
import { isUniqueViolation } from "./StoreError.js"
import { writeTransaction } from "./Transaction.js"

// The framework's own schema: exactly four tables, versioned in host_migrations under `host/core`.
// Written once for every dialect; only the auto-increment key differs.

type Migration = (sql: SqlClient.SqlClient) => Effect.Effect<unknown, SqlError>

const primaryKey = (sql: SqlClient.SqlClient) =>
  sql.unsafe(
    sql.onDialectOrElse({
      sqlite: () => "INTEGER PRIMARY KEY",
      pg: () => "BIGSERIAL PRIMARY KEY",
      mysql: () => "BIGINT AUTO_INCREMENT PRIMARY KEY",
      orElse: () => "INTEGER PRIMARY KEY"
    })
  )

const createMigrationsTable = (sql: SqlClient.SqlClient) =>
  sql`CREATE TABLE IF NOT EXISTS host_migrations (
    id ${primaryKey(sql)},
    extension_id VARCHAR(191) NOT NULL,
    migration VARCHAR(191) NOT NULL,
    batch INTEGER NOT NULL,
    ran_at VARCHAR(32) NOT NULL,
    UNIQUE (extension_id, migration)
  )`

/** Framework migrations, in order. Loaded from this record (not a directory) so the CLI bundles. */
export const frameworkMigrations: ReadonlyArray<readonly [string, Migration]> = [
  [
    "0001_create_host_tables",
    (sql) =>
      Effect.all([
        createMigrationsTable(sql),
        sql`CREATE TABLE IF NOT EXISTS host_extensions (
          id ${primaryKey(sql)},
          extension_id VARCHAR(191) NOT NULL UNIQUE,
          name VARCHAR(255) NOT NULL,
          version VARCHAR(64) NOT NULL,
          enabled BOOLEAN NOT NULL,
          manifest TEXT NOT NULL,
          source TEXT NOT NULL,
          signature TEXT NOT NULL,
          created_at VARCHAR(32) NOT NULL,
          updated_at VARCHAR(32) NOT NULL
        )`,
        sql`CREATE TABLE IF NOT EXISTS host_settings (
          id ${primaryKey(sql)},
          extension_id VARCHAR(191) NOT NULL,
          ${sql("key")} VARCHAR(191) NOT NULL,
          value TEXT NOT NULL,
          created_at VARCHAR(32) NOT NULL,
          updated_at VARCHAR(32) NOT NULL,
          UNIQUE (extension_id, ${sql("key")})
        )`,
        sql`CREATE TABLE IF NOT EXISTS host_activity_logs (
          id ${primaryKey(sql)},
          extension_id VARCHAR(191) NOT NULL,
          action VARCHAR(32) NOT NULL,
          summary VARCHAR(255) NOT NULL,
          context TEXT NOT NULL,
          created_at VARCHAR(32) NOT NULL
        )`,
        sql`CREATE INDEX IF NOT EXISTS host_activity_logs_extension_id ON host_activity_logs (extension_id)`
      ], { discard: true })
  ]
]

/**
 * Brings the framework schema up to date. Safe to run twice and from two processes at once: every
 * statement is idempotent, each migration runs under the write lock, and a migration recorded meanwhile
 * by another process (unique violation on its host_migrations row) rolls back this copy and counts as done.
 */
export const ensureSchema = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* createMigrationsTable(sql)
  const applied = new Set(
    (yield* sql<{ migration: string }>`SELECT migration FROM host_migrations WHERE extension_id = ${coreExtensionId}`)
      .map((row) => row.migration)
  )
  for (const [name, migrate] of frameworkMigrations) {
    if (applied.has(name)) continue
    yield* writeTransaction(sql,
      Effect.gen(function*() {
        yield* migrate(sql)
        const [row] = yield* sql<{ batch: number | null }>`
          SELECT MAX(batch) AS batch FROM host_migrations WHERE extension_id = ${coreExtensionId}`
        yield* sql`INSERT INTO host_migrations (extension_id, migration, batch, ran_at)
          VALUES (${coreExtensionId}, ${name}, ${(row?.batch ?? 0) + 1}, ${new Date().toISOString()})`
      })
    ).pipe(Effect.catchIf(isUniqueViolation, () => Effect.void))
  }
}).pipe(Effect.withSpan("Store.ensureSchema"))
