import { NodeContext } from "@effect/platform-node"
import Database from "better-sqlite3"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { readdirSync } from "node:fs"
import { join } from "node:path"
import { ActivityRepo } from "../../src/store/ActivityRepo.js"
import { sqliteLayer } from "../../src/store/Database.js"
import { corruptReason, dependenciesOf, type ExtensionWrite, manifestOf, migrationsFolderOf } from "../../src/domain/Installed.js"
import { ExtensionsRepo } from "../../src/store/ExtensionsRepo.js"
import { MigrationsRepo } from "../../src/store/MigrationsRepo.js"
import { ensureSchema } from "../../src/store/Schema.js"
import { SettingsRepo } from "../../src/store/SettingsRepo.js"
import { writeTransaction } from "../../src/store/Transaction.js"
import { runHost, tempDir } from "../support/cli.js"
import { describeDatabases, type TestDatabase } from "../support/databases.js"

const repositories = Layer.mergeAll(ExtensionsRepo.Default, MigrationsRepo.Default, SettingsRepo.Default, ActivityRepo.Default)

/** The test's database (for a panel root) with the schema and the four repositories. */
const storeOn = (db: TestDatabase, root: string) => repositories.pipe(Layer.provideMerge(db.layer(root)))

/** A SQLite file with the schema and the four repositories (SQLite's own locking is tested below). */
const storeIn = (file: string) => {
  const client = sqliteLayer(file).pipe(Layer.provide(NodeContext.layer))
  const schema = Layer.effectDiscard(ensureSchema)
  return repositories.pipe(Layer.provideMerge(schema), Layer.provideMerge(client))
}

describeDatabases("framework schema", (db) => {
  it.effect("creates exactly the four tables and records itself under host/core, once", () => {
    const dir = tempDir()
    return Effect.gen(function*() {
      expect(yield* Effect.promise(() => db().tables(join(dir.path, "nested")))).toEqual(["host_activity_logs", "host_extensions", "host_migrations", "host_settings"])
      yield* ensureSchema
      yield* ensureSchema
      const migrations = yield* Effect.flatMap(MigrationsRepo, (repo) => repo.listFor("host/core"))
      expect(migrations.map((m) => [m.migration, m.batch])).toEqual([["0001_create_host_tables", 1]])
    }).pipe(Effect.provide(storeOn(db(), join(dir.path, "nested"))), Effect.ensuring(Effect.sync(dir.cleanup)))
  })

  it("is safe when several processes create it at once", async () => {
    const root = tempDir()
    const runs = await Promise.all(Array.from({ length: 6 }, () => runHost(["list", "--json", "--root", root.path], { env: db().env })))
    for (const run of runs) {
      expect(run.stderr).toBe("")
      expect(run.code).toBe(0)
      expect(JSON.parse(run.stdout)).toEqual([])
    }
    expect(await db().tables(root.path)).toEqual(["host_activity_logs", "host_extensions", "host_migrations", "host_settings"])
    expect(await db().query(root.path, "SELECT * FROM host_migrations")).toHaveLength(1)
    root.cleanup()
  })

  it.effect("JSON columns refuse what is not JSON", () => {
    const dir = tempDir()
    return Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const error = yield* Effect.flip(
        sql`INSERT INTO host_settings (extension_id, ${sql("key")}, value, created_at, updated_at) VALUES ('acme/x', 'k', 'not json', '', '')`
      )
      expect(error._tag).toBe("SqlError")
    }).pipe(Effect.provide(storeOn(db(), dir.path)), Effect.ensuring(Effect.sync(dir.cleanup)))
  })
})

describe("a new SQLite database", () => {
  it("is created whole by the first command: the schema in place, in WAL mode, nothing left beside it", async () => {
    const root = tempDir()
    const run = await runHost(["list", "--json", "--root", root.path])
    expect([run.code, run.stderr]).toEqual([0, ""])
    const folder = join(root.path, "storage", "host")
    expect(readdirSync(folder)).toEqual(["host.db"])
    const file = new Database(join(folder, "host.db"), { readonly: true })
    try {
      // Made in memory and written out (store/Database.ts): a whole database, not a private file's leftovers.
      expect(file.pragma("journal_mode", { simple: true })).toBe("wal")
      expect(file.pragma("integrity_check", { simple: true })).toBe("ok")
      expect(file.prepare("SELECT extension_id, migration, batch FROM host_migrations").all())
        .toEqual([{ extension_id: "host/core", migration: "0001_create_host_tables", batch: 1 }])
    } finally {
      file.close()
      root.cleanup()
    }
  })
})

