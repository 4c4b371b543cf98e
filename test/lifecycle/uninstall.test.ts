import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import Database from "better-sqlite3"
import { describe, expect, it } from "vitest"
import { runHost, tempDirsPerTest } from "../support/cli.js"
import { inspectDatabase, sqlMigration, writeExtension } from "../support/extensions.js"

// framework:uninstall (docs/operations.md#uninstall): preview, removal, --keep-data, crash recovery.

const temp = tempDirsPerTest()
const host = (root: string, args: Array<string>, env: Record<string, string> = {}) => runHost([...args, "--root", root], { env })

/** Every file and folder under `dir` with its size, to prove a preview changed nothing. */
const snapshot = (dir: string): Array<string> =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((entry) => {
      const full = join(entry.parentPath, entry.name)
      return `${full.slice(dir.length)} ${entry.isFile() ? statSync(full).size : "dir"}`
    })
    .sort()

const countRows = (root: string, table: string) => {
  const db = new Database(join(root, "storage", "host", "host.db"), { readonly: true })
  try {
    return (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n
  } finally {
    db.close()
  }
}

/** A panel with two extensions (one depending on the other), migrations with rows, config and a desired state. */
const panel = async () => {
  const root = temp("host-root-")
  const sources = temp("host-src-")
  const base = writeExtension(sources, {
    id: "acme/base",
    version: "1.0.0",
    migrations: { "001_base.sql": sqlMigration("CREATE TABLE ext_base_items (id INTEGER);\nINSERT INTO ext_base_items VALUES (1);\nINSERT INTO ext_base_items VALUES (2);", "DROP TABLE ext_base_items;") }
  })
  const top = writeExtension(sources, {
    id: "acme/top",
    version: "1.0.0",
    dependencies: { "acme/base": "^1.0" },
    migrations: { "001_top.sql": sqlMigration("CREATE TABLE ext_top_notes (id INTEGER);", "DROP TABLE ext_top_notes;") }
  })
  expect((await host(root, ["add", base])).code).toBe(0)
  expect((await host(root, ["add", top])).code).toBe(0)
  mkdirSync(join(root, "config"))
  writeFileSync(join(root, "config", "host.yaml"), "registry_cache_ttl: 60\n")
  mkdirSync(join(root, "desired-state"))
  const desired = `host: "1.0"\nextensions:\n  acme/base:\n    source: { path: ${base} }\n  acme/top:\n    source: { path: ${top} }\n`
  writeFileSync(join(root, "desired-state", "extensions.yaml"), desired)
  mkdirSync(join(root, "public", "host"), { recursive: true })
  writeFileSync(join(root, "public", "host", "asset.txt"), "served\n")
  return { root, desired }
}

describe("host framework:uninstall", () => {
  it("without --confirm shows each extension, table (with rows) and folder, exits 1 and changes nothing", async () => {
    const { root } = await panel()
    const before = snapshot(root)
    const run = await host(root, ["framework:uninstall"])
    expect(run.code).toBe(1)
    expect(run.stdout).toContain("acme/base 1.0.0 (enabled)")
    expect(run.stdout).toContain("acme/top 1.0.0 (enabled)")
    expect(run.stdout).toMatch(/ext_base_items\s+2\s+extension\s+drop/)
    expect(run.stdout).toMatch(/host_extensions\s+2\s+framework\s+drop/)
    expect(run.stdout).toMatch(/host\/extensions\/\s+remove/)
    expect(run.stdout).toMatch(/public\/host\/\s+remove/)
    expect(run.stdout).toContain("Kept: config/, desired-state/")
    expect(snapshot(root)).toEqual(before)

    const json = await host(root, ["framework:uninstall", "--json", "--keep-data"])
    expect(json.code).toBe(1)
    const preview = JSON.parse(json.stdout)
    expect(preview).toMatchObject({ confirmed: false, keep_data: true, kept: ["config", "desired-state"] })
    expect(preview.extensions.map((e: { id: string }) => e.id)).toEqual(["acme/base", "acme/top"])
    expect(preview.tables).toContainEqual({ name: "ext_base_items", rows: 2, owner: "extension", action: "keep" })
    expect(preview.tables.filter((t: { owner: string }) => t.owner === "framework").map((t: { name: string }) => t.name).sort())
      .toEqual(["host_activity_logs", "host_extensions", "host_migrations", "host_settings"])
    expect(snapshot(root)).toEqual(before)
  })

  it("on a root without Host says there is nothing and creates no database", async () => {
    const root = temp("host-root-")
    const run = await host(root, ["framework:uninstall", "--json"])
    expect(run.code).toBe(1)
    expect(JSON.parse(run.stdout)).toMatchObject({ extensions: [], tables: [] })
    expect(readdirSync(root)).toEqual([])
  })

  it("--confirm removes every extension (down migrations, dependents first), the tables and folders; config and desired state stay", async () => {
    const { desired, root } = await panel()
    const run = await host(root, ["framework:uninstall", "--confirm", "--json"])
    expect(run.code).toBe(0)
    const result = JSON.parse(run.stdout).result
    expect(result.removed_extensions).toEqual(["acme/top", "acme/base"])
    expect(result.dropped_tables.sort()).toEqual(["host_activity_logs", "host_extensions", "host_migrations", "host_settings"])
    expect(result.left_tables).toEqual([])
    expect(result.removed_folders).toEqual(["host/extensions", "public/host", "storage/host"])
    expect(readdirSync(root).sort()).toEqual(["config", "desired-state", "public"])
    expect(readdirSync(join(root, "public"))).toEqual([])
    expect(readFileSync(join(root, "desired-state", "extensions.yaml"), "utf8")).toBe(desired)
    expect(readFileSync(join(root, "config", "host.yaml"), "utf8")).toBe("registry_cache_ttl: 60\n")

    // Installing again starts from nothing and the desired state brings everything back.
    const again = await host(root, ["reconcile"])
    expect(again.code).toBe(0)
    expect(inspectDatabase(root).extensions.map((e) => e.extension_id)).toEqual(["acme/base", "acme/top"])
  })

  it("--keep-data removes only files; reconcile after a reinstall resumes with the data", async () => {
    const { root } = await panel()
    const run = await host(root, ["framework:uninstall", "--confirm", "--keep-data"])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain("every table was kept")
    expect(existsSync(join(root, "host"))).toBe(false)
    expect(existsSync(join(root, "public", "host"))).toBe(false)
    expect(readdirSync(join(root, "storage", "host"))).toEqual(["host.db"])
    const db = inspectDatabase(root)
    expect(db.tables).toEqual(expect.arrayContaining(["ext_base_items", "ext_top_notes", "host_extensions"]))
    expect(countRows(root, "ext_base_items")).toBe(2)

    const reconciled = await host(root, ["reconcile"])
    expect(reconciled.code).toBe(0)
    expect(reconciled.stdout).toContain("! repair acme/base")
    expect(countRows(root, "ext_base_items")).toBe(2)
    expect(inspectDatabase(root).migrations.map((m) => m.migration)).toEqual(["001_base", "001_top"])
    expect((await host(root, ["reconcile", "--dry-run", "--detailed-exitcode"])).code).toBe(0)
  })

  it("a kill -9 in the middle is recovered: other commands refuse until a second --confirm finishes it", async () => {
    const { root } = await panel()
    const crashed = await host(root, ["framework:uninstall", "--confirm"], { HOST_DEBUG: JSON.stringify({ crash_at: "uninstall-removed-one" }) })
    expect(crashed.code).toBe(-1)
    expect(existsSync(join(root, "storage", "host", "uninstall.json"))).toBe(true)
    const list = await host(root, ["list"])
    expect(list.code).toBe(1)
    expect(list.stderr).toContain("was interrupted")
    expect(list.stderr).toContain("hint: run host framework:uninstall --confirm to finish it")
    const finish = await host(root, ["framework:uninstall", "--confirm", "--json"])
    expect(finish.code).toBe(0)
    expect(JSON.parse(finish.stdout).result).toMatchObject({ resumed: true, removed_extensions: ["acme/base"] })
    expect(readdirSync(root).sort()).toEqual(["config", "desired-state", "public"])
  })

  it("a kill -9 inside one extension's removal is rolled back by the journal, then finished", async () => {
    const { root } = await panel()
    const crashed = await host(root, ["framework:uninstall", "--confirm"], { HOST_DEBUG: JSON.stringify({ crash_at: "switched" }) })
    expect(crashed.code).toBe(-1)
    const finish = await host(root, ["framework:uninstall", "--confirm", "--json"])
    expect(finish.code).toBe(0)
    expect(JSON.parse(finish.stdout).result.removed_extensions).toEqual(["acme/top", "acme/base"])
    expect(readdirSync(root).sort()).toEqual(["config", "desired-state", "public"])
  })

  it("a failing down migration stops it with the panel intact and working", async () => {
    const root = temp("host-root-")
    const source = writeExtension(temp("host-src-"), {
      id: "acme/stubborn",
      version: "1.0.0",
      migrations: { "001_x.sql": sqlMigration("CREATE TABLE ext_stubborn (id INTEGER);", "DROP TABLE ext_no_such_table;") }
    })
    expect((await host(root, ["add", source])).code).toBe(0)
    const run = await host(root, ["framework:uninstall", "--confirm"])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("removing acme/stubborn failed")
    expect(run.stderr).toContain("--keep-data")
    expect((await host(root, ["list"])).code).toBe(0)
    expect(inspectDatabase(root).extensions.map((e) => e.extension_id)).toEqual(["acme/stubborn"])
  })
})
