import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "vitest"
import { fixture, runHost, tempDirsPerTest } from "../support/cli.js"
import { sqlMigration, writeExtension } from "../support/extensions.js"
import { currentDatabase, describeDatabases } from "../support/databases.js"

const temp = tempDirsPerTest()

const host = (root: string, ...args: Array<string>) => runHost([...args, "--root", root])

/** A desired-state file holding the two fixtures this folder installs, as they are installed. */
const writeDesiredBoth = (root: string) => {
  const file = join(root, "both.yaml")
  writeFileSync(
    file,
    `host: "1.0"\nextensions:\n  acme/hello-world: { source: { path: ${fixture("extensions", "hello-world")} } }\n  acme/full: { source: { path: ${fixture("extensions", "full")} } }\n`
  )
  return file
}

/** Everything an operation may touch, to compare before and after a failure. */
const snapshot = async (root: string) => {
  const listing = (dir: string): Array<string> =>
    existsSync(dir)
      ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath, entry.name).slice(dir.length))
        .sort()
      : []
  const db = (await currentDatabase().inspect(root))
  return {
    db: { ...db, activity: db.activity.map(({ action, extension_id, summary }) => ({ action, extension_id, summary })) },
    extensions: listing(join(root, "host", "extensions")),
    staging: listing(join(root, "storage", "host", "staging")),
    journal: listing(join(root, "storage", "host", "journal")),
    // A failed install leaves no artifact of its own behind (docs/operations.md "Artifacts").
    artifacts: listing(join(root, "storage", "host", "artifacts"))
  }
}