describe("write transactions", () => {
  /**
   * Runs `body` on a fresh store with another process played by a second raw connection (short busy
   * timeout) whose `insert` writes one settings row.
   */
  const withOtherProcess = <A, E>(
    body: (sql: SqlClient.SqlClient, other: { readonly insert: () => void }) => Effect.Effect<A, E>
  ) => {
    const dir = tempDir()
    const file = join(dir.path, "host.db")
    return Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const connection = new Database(file, { timeout: 50 })
      const insert = () => {
        connection.prepare("INSERT INTO host_settings (extension_id, key, value, created_at, updated_at) VALUES ('acme/x', 'k', '1', '', '')").run()
      }
      return yield* Effect.ensuring(body(sql, { insert }), Effect.sync(() => connection.close()))
    }).pipe(Effect.provide(storeIn(file)), Effect.ensuring(Effect.sync(dir.cleanup)))
  }
  const insertHere = (sql: SqlClient.SqlClient) =>
    sql`INSERT INTO host_settings (extension_id, ${sql("key")}, value, created_at, updated_at) VALUES ('acme/y', 'k', '1', '', '')`

  it.effect("hold the write lock from their first statement, so a stale read never fails the write", () =>
    withOtherProcess((sql, other) =>
      Effect.gen(function*() {
        yield* writeTransaction(
          sql,
          Effect.gen(function*() {
            yield* sql`SELECT COUNT(*) AS n FROM host_settings`
            expect(other.insert).toThrow(/database is locked/)
            yield* insertHere(sql)
          })
        )
        other.insert()
        const rows = yield* sql<{ extension_id: string }>`SELECT extension_id FROM host_settings ORDER BY extension_id`
        expect(rows.map((row) => row.extension_id)).toEqual(["acme/x", "acme/y"])
      })
    ))

  it.effect("a plain deferred transaction is what fails: the reason writeTransaction exists", () =>
    withOtherProcess((sql, other) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(sql.withTransaction(
          Effect.gen(function*() {
            yield* sql`SELECT COUNT(*) AS n FROM host_settings`
            other.insert()
            yield* insertHere(sql)
          })
        ))
        expect(String(error.cause)).toMatch(/database is locked/)
      })
    ))
})

/** How many Errors `make` constructed (replacing the global constructor while it runs), and what it returned. */
const errorsMadeBy = <A>(make: () => A): { readonly count: number; readonly result: A } => {
  const original = globalThis.Error
  let count = 0
  globalThis.Error = new Proxy(original, {
    construct: (target, args, newTarget) => {
      count++
      return Reflect.construct(target, args, newTarget)
    }
  })
  try {
    const result = make()
    return { count, result }
  } finally {
    globalThis.Error = original
  }
}

/** What installing `id` writes: a real manifest document, as the lifecycle saves it. */
const extensionWrite = (id: string): ExtensionWrite => ({
  extensionId: id,
  name: "B",
  version: "1.0.0",
  enabled: true,
  manifest: {
    host: "1.0",
    id,
    name: "B",
    version: "1.0.0",
    description: "",
    license: "MIT",
    dependencies: { "acme/other": "^1.0" },
    admin: { settings: { fields: [{ key: "greeting", type: "string", default: "hi" }] } }
  },
  source: { type: "path", ref: "/x", sha256: null },
  signature: { status: "unsigned", key: null }
})

