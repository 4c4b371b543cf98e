import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { parse } from "yaml"
import { expect, it } from "vitest"
import { fixture, runHost, tempDirsPerTest } from "../support/cli.js"
import { sqlMigration, writeExtension } from "../support/extensions.js"
import { currentDatabase, describeDatabases } from "../support/databases.js"

const temp = tempDirsPerTest()
const host = (root: string, args: Array<string>, env: Record<string, string> = {}) => runHost([...args, "--root", root], { env })

const files = (dir: string): Array<string> =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length)).sort()
    : []

/** What a crash must never break: records, files, checksums and migrations agree; nothing is left over. */
export const assertConsistent = async (root: string) => {
  // Any command first finishes or rolls back what the crash interrupted.
  expect((await host(root, ["list"])).code).toBe(0)
  const db = (await currentDatabase().inspect(root))
  const extensionsDir = join(root, "host", "extensions")
  const installedDirs = existsSync(extensionsDir)
    ? readdirSync(extensionsDir).flatMap((vendor) => readdirSync(join(extensionsDir, vendor)).map((name) => `${vendor}/${name}`)).sort()
    : []
  expect(installedDirs).toEqual(db.extensions.map((e) => e.extension_id))
  for (const record of db.extensions) {
    const manifest = parse(readFileSync(join(extensionsDir, record.extension_id, "extension.yaml"), "utf8")) as { version: string }
    expect(manifest.version).toBe(record.version)
  }
  const status = JSON.parse((await host(root, ["status", "--json"])).stdout)
  expect(status.drift).toMatchObject({ modified: [], missing: [], unverifiable: [] })
  expect(status.lock).toBeNull()
  expect(files(join(root, "storage", "host", "journal"))).toEqual([])
  expect(files(join(root, "storage", "host", "staging"))).toEqual([])
  const extensionTables = db.tables.filter((table) => table.startsWith("ext_"))
  const migrated = db.migrations.map((m) => m.migration)
  return { db, extensionTables, migrated }
}

const steps = ["staged", "migrated", "switched", "recorded", "committed"] as const

describeDatabases("crash recovery: the process is killed at each journal step", () => {
  const v1Migrations = { "001_items.sql": sqlMigration("CREATE TABLE ext_items_a (id INTEGER);", "DROP TABLE ext_items_a;") }
  const v2Migrations = { ...v1Migrations, "002_more.sql": sqlMigration("CREATE TABLE ext_items_b (id INTEGER);", "DROP TABLE ext_items_b;") }

  it.each(steps)("add killed at %s is rolled back, or finished once committed", async (step) => {
    const root = temp("host-root-")
    const src = writeExtension(temp("host-src-"), { id: "acme/items", version: "1.0.0", migrations: v1Migrations })
    const crashed = await host(root, ["add", src], { HOST_DEBUG: JSON.stringify({ crash_at: step }) })
    expect(crashed.code).toBe(-1)
    const { db, extensionTables } = await assertConsistent(root)
    if (step === "committed") {
      expect(db.extensions).toEqual([{ extension_id: "acme/items", version: "1.0.0", enabled: 1 }])
      expect(extensionTables).toEqual(["ext_items_a"])
    } else {
      expect(db.extensions).toEqual([])
      expect(extensionTables).toEqual([])
      expect(db.migrations).toEqual([])
      expect(db.activity).toEqual([])
    }
    // The next operation works normally.
    expect((await host(root, ["add", src, "--force"])).code).toBe(0)
  })

  it.each(steps)("update killed at %s keeps the old version, or the new one once committed", async (step) => {
    const root = temp("host-root-")
    const dir = temp("host-src-")
    const v1 = writeExtension(dir, { id: "acme/items", version: "1.0.0", migrations: v1Migrations })
    const v2 = writeExtension(dir, { id: "acme/items", version: "2.0.0", migrations: v2Migrations })
    expect((await host(root, ["add", v1])).code).toBe(0)
    const crashed = await host(root, ["update", "acme/items", "--source", v2], { HOST_DEBUG: JSON.stringify({ crash_at: step }) })
    expect(crashed.code).toBe(-1)
    const { db, extensionTables, migrated } = await assertConsistent(root)
    if (step === "committed") {
      expect(db.extensions).toEqual([{ extension_id: "acme/items", version: "2.0.0", enabled: 1 }])
      expect(extensionTables).toEqual(["ext_items_a", "ext_items_b"])
      expect(migrated).toEqual(["001_items", "002_more"])
    } else {
      expect(db.extensions).toEqual([{ extension_id: "acme/items", version: "1.0.0", enabled: 1 }])
      expect(extensionTables).toEqual(["ext_items_a"])
      expect(migrated).toEqual(["001_items"])
    }
  })

  it.each(steps.filter((step) => step !== "staged"))("remove killed at %s keeps the extension, or removes it once committed", async (step) => {
    const root = temp("host-root-")
    const src = writeExtension(temp("host-src-"), { id: "acme/items", version: "1.0.0", migrations: v1Migrations })
    expect((await host(root, ["add", src])).code).toBe(0)
    const crashed = await host(root, ["remove", "acme/items"], { HOST_DEBUG: JSON.stringify({ crash_at: step }) })
    expect(crashed.code).toBe(-1)
    const { db, extensionTables } = await assertConsistent(root)
    if (step === "committed") {
      expect(db.extensions).toEqual([])
      expect(extensionTables).toEqual([])
    } else {
      expect(db.extensions).toEqual([{ extension_id: "acme/items", version: "1.0.0", enabled: 1 }])
      expect(extensionTables).toEqual(["ext_items_a"])
    }
    expect(db.activity.map((a) => a.action)).toEqual(step === "committed" ? ["installed", "removed"] : ["installed"])
  })

  it("a journal write cut short by the crash is cleaned up", async () => {
    const root = temp("host-root-")
    await host(root, ["add", fixture("extensions", "hello-world")], { HOST_DEBUG: JSON.stringify({ crash_at: "staged" }) })
    const journal = join(root, "storage", "host", "journal")
    writeFileSync(join(journal, "cut-short.json.tmp"), "{\"id\": \"cut")
    await assertConsistent(root)
  })

  it("recovery runs before any other command, even a read-only one", async () => {
    const root = temp("host-root-")
    await host(root, ["add", fixture("extensions", "hello-world")], { HOST_DEBUG: JSON.stringify({ crash_at: "switched" }) })
    const list = await host(root, ["list", "--json"])
    expect(list.code).toBe(0)
    expect(JSON.parse(list.stdout)).toEqual([])
    expect(list.stderr).toContain("recovered an interrupted add of acme/hello-world: rolled back")
    expect(files(join(root, "storage", "host", "journal"))).toEqual([])
  })
})