describeDatabases("add", () => {
  it("installs a folder enabled, with its migrations in one batch, an activity row and checksums", async () => {
    const root = temp("host-root-")
    const run = await host(root, "add", fixture("extensions", "hello-world"))
    expect(run.code).toBe(0)
    expect(run.stdout).toBe("Installed acme/hello-world v1.0.0 (enabled).\n")
    expect(run.stderr).toContain("  - switching files")
    const full = await host(root, "add", fixture("extensions", "full"), "--json")
    expect(full.code).toBe(0)
    expect(JSON.parse(full.stdout)).toEqual({
      operation: "add",
      id: "acme/full",
      action: "installed",
      version: "1.2.0",
      fromVersion: null,
      enabled: true,
      migrations: ["2024_01_01_000000_create_ext_full_visits", "2024_02_01_000000_create_ext_full_notes"],
      warnings: [
        `requires.panel "^1.11" cannot be checked: the panel version is unknown`,
        `requires.php "^8.1" cannot be checked: the php version is unknown`
      ]
    })
    const db = (await currentDatabase().inspect(root))
    expect(db.tables).toEqual(["ext_full_notes", "ext_full_visits", "host_activity_logs", "host_extensions", "host_migrations", "host_settings"])
    expect(db.extensions).toEqual([
      { extension_id: "acme/full", version: "1.2.0", enabled: 1 },
      { extension_id: "acme/hello-world", version: "1.0.0", enabled: 1 }
    ])
    expect(db.migrations.map((m) => m.batch)).toEqual([1, 1])
    expect(db.activity.map((a) => [a.extension_id, a.action, a.summary])).toEqual([
      ["acme/hello-world", "installed", "Installed v1.0.0"],
      ["acme/full", "installed", "Installed v1.2.0"]
    ])
    expect(JSON.parse(db.activity[0]!.context).actor).toEqual({ type: "cli" })
    const installed = join(root, "host", "extensions", "acme", "full")
    expect(Object.keys(JSON.parse(readFileSync(join(installed, "checksums.json"), "utf8")))).toContain("extension.yaml")
    const status = JSON.parse((await host(root, "status", "--json")).stdout)
    expect(status.drift).toEqual({ checked: 2, modified: [], missing: [], unverifiable: [], linked: [] })
    expect((await snapshot(root)).staging).toEqual([])
    expect((await snapshot(root)).journal).toEqual([])

    // Anything planted beside the package is drift, even where packing looks away (node_modules, links).
    mkdirSync(join(installed, "node_modules", "x"), { recursive: true })
    writeFileSync(join(installed, "node_modules", "x", "index.js"), "module.exports = 1\n")
    symlinkSync("/etc/passwd", join(installed, "resources", "link.js"))
    const drifted = JSON.parse((await host(root, "status", "--json")).stdout)
    expect(drifted.drift.modified).toEqual(["acme/full"])
    const plan = JSON.parse((await host(root, "reconcile", "--dry-run", "--json", "--file", writeDesiredBoth(root))).stdout)
    expect(plan.actions).toMatchObject([{ type: "repair", id: "acme/full" }])
  })

  it("installs a .host archive made by host export", async () => {
    const root = temp("host-root-")
    const out = temp("host-out-")
    expect((await runHost(["export", fixture("extensions", "hello-world"), "--output", `${out}/`])).code).toBe(0)
    const run = await host(root, "add", join(out, "acme-hello-world-1.0.0.host"), "--disabled", "--json")
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ id: "acme/hello-world", enabled: false })
    const list = JSON.parse((await host(root, "list", "--json")).stdout)
    expect(list).toEqual([{
      id: "acme/hello-world",
      name: "Hello World",
      version: "1.0.0",
      enabled: false,
      status: "disabled",
      signature: "unsigned",
      source: { type: "archive", ref: join(out, "acme-hello-world-1.0.0.host"), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }
    }])
  })

  it("refuses a duplicate install, and --force reinstalls", async () => {
    const root = temp("host-root-")
    await host(root, "add", fixture("extensions", "hello-world"))
    const before = (await snapshot(root))
    const again = await host(root, "add", fixture("extensions", "hello-world"))
    expect(again.code).toBe(1)
    expect(again.stderr).toContain("error: add acme/hello-world refused: already installed (v1.0.0); use host update or --force")
    expect(again.stderr).toContain("hint: use host update acme/hello-world")
    expect((await snapshot(root))).toEqual(before)
    const forced = await host(root, "add", fixture("extensions", "hello-world"), "--force")
    expect(forced.code).toBe(0)
    expect((await currentDatabase().inspect(root)).activity.map((a) => a.summary)).toEqual(["Installed v1.0.0", "Installed v1.0.0"])
  })

  it("--no-migrate skips migrations and says so in the activity", async () => {
    const root = temp("host-root-")
    await host(root, "add", fixture("extensions", "hello-world"))
    expect((await host(root, "add", fixture("extensions", "full"), "--no-migrate")).code).toBe(0)
    const db = (await currentDatabase().inspect(root))
    expect(db.migrations).toEqual([])
    expect(db.tables).not.toContain("ext_full_visits")
    expect(JSON.parse(db.activity[1]!.context).no_migrate).toBe(true)
  })

  it.each<[string, (dir: string) => string, string | RegExp]>([
    [
      "a migration that throws halfway",
      (dir) =>
        writeExtension(dir, {
          id: "acme/broken",
          version: "1.0.0",
          migrations: {
            "001_create.sql": sqlMigration("CREATE TABLE ext_broken_a (id INTEGER);", "DROP TABLE ext_broken_a;"),
            "002_throws.js": `export const up = () => { throw new Error("disk on fire") }\nexport const down = () => {}\n`
          }
        }),
      "failed while running migrations: migration 002_throws (up) of acme/broken failed: disk on fire; nothing was changed"
    ],
    [
      "an async migration whose awaited statements ran before a later one threw",
      (dir) =>
        writeExtension(dir, {
          id: "acme/broken",
          version: "1.0.0",
          migrations: {
            "001_async.js": "export const up = async (sql) => {\n  await sql`CREATE TABLE ext_broken_a (id INTEGER)`\n  await sql.unsafe('CREATE TABLE ext_broken_b (id INTEGER)')\n}\nexport const down = async (sql) => {\n  await sql`DROP TABLE IF EXISTS ext_broken_b`\n  await sql`DROP TABLE IF EXISTS ext_broken_a`\n}\n",
            "002_throws.js": `export const up = () => { throw new Error("disk on fire") }\nexport const down = () => {}\n`
          }
        }),
      "migration 002_throws (up) of acme/broken failed: disk on fire; nothing was changed"
    ],
    [
      "a migration whose SQL fails",
      (dir) =>
        writeExtension(dir, {
          id: "acme/broken",
          version: "1.0.0",
          migrations: {
            "001_create.sql": sqlMigration("CREATE TABLE ext_broken_a (id INTEGER);", "DROP TABLE ext_broken_a;"),
            "002_bad.sql": sqlMigration("CREATE TABLE ext_broken_a (id INTEGER);", "SELECT 1;")
          }
        }),
      // Each dialect words it its own way: SQLite, MySQL/MariaDB, PostgreSQL.
      /table ext_broken_a already exists|Table 'ext_broken_a' already exists|relation "ext_broken_a" already exists/
    ],
    [
      "unmet requires",
      (dir) => writeExtension(dir, { id: "acme/broken", version: "1.0.0", requires: { host: "^9.0" } }),
      `refused: requires.host "^9.0" is not met by host 1.2.3`
    ],
    [
      "a missing dependency",
      (dir) => writeExtension(dir, { id: "acme/broken", version: "1.0.0", dependencies: { "acme/absent": "^1.0" } }),
      "refused: dependency acme/absent (^1.0) is not installed"
    ],
    [
      "an out-of-range dependency",
      (dir) => writeExtension(dir, { id: "acme/broken", version: "1.0.0", dependencies: { "acme/hello-world": "^2.0" } }),
      "refused: dependency acme/hello-world is at 1.0.0, which does not satisfy ^2.0"
    ],
    [
      "an invalid manifest",
      (dir) => writeExtension(dir, { id: "acme/broken", version: "1.0.0", files: { "extension.yaml": "host: '1.0'\nid: Acme\n" } }),
      "failed while verifying and staging"
    ],
    [
      "a bad archive",
      (dir) => {
        writeFileSync(join(dir, "garbage.host"), "this is not an archive at all")
        return join(dir, "garbage.host")
      },
      "garbage.host is refused"
    ]
  ])("%s leaves everything as it was", async (_, make, message) => {
    const root = temp("host-root-")
    await host(root, "add", fixture("extensions", "hello-world"))
    const before = (await snapshot(root))
    const run = await host(root, "add", make(temp("host-src-")))
    expect(run.code).toBe(1)
    if (typeof message === "string") expect(run.stderr).toContain(message)
    else expect(run.stderr).toMatch(message)
    expect((await snapshot(root))).toEqual(before)
  })
})