describeDatabases("repositories", (db) => {
  const withStore = <A, E>(effect: Effect.Effect<A, E, ExtensionsRepo | MigrationsRepo | SettingsRepo | ActivityRepo | SqlClient.SqlClient>) => {
    const dir = tempDir()
    return effect.pipe(Effect.provide(storeOn(db(), dir.path)), Effect.ensuring(Effect.sync(dir.cleanup)))
  }

  it.effect("host_extensions: save, find, list, enable, replace, remove", () =>
    withStore(Effect.gen(function*() {
      const repo = yield* ExtensionsRepo
      const write = extensionWrite("acme/b")
      yield* repo.save(write)
      yield* repo.save({ ...extensionWrite("acme/a"), enabled: false })
      expect((yield* repo.list).map((e) => [e.extensionId, e.enabled])).toEqual([["acme/a", false], ["acme/b", true]])
      const found = Option.getOrThrow(yield* repo.find("acme/b"))
      expect(found).toMatchObject({ name: "B", version: "1.0.0", source: write.source, signature: write.signature })
      // The record carries the manifest decoded (settings normalized, dependencies read), not its JSON.
      expect(manifestOf(found)?.document).toEqual(write.manifest)
      expect(manifestOf(found)?.settings.map((field) => field.key)).toEqual(["greeting"])
      yield* repo.setEnabled("acme/b", false)
      yield* repo.save({ ...write, version: "1.1.0", enabled: false })
      const updated = Option.getOrThrow(yield* repo.find("acme/b"))
      expect(updated).toMatchObject({ version: "1.1.0", enabled: false, createdAt: found.createdAt, id: found.id })
      yield* repo.remove("acme/b")
      expect(Option.isNone(yield* repo.find("acme/b"))).toBe(true)
    })))

  it.effect("host_extensions: a stored manifest that no longer decodes is its own case, and the row still lists", () =>
    withStore(Effect.gen(function*() {
      const repo = yield* ExtensionsRepo
      const sql = yield* SqlClient.SqlClient
      yield* repo.save(extensionWrite("acme/a"))
      yield* repo.save(extensionWrite("acme/b"))
      // As an older framework or a hand edit could leave it: valid JSON, not a manifest any more.
      yield* sql`UPDATE host_extensions SET manifest = ${JSON.stringify({ ...extensionWrite("acme/b").manifest, version: "one" })} WHERE extension_id = 'acme/b'`
      const [a, b] = yield* repo.list
      expect(a?.manifest._tag).toBe("Decoded")
      expect(b?.manifest).toMatchObject({ _tag: "Corrupt", reason: expect.stringContaining("version") })
      expect(manifestOf(b!)).toBeUndefined()
      expect(corruptReason(b!)).toMatch(/^its stored manifest does not decode \(.*version.*\); reinstall it$/)
      expect(dependenciesOf(b!)).toEqual({})
      expect(migrationsFolderOf(b!)).toBe("database/migrations")
    })))

  it.effect("host_extensions: a stored manifest is decoded once per text, and a text written by another process at its next read", () =>
    withStore(Effect.gen(function*() {
      const repo = yield* ExtensionsRepo
      const sql = yield* SqlClient.SqlClient
      yield* repo.save(extensionWrite("acme/b"))
      const [first] = yield* repo.list
      const [again] = yield* repo.list
      // The same text: the decoded manifest of the first read (docs/decisions.md "R4's tail").
      expect(again?.manifest).toBe(first?.manifest)
      expect(Option.getOrThrow(yield* repo.find("acme/b")).manifest).toBe(first?.manifest)
      // Another writer (a CLI, a replica) changes the row: the next read decodes the new text.
      const changed = { ...extensionWrite("acme/b").manifest, description: "changed elsewhere" }
      yield* sql`UPDATE host_extensions SET manifest = ${JSON.stringify(changed)} WHERE extension_id = 'acme/b'`
      const [after] = yield* repo.list
      expect(after?.manifest).not.toBe(first?.manifest)
      expect(manifestOf(after!)?.document).toEqual(changed)
    })))

  it.effect("host_extensions: with more rows than the memo's old cap (512), a second listing decodes none again, and a removed row is forgotten", () =>
    withStore(Effect.gen(function*() {
      const repo = yield* ExtensionsRepo
      const ids = Array.from({ length: 600 }, (_, index) => `acme/many-${index}`)
      yield* Effect.forEach(ids, (id) => repo.save(extensionWrite(id)), { discard: true })
      const first = yield* repo.list
      const again = yield* repo.list
      expect(again).toHaveLength(600)
      // Every manifest is the object the first listing decoded (the capped memo cleared itself halfway).
      expect(again.filter((record, index) => record.manifest !== first[index]!.manifest)).toEqual([])
      yield* repo.remove("acme/many-0")
      yield* repo.list
      yield* repo.save(extensionWrite("acme/many-0"))
      const back = yield* repo.list
      // The removed row's text was forgotten by the listing without it: decoded anew, not the old object.
      expect(back.find((record) => record.extensionId === "acme/many-0")!.manifest).not.toBe(first[0]!.manifest)
    })), 60_000)

  it.effect("host_settings: the reads a request makes take no stack trace for their span", () =>
    withStore(Effect.gen(function*() {
      const repo = yield* SettingsRepo
      yield* repo.put("acme/a", "limit", 5)
      // Effect takes a span's trace (an Error) when withSpan is called, tracer on or off (docs/decisions.md "R4's tail").
      const made = errorsMadeBy(() => [repo.getAll("acme/a"), repo.get("acme/a", "limit")])
      expect(made.count).toBe(0)
      expect(yield* made.result[0]!).toEqual({ limit: 5 })
    })))

  it.effect("host_extensions and host_settings: concurrent saves of one key upsert one row, last write wins", () =>
    withStore(Effect.gen(function*() {
      const repo = yield* ExtensionsRepo
      const settings = yield* SettingsRepo
      // On MySQL and PostgreSQL these run on separate pooled connections at once: reading first and then
      // inserting would let two of them insert and one fail on the UNIQUE constraint.
      const versions = Array.from({ length: 8 }, (_, index) => `1.0.${index}`)
      yield* Effect.forEach(versions, (version) => repo.save({ ...extensionWrite("acme/race"), version }), { concurrency: "unbounded" })
      yield* Effect.forEach(versions, (version) => settings.put("acme/race", "k", version), { concurrency: "unbounded" })
      const rows = (yield* repo.list).filter((record) => record.extensionId === "acme/race")
      expect(rows).toHaveLength(1)
      expect(versions).toContain(rows[0]!.version)
      expect(versions).toContain(Option.getOrThrow(yield* settings.get("acme/race", "k")))
      // A save after them replaces in place: same id, created_at kept.
      yield* repo.save({ ...extensionWrite("acme/race"), version: "2.0.0" })
      expect((yield* repo.list).filter((record) => record.extensionId === "acme/race")).toMatchObject([
        { version: "2.0.0", id: rows[0]!.id, createdAt: rows[0]!.createdAt }
      ])
      yield* settings.put("acme/race", "k", "last")
      expect(yield* settings.getAll("acme/race")).toEqual({ k: "last" })
    })))

  it.effect("host_migrations: batches per extension, unique per migration", () =>
    withStore(Effect.gen(function*() {
      const repo = yield* MigrationsRepo
      expect(yield* repo.nextBatch("acme/a")).toBe(1)
      yield* repo.record("acme/a", "001_one", 1)
      yield* repo.record("acme/a", "002_two", 1)
      expect(yield* repo.nextBatch("acme/a")).toBe(2)
      expect(yield* repo.nextBatch("acme/other")).toBe(1)
      const error = yield* Effect.flip(repo.record("acme/a", "001_one", 2))
      expect(error.message).toContain("recording migration 001_one of acme/a failed")
      yield* repo.forget("acme/a", "002_two")
      expect((yield* repo.listFor("acme/a")).map((m) => m.migration)).toEqual(["001_one"])
    })))

  it.effect("host_settings: JSON values per extension and key", () =>
    withStore(Effect.gen(function*() {
      const repo = yield* SettingsRepo
      yield* repo.put("acme/a", "limit", 5)
      yield* repo.put("acme/a", "limit", 7)
      yield* repo.put("acme/a", "tags", ["x", "y"])
      yield* repo.put("acme/b", "limit", 1)
      expect(yield* repo.getAll("acme/a")).toEqual({ limit: 7, tags: ["x", "y"] })
      expect(yield* repo.get("acme/b", "limit")).toEqual(Option.some(1))
      yield* repo.remove("acme/a", "tags")
      expect(yield* repo.getAll("acme/a")).toEqual({ limit: 7 })
      yield* repo.removeAll("acme/a")
      expect(yield* repo.getAll("acme/a")).toEqual({})
      expect(yield* repo.getAll("acme/b")).toEqual({ limit: 1 })
    })))

  it.effect("host_activity_logs: appended, newest first, filtered by extension", () =>
    withStore(Effect.gen(function*() {
      const repo = yield* ActivityRepo
      yield* repo.append({ extensionId: "acme/a", action: "installed", summary: "Installed v1.0.0", context: { actor: { type: "cli" } } })
      yield* repo.append({ extensionId: "acme/b", action: "installed", summary: "Installed v2.0.0", context: { actor: { type: "cli" } } })
      yield* repo.append({ extensionId: "acme/a", action: "enabled", summary: "Enabled", context: { actor: { type: "admin", user: "root" } } })
      expect((yield* repo.list()).map((r) => r.summary)).toEqual(["Enabled", "Installed v2.0.0", "Installed v1.0.0"])
      expect((yield* repo.list({ extensionId: "acme/a" })).map((r) => [r.action, r.context])).toEqual([
        ["enabled", { actor: { type: "admin", user: "root" } }],
        ["installed", { actor: { type: "cli" } }]
      ])
    })))
})
