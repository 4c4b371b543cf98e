import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { DateTime, Effect } from "effect"
import { coreExtensionId } from "../domain/Installed.js"
import { columnTypes, dialectOf, withSchemaLock, writeTransaction } from "./Dialect.js"
import { isUniqueViolation } from "./StoreError.js"

// The framework's own schema: exactly four tables, versioned in host_migrations under `host/core`.
// Written once for every dialect; the column types come from Dialect (docs/decisions.md, "Column types
// per dialect").

type Migration = (sql: SqlClient.SqlClient) => Effect.Effect<unknown, SqlError>

const types = (sql: SqlClient.SqlClient) => columnTypes(dialectOf(sql))

const createMigrationsTable = (sql: SqlClient.SqlClient) =>
  sql`CREATE TABLE IF NOT EXISTS host_migrations (
    id ${sql.unsafe(types(sql).id)},
    extension_id VARCHAR(191) NOT NULL,
    migration VARCHAR(191) NOT NULL,
    batch INTEGER NOT NULL,
    ran_at ${sql.unsafe(types(sql).timestamp)} NOT NULL,
    UNIQUE (extension_id, migration)
  )${sql.unsafe(types(sql).tableOptions)}`

/** Framework migrations, in order. Loaded from this record (not a directory) so the CLI bundles. */
export const frameworkMigrations: ReadonlyArray<readonly [string, Migration]> = [
  [
    "0001_create_host_tables",
    (sql) => {
      const { bool, id, json, tableOptions, timestamp } = types(sql)
      const t = sql.unsafe
      // MySQL has no CREATE INDEX IF NOT EXISTS; the index is part of its CREATE TABLE instead.
      const inlineIndex = dialectOf(sql) === "mysql"
      return Effect.all([
        createMigrationsTable(sql),
        sql`CREATE TABLE IF NOT EXISTS host_extensions (
          id ${t(id)},
          extension_id VARCHAR(191) NOT NULL UNIQUE,
          name VARCHAR(255) NOT NULL,
          version VARCHAR(64) NOT NULL,
          enabled ${t(bool)} NOT NULL,
          manifest ${t(json("manifest"))},
          source ${t(json("source"))},
          signature ${t(json("signature"))},
          created_at ${t(timestamp)} NOT NULL,
          updated_at ${t(timestamp)} NOT NULL
        )${t(tableOptions)}`,
        sql`CREATE TABLE IF NOT EXISTS host_settings (
          id ${t(id)},
          extension_id VARCHAR(191) NOT NULL,
          ${sql("key")} VARCHAR(191) NOT NULL,
          value ${t(json("value"))},
          created_at ${t(timestamp)} NOT NULL,
          updated_at ${t(timestamp)} NOT NULL,
          UNIQUE (extension_id, ${sql("key")})
        )${t(tableOptions)}`,
        sql`CREATE TABLE IF NOT EXISTS host_activity_logs (
          id ${t(id)},
          extension_id VARCHAR(191) NOT NULL,
          action VARCHAR(32) NOT NULL,
          summary VARCHAR(255) NOT NULL,
          context ${t(json("context"))},
          created_at ${t(timestamp)} NOT NULL${t(inlineIndex ? ",\n          INDEX host_activity_logs_extension_id (extension_id)" : "")}
        )${t(tableOptions)}`,
        inlineIndex
          ? Effect.void
          : sql`CREATE INDEX IF NOT EXISTS host_activity_logs_extension_id ON host_activity_logs (extension_id)`
      ], { discard: true })
    }
  ]
]

const appliedCore = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<{ migration: string }>`SELECT migration FROM host_migrations WHERE extension_id = ${coreExtensionId}`,
    (rows) => new Set(rows.map((row) => row.migration))
  )

const recordCore = (sql: SqlClient.SqlClient, name: string) =>
  Effect.flatMap(
    sql<{ batch: number | null }>`SELECT MAX(batch) AS batch FROM host_migrations WHERE extension_id = ${coreExtensionId}`,
    ([row]) =>
      Effect.flatMap(DateTime.now, (now) =>
        sql`INSERT INTO host_migrations (extension_id, migration, batch, ran_at)
          VALUES (${coreExtensionId}, ${name}, ${(row?.batch ?? 0) + 1}, ${DateTime.formatIso(now)})`)
  )

/**
 * Brings the framework schema up to date. Safe to run twice and from two processes at once: every
 * statement is idempotent, each migration runs under the write lock, and a migration recorded meanwhile
 * by another process (unique violation on its host_migrations row) rolls back this copy and counts as done.
 */
export const ensureSchema = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  if (dialectOf(sql) !== "sqlite") {
    // One advisory lock around the whole check: two CREATE TABLE IF NOT EXISTS at once can still collide
    // on a server (PostgreSQL's catalog), and MySQL commits each DDL statement, so no transaction helps.
    return yield* withSchemaLock(sql, "host_schema", Effect.gen(function*() {
      yield* createMigrationsTable(sql)
      for (const [name, migrate] of frameworkMigrations) {
        if ((yield* appliedCore(sql)).has(name)) continue
        yield* migrate(sql)
        yield* recordCore(sql, name)
      }
    }))
  }
  // SQLite: each migration in a transaction that takes the write lock first; a copy recorded meanwhile by
  // another process (unique violation on its host_migrations row) rolls back and counts as done.
  yield* createMigrationsTable(sql)
  const applied = yield* appliedCore(sql)
  for (const [name, migrate] of frameworkMigrations) {
    if (applied.has(name)) continue
    yield* writeTransaction(sql, Effect.zipRight(migrate(sql), recordCore(sql, name))).pipe(
      Effect.catchIf(isUniqueViolation, () => Effect.void)
    )
  }
}).pipe(Effect.withSpan("Store.ensureSchema"))