describeDatabases("update", () => {
  it("runs only new migrations as a new batch and keeps the enabled state", async () => {
    const root = temp("host-root-")
    const src = temp("host-src-")
    const v1 = writeExtension(src, {
      id: "acme/notes",
      version: "1.0.0",
      migrations: { "001_create.sql": sqlMigration("CREATE TABLE ext_notes (id INTEGER);", "DROP TABLE ext_notes;") }
    })
    const v2 = writeExtension(src, {
      id: "acme/notes",
      version: "1.1.0",
      migrations: {
        "001_create.sql": sqlMigration("CREATE TABLE ext_notes (id INTEGER);", "DROP TABLE ext_notes;"),
        "002_tags.sql": sqlMigration("CREATE TABLE ext_notes_tags (id INTEGER);", "DROP TABLE ext_notes_tags;")
      }
    })
    await host(root, "add", v1, "--disabled")
    const run = await host(root, "update", "acme/notes", "--source", v2)
    expect(run.code).toBe(0)
    expect(run.stdout).toBe("Updated acme/notes 1.0.0 → 1.1.0. Ran 1 migration(s): 002_tags.\n")
    const db = (await currentDatabase().inspect(root))
    expect(db.extensions).toEqual([{ extension_id: "acme/notes", version: "1.1.0", enabled: 0 }])
    expect(db.migrations.map((m) => [m.migration, m.batch])).toEqual([["001_create", 1], ["002_tags", 2]])
    expect(db.activity.at(-1)).toMatchObject({ action: "updated", summary: "Updated 1.0.0 → 1.1.0" })
    const status = JSON.parse((await host(root, "migrate:status", "acme/notes", "--json")).stdout)
    expect(status).toEqual([{ migration: "001_create", ran: true, batch: 1 }, { migration: "002_tags", ran: true, batch: 2 }])

    // Moving forward is the default; the same version again or an older one needs --force.
    const same = await host(root, "update", "acme/notes", "--source", v2)
    expect(same.code).toBe(1)
    expect(same.stderr).toContain("error: update acme/notes refused: already at v1.1.0; use --force to reinstall it")
    const older = await host(root, "update", "acme/notes", "--source", v1)
    expect(older.code).toBe(1)
    expect(older.stderr).toContain("v1.0.0 is older than the installed v1.1.0; use --force to downgrade")
    expect((await currentDatabase().inspect(root)).extensions).toEqual([{ extension_id: "acme/notes", version: "1.1.0", enabled: 0 }])
    expect((await host(root, "update", "acme/notes", "--source", v2, "--force")).stdout).toBe("Reinstalled acme/notes v1.1.0.\n")
    const downgraded = await host(root, "update", "acme/notes", "--source", v1, "--force")
    expect(downgraded.stdout).toContain("Updated acme/notes 1.1.0 → 1.0.0.")
  })

  it("keeps the old version when the new one fails, and refuses another extension's source", async () => {
    const root = temp("host-root-")
    const src = temp("host-src-")
    await host(root, "add", writeExtension(src, { id: "acme/notes", version: "1.0.0" }))
    const before = (await snapshot(root))
    const failing = writeExtension(src, {
      id: "acme/notes",
      version: "2.0.0",
      migrations: { "001_fail.sql": sqlMigration("CREATE TABLE ext_notes (id INTEGER);\nINSERT INTO nowhere VALUES (1);", "DROP TABLE IF EXISTS ext_notes;") }
    })
    const run = await host(root, "update", "acme/notes", "--source", failing)
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/no such table: nowhere|Table '\w+\.nowhere' doesn't exist|relation "nowhere" does not exist/)
    expect((await snapshot(root))).toEqual(before)
    const other = await host(root, "update", "acme/notes", "--source", fixture("extensions", "hello-world"))
    expect(other.stderr).toContain("refused: ")
    expect(other.stderr).toContain("holds acme/hello-world, not acme/notes")
    expect((await snapshot(root))).toEqual(before)
  })
})