// DESIGN.md §23: where DDL commits at once (MySQL/MariaDB) recovery undoes the started migrations by their
// downs; one that fails stops recovery and says so instead of a warning nobody reads.
describeDatabases("crash recovery: a migration that cannot be undone", (db, dialect) => {
  it.runIf(dialect === "mysql")("stops recovery, says so, and finishes once the database is fixed by hand", async () => {
    const root = temp("host-root-")
    const dir = temp("host-src-")
    const v1 = writeExtension(dir, { id: "acme/items", version: "1.0.0", migrations: { "001_items.sql": sqlMigration("CREATE TABLE ext_items_a (id INTEGER);", "DROP TABLE ext_items_a;") } })
    const v2 = writeExtension(dir, {
      id: "acme/items",
      version: "2.0.0",
      migrations: {
        "001_items.sql": sqlMigration("CREATE TABLE ext_items_a (id INTEGER);", "DROP TABLE ext_items_a;"),
        // Its down fails: the table it drops is not the one its up made.
        "002_more.sql": sqlMigration("CREATE TABLE ext_items_b (id INTEGER);", "DROP TABLE ext_items_missing;"),
        "003_last.sql": sqlMigration("CREATE TABLE ext_items_c (id INTEGER);", "DROP TABLE ext_items_c;")
      }
    })
    expect((await host(root, ["add", v1])).code).toBe(0)
    expect((await host(root, ["update", "acme/items", "--source", v2], { HOST_DEBUG: JSON.stringify({ crash_at: "migrated" }) })).code).toBe(-1)
    const stopped = await host(root, ["list"])
    expect(stopped.code).not.toBe(0)
    expect(stopped.stderr).toContain("undoing the migrations of an interrupted update of acme/items")
    expect(stopped.stderr).toContain("002_more")
    expect(stopped.stderr).toContain("recovery stopped")
    // Nothing was dropped as if done: the entry stays, 002's row and table stay, 003 was undone.
    expect(files(join(root, "storage", "host", "journal"))).not.toEqual([])
    expect((await db().inspect(root)).migrations.map((m) => m.migration)).toEqual(["001_items", "002_more"])
    expect((await db().tables(root)).filter((t) => t.startsWith("ext_"))).toEqual(["ext_items_a", "ext_items_b"])
    // The admin undoes 002 by hand, as the message says; the next command finishes recovery.
    await db().query(root, "DROP TABLE ext_items_b")
    await db().query(root, "DELETE FROM host_migrations WHERE migration = '002_more'")
    const { db: after, extensionTables } = await assertConsistent(root)
    expect(after.extensions).toEqual([{ extension_id: "acme/items", version: "1.0.0", enabled: 1 }])
    expect(extensionTables).toEqual(["ext_items_a"])
  })
})
