import { describe, expect, it } from "vitest"
import { runHost, tempDirsPerTest } from "../support/cli.js"
import { makeDatabase, type TestDatabase, testDialects } from "../support/databases.js"
import { sqlMigration, writeExtension } from "../support/extensions.js"

// The same extension on every dialect of this run, compared table by table: a failing batch leaves each
// database exactly as before (transactional rollback on SQLite and PostgreSQL, the downs on MySQL), and
// a good one ends the same everywhere, using each dialect's own .sql file where it has one.

const temp = tempDirsPerTest()

const migrations = (failing: boolean): Record<string, string> => ({
  "001_notes.sql": sqlMigration(
    "CREATE TABLE ext_notes (id INTEGER PRIMARY KEY, body VARCHAR(100) NOT NULL);\nINSERT INTO ext_notes (id, body) VALUES (1, 'first');",
    "DROP TABLE ext_notes;"
  ),
  // One migration, three dialects: each file records which one ran.
  "002_tags.sqlite.sql": sqlMigration("CREATE TABLE ext_tags (name VARCHAR(50) NOT NULL);\nINSERT INTO ext_tags VALUES ('sqlite');", "DROP TABLE ext_tags;"),
  "002_tags.mysql.sql": sqlMigration("CREATE TABLE ext_tags (name VARCHAR(50) NOT NULL) ENGINE=InnoDB;\nINSERT INTO ext_tags VALUES ('mysql');", "DROP TABLE ext_tags;"),
  "002_tags.pg.sql": sqlMigration("CREATE TABLE ext_tags (name VARCHAR(50) NOT NULL);\nINSERT INTO ext_tags VALUES ('pg');", "DROP TABLE ext_tags;"),
  "003_flags.js": `export const up = (sql) => sql.unsafe(sql.onDialectOrElse({
  mysql: () => "CREATE TABLE ext_flags (on_mysql TINYINT(1) NOT NULL)",
  pg: () => "CREATE TABLE ext_flags (on_pg BOOLEAN NOT NULL)",
  orElse: () => "CREATE TABLE ext_flags (on_other INTEGER NOT NULL)"
}))
export const down = (sql) => sql\`DROP TABLE ext_flags\`
`,
  ...(failing
    ? { "004_broken.sql": sqlMigration("CREATE TABLE ext_half (id INTEGER);\nINSERT INTO ext_missing VALUES (1);", "DROP TABLE IF EXISTS ext_half;") }
    : {})
})

/** Every table and its rows, ids and times left out (they differ by nature). */
const dump = async (db: TestDatabase, root: string) => {
  const tables = await db.tables(root)
  const result: Record<string, ReadonlyArray<unknown>> = {}
  for (const table of tables) {
    const rows = await db.query<Record<string, unknown>>(root, `SELECT * FROM ${table}`)
    result[table] = rows
      .map(({ created_at: _c, updated_at: _u, ran_at: _r, id: _i, ...rest }) =>
        Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, typeof value === "boolean" ? Number(value) : value]))
      )
      .filter((row) => !(table === "host_migrations" && row.extension_id === "host/core"))
      .map((row) => JSON.stringify(row))
      .sort()
  }
  return result
}

const columnsOf = async (db: TestDatabase, root: string, table: string) =>
  db.dialect === "sqlite"
    ? (await db.query<{ name: string }>(root, `PRAGMA table_info(${table})`)).map((row) => row.name)
    : (await db.query<{ name: string }>(
      root,
      `SELECT column_name AS name FROM information_schema.columns WHERE table_name = '${table}'${db.dialect === "mysql" ? " AND table_schema = DATABASE()" : ""}`
    )).map((row) => row.name)

describe("extension migrations on every dialect", () => {
  it(`a failing batch leaves every database as it was, table by table (${testDialects().join(", ")})`, async () => {
    const states: Record<string, unknown> = {}
    for (const dialect of testDialects()) {
      const { database, drop } = await makeDatabase(dialect)
      try {
        const root = temp("host-root-")
        const env = database.env
        expect((await runHost(["list", "--root", root], { env })).code).toBe(0)
        const before = await dump(database, root)
        const src = writeExtension(temp("host-src-"), { id: "acme/notes", version: "1.0.0", migrations: migrations(true) })
        const run = await runHost(["add", src, "--root", root], { env })
        expect(run.code).toBe(1)
        expect(run.stderr).toContain("migration 004_broken (up) of acme/notes failed")
        const after = await dump(database, root)
        expect(after).toEqual(before)
        states[dialect] = after
      } finally {
        await drop()
      }
    }
    const [first, ...others] = Object.values(states)
    for (const other of others) expect(other).toEqual(first)
  })

  it("a good batch ends the same everywhere, each dialect running its own file", async () => {
    const states: Record<string, Record<string, ReadonlyArray<unknown>>> = {}
    for (const dialect of testDialects()) {
      const { database, drop } = await makeDatabase(dialect)
      try {
        const root = temp("host-root-")
        const src = writeExtension(temp("host-src-"), { id: "acme/notes", version: "1.0.0", migrations: migrations(false) })
        const run = await runHost(["add", src, "--root", root], { env: database.env })
        expect(run.stderr).not.toContain("error")
        expect(run.code).toBe(0)
        const state = await dump(database, root)
        expect(state["ext_tags"]).toEqual([JSON.stringify({ name: dialect })])
        expect(await columnsOf(database, root, "ext_flags")).toEqual([
          dialect === "mysql" ? "on_mysql" : dialect === "pg" ? "on_pg" : "on_other"
        ])
        expect(state["host_migrations"]).toEqual(
          ["001_notes", "002_tags", "003_flags"].map((migration) => JSON.stringify({ extension_id: "acme/notes", migration, batch: 1 }))
        )
        // Removing runs the same downs everywhere and leaves only the framework's tables.
        expect((await runHost(["remove", "acme/notes", "--root", root], { env: database.env })).code).toBe(0)
        expect(await database.tables(root)).toEqual(["host_activity_logs", "host_extensions", "host_migrations", "host_settings"])
        // Activity and records carry paths and operation ids of their own: the extension's tables and the
        // migration records are what must agree.
        states[dialect] = Object.fromEntries(
          Object.entries(state).filter(([table]) => table === "host_migrations" || (table.startsWith("ext_") && table !== "ext_tags"))
        )
      } finally {
        await drop()
      }
    }
    const [first, ...others] = Object.values(states)
    for (const other of others) expect(other).toEqual(first)
  })
})