describeDatabases("enable, disable, remove", () => {
  it("guards dependencies both ways, with --force overriding", async () => {
    const root = temp("host-root-")
    await host(root, "add", fixture("extensions", "hello-world"))
    await host(root, "add", fixture("extensions", "full"))
    const disable = await host(root, "disable", "acme/hello-world")
    expect(disable.code).toBe(1)
    expect(disable.stderr).toContain("enabled extensions depend on it: acme/full")
    expect((await host(root, "disable", "acme/full")).stdout).toBe("Disabled acme/full.\n")
    expect((await host(root, "disable", "acme/full")).stdout).toBe("acme/full is already disabled.\n")
    expect((await host(root, "disable", "acme/hello-world")).code).toBe(0)
    const enable = await host(root, "enable", "acme/full")
    expect(enable.code).toBe(1)
    expect(enable.stderr).toContain("dependency acme/hello-world is disabled")
    expect((await host(root, "enable", "acme/hello-world")).code).toBe(0)
    expect((await host(root, "enable", "acme/full")).code).toBe(0)
    const forced = await host(root, "disable", "acme/hello-world", "--force")
    expect(forced.code).toBe(0)
    expect(forced.stderr).toContain("enabled dependents will lose it: acme/full")
    const summaries = (await currentDatabase().inspect(root)).activity.map((a) => a.summary)
    expect(summaries).toEqual(["Installed v1.0.0", "Installed v1.2.0", "Disabled", "Disabled", "Enabled", "Enabled", "Disabled"])
  })

  it("remove rolls back migrations in reverse, deletes settings and files, and keeps activity", async () => {
    const root = temp("host-root-")
    await host(root, "add", fixture("extensions", "hello-world"))
    await host(root, "add", fixture("extensions", "full"))
    const run = await host(root, "remove", "acme/full", "--json")
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout).migrations).toEqual(["2024_02_01_000000_create_ext_full_notes", "2024_01_01_000000_create_ext_full_visits"])
    const db = (await currentDatabase().inspect(root))
    expect(db.tables).toEqual(["host_activity_logs", "host_extensions", "host_migrations", "host_settings"])
    expect(db.migrations).toEqual([])
    expect(db.activity.map((a) => a.action)).toEqual(["installed", "installed", "removed"])
    expect(existsSync(join(root, "host", "extensions", "acme", "full"))).toBe(false)
    expect((await host(root, "remove", "acme/full")).stderr).toContain("remove acme/full refused: it is not installed")
  })

  it("remove --keep-data keeps tables, migration rows and settings, and a later add resumes", async () => {
    const root = temp("host-root-")
    await host(root, "add", fixture("extensions", "hello-world"))
    await host(root, "add", fixture("extensions", "full"))
    expect((await host(root, "remove", "acme/full", "--keep-data")).code).toBe(0)
    let db = (await currentDatabase().inspect(root))
    expect(db.tables).toContain("ext_full_visits")
    expect(db.migrations).toHaveLength(2)
    expect(db.extensions.map((e) => e.extension_id)).toEqual(["acme/hello-world"])
    const again = await host(root, "add", fixture("extensions", "full"), "--json")
    expect(JSON.parse(again.stdout).migrations).toEqual([])
    db = (await currentDatabase().inspect(root))
    expect(db.migrations).toHaveLength(2)
  })

  it("remove keeps everything when a down migration fails", async () => {
    const root = temp("host-root-")
    const src = temp("host-src-")
    await host(root, "add", writeExtension(src, {
      id: "acme/sticky",
      version: "1.0.0",
      migrations: {
        "001_a.sql": sqlMigration("CREATE TABLE ext_sticky_a (id INTEGER);", "DROP TABLE ext_sticky_a;"),
        "002_b.js": `export const up = (sql) => sql\`CREATE TABLE ext_sticky_b (id INTEGER)\`\nexport const down = async () => { throw new Error("refusing to drop") }\n`
      }
    }))
    const before = (await snapshot(root))
    const run = await host(root, "remove", "acme/sticky", "--yes")
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("failed while rolling back migrations: migration 002_b (down) of acme/sticky failed: refusing to drop; nothing was changed")
    expect((await snapshot(root))).toEqual(before)
  })
})

