import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import { afterEach, beforeEach, describe } from "vitest"
import { clientLayer, type DatabaseTarget, type DialectName } from "../../src/store/Dialect.js"
import { layerFor } from "../../src/store/Database.js"
import { servers } from "./database-servers.js"

// Runs a suite on SQLite, and on MariaDB/MySQL and PostgreSQL when HOST_TEST_MYSQL_URL / HOST_TEST_PG_URL
// name a server (docs/operations.md). Each test gets a database of its own: a SQLite file inside the panel
// root, or a server database created before the test and dropped after it.

export interface TestDatabase {
  readonly dialect: DialectName
  /** Environment for `host` child processes: HOST_DATABASE_URL for a server, nothing for SQLite. */
  readonly env: Readonly<Record<string, string>>
  /** Where the database of a panel root is (the SQLite file lives inside the root). */
  readonly target: (root: string) => DatabaseTarget
  /** The `database` URL for a root (the one `host` uses). */
  readonly url: (root: string) => string
  /** Runs statements on the database of `root` and returns the last one's rows. */
  readonly query: <Row = Record<string, unknown>>(root: string, text: string, params?: ReadonlyArray<unknown>) => Promise<ReadonlyArray<Row>>
  /** The names of the tables in the database, sorted. */
  readonly tables: (root: string) => Promise<ReadonlyArray<string>>
  /** What an admin would see in the four tables. */
  readonly inspect: (root: string) => Promise<Inspection>
  /** A client (schema in place) for Effect tests. */
  readonly layer: (root: string) => Layer.Layer<SqlClient.SqlClient, unknown>
}

export interface Inspection {
  readonly tables: ReadonlyArray<string>
  readonly extensions: ReadonlyArray<{ extension_id: string; version: string; enabled: number }>
  readonly migrations: ReadonlyArray<{ extension_id: string; migration: string; batch: number }>
  readonly activity: ReadonlyArray<{ extension_id: string; action: string; summary: string; context: string }>
  readonly settings: ReadonlyArray<{ extension_id: string; key: string; value: string }>
}

/** The dialects this run covers: SQLite always, a server when its variable is set. */
export const testDialects = (): ReadonlyArray<DialectName> => [
  "sqlite",
  ...servers.filter((server) => (process.env[server.env] ?? "") !== "").map((server) => server.dialect)
]

const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>, target: DatabaseTarget) =>
  Effect.runPromise(Effect.scoped(Effect.provide(effect, clientLayer(target).pipe(Layer.provide(NodeContext.layer)))))

const queryOn = <Row>(target: DatabaseTarget, text: string, params: ReadonlyArray<unknown> = []) =>
  run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Row & object>(text, params)), target) as Promise<ReadonlyArray<Row>>

const tablesQuery: Record<DialectName, string> = {
  sqlite: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
  mysql: "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name",
  pg: "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name"
}

const withDatabase = (url: string, database: string): string => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

const adminStatement = (dialect: "mysql" | "pg", action: "create" | "drop", name: string) =>
  action === "create"
    ? `CREATE DATABASE ${name}`
    : dialect === "pg"
    ? `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`
    : `DROP DATABASE IF EXISTS ${name}`

let counter = 0

/** A fresh database on a server (created now), or SQLite inside each root. */
export const makeDatabase = async (dialect: DialectName): Promise<{ readonly database: TestDatabase; readonly drop: () => Promise<void> }> => {
  let serverUrl: string | undefined
  let drop = () => Promise.resolve()
  if (dialect !== "sqlite") {
    const server = servers.find((candidate) => candidate.dialect === dialect)!
    const base = process.env[server.env]!
    const name = `host_t_${process.pid}_${++counter}_${randomBytes(3).toString("hex")}`
    const admin: DatabaseTarget = { dialect, url: base }
    await queryOn(admin, adminStatement(dialect, "create", name))
    serverUrl = withDatabase(base, name)
    drop = () => queryOn(admin, adminStatement(dialect, "drop", name)).then(() => undefined)
  }
  const target = (root: string): DatabaseTarget =>
    serverUrl === undefined || dialect === "sqlite"
      ? { dialect: "sqlite", file: join(root, "storage", "host", "host.db") }
      : { dialect, url: serverUrl }
  const query = <Row>(root: string, text: string, params?: ReadonlyArray<unknown>) => queryOn<Row>(target(root), text, params)
  const tables = async (root: string) => (await query<{ name: string }>(root, tablesQuery[dialect])).map((row) => row.name)
  const database: TestDatabase = {
    dialect,
    env: serverUrl === undefined ? {} : { HOST_DATABASE_URL: serverUrl },
    target,
    url: (root) => serverUrl ?? `sqlite:${join(root, "storage", "host", "host.db")}`,
    query,
    tables,
    inspect: async (root) => {
      const key = dialect === "mysql" ? "`key`" : `"key"`
      const extensions = await query<{ extension_id: string; version: string; enabled: unknown }>(
        root,
        "SELECT extension_id, version, enabled FROM host_extensions ORDER BY extension_id"
      )
      return {
        tables: await tables(root),
        // One shape on every dialect: a boolean is 1/0, as SQLite and MySQL return it.
        extensions: extensions.map((row) => ({ ...row, enabled: Number(row.enabled) })),
        migrations: await query(root, "SELECT extension_id, migration, batch FROM host_migrations WHERE extension_id != 'host/core' ORDER BY id"),
        activity: await query(root, "SELECT extension_id, action, summary, context FROM host_activity_logs ORDER BY id"),
        settings: await query(root, `SELECT extension_id, ${key} AS ${key}, value FROM host_settings ORDER BY id`)
      }
    },
    layer: (root) => layerFor(target(root)).pipe(Layer.provide(NodeContext.layer))
  }
  return { database, drop }
}

let active: TestDatabase | undefined

/** The database of the running test inside describeDatabases (runHost passes its env to `host`). */
export const activeDatabase = (): TestDatabase | undefined => active

/** The running test's database; fails outside describeDatabases. */
export const currentDatabase = (): TestDatabase => {
  if (active === undefined) throw new Error("no test database: call this inside describeDatabases")
  return active
}

/**
 * `describe` once per dialect of this run (`name [sqlite]`, `name [mysql]`, `name [pg]`); `body` gets the
 * current test's database through `db()`.
 */
export const describeDatabases = (name: string, body: (db: () => TestDatabase, dialect: DialectName) => void): void => {
  for (const dialect of testDialects()) {
    describe(`${name} [${dialect}]`, () => {
      let current: { readonly database: TestDatabase; readonly drop: () => Promise<void> } | undefined
      beforeEach(async () => {
        current = await makeDatabase(dialect)
        active = current.database
      })
      afterEach(async () => {
        active = undefined
        await current?.drop()
        current = undefined
      })
      body(() => {
        if (current === undefined) throw new Error("the test database exists only inside a test")
        return current.database
      }, dialect)
    })
  }
}