describeDatabases("extension modules", () => {
  it("loads TypeScript migrations that import @host/sdk/server without node_modules of their own", async () => {
    const root = temp("host-root-")
    const src = temp("host-src-")
    const extension = writeExtension(src, {
      id: "acme/typed",
      version: "1.0.0",
      migrations: {
        "001_typed.ts": [
          `import { defineRoutes } from "@host/sdk/server"`,
          `import { tableName } from "../../src/names.js"`,
          `const file = defineRoutes((r) => r.get("/x", () => 1))`,
          `export const up = async (sql: any) => {`,
          `  if (file.routes.length !== 1) throw new Error("sdk not resolved")`,
          "  await sql`CREATE TABLE ext_typed_items (id INTEGER)`",
          "  await sql.unsafe('INSERT INTO ext_typed_items (id) VALUES (1)')",
          "  const rows = await sql`SELECT id FROM ext_typed_items`",
          `  if (rows.length !== 1) throw new Error("awaited statements did not run")`,
          `}`,
          "export const down = (sql: any) => sql`DROP TABLE ext_typed_items`",
          `void tableName`
        ].join("\n")
      },
      files: { "src/names.ts": `export const tableName: string = "ext_typed_items"\n` }
    })
    const run = await host(root, "add", extension)
    expect(run.stderr).not.toContain("error")
    expect(run.code).toBe(0)
    expect((await currentDatabase().inspect(root)).tables).toContain("ext_typed_items")
    expect((await host(root, "remove", "acme/typed")).code).toBe(0)
    expect((await currentDatabase().inspect(root)).tables).not.toContain("ext_typed_items")
  })
})
