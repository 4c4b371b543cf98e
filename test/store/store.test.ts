import { NodeContext } from "@effect/platform-node"
import Database from "better-sqlite3"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { join } from "node:path"
import { ActivityRepo } from "../../src/store/ActivityRepo.js"
import { sqliteLayer } from "../../src/store/Database.js"
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

describeDatabases("repositories", (db) => {
  const withStore = <A, E>(effect: Effect.Effect<A, E, ExtensionsRepo | MigrationsRepo | SettingsRepo | ActivityRepo | SqlClient.SqlClient>) => {
    const dir = tempDir()
    return effect.pipe(Effect.provide(storeOn(db(), dir.path)), Effect.ensuring(Effect.sync(dir.cleanup)))
  }

  it.effect("host_extensions: save, find, list, enable, replace, remove", () =>
    withStore(Effect.gen(function*() {
      const repo = yield* ExtensionsRepo
      const write = {
        extensionId: "acme/b",
        name: "B",
        version: "1.0.0",
        enabled: true,
        manifest: { id: "acme/b" },
        source: { type: "path" as const, ref: "/x", sha256: null },
        signature: { status: "unsigned" as const, key: null }
      }
      yield* repo.save(write)
      yield* repo.save({ ...write, extensionId: "acme/a", enabled: false })
      expect((yield* repo.list).map((e) => [e.extensionId, e.enabled])).toEqual([["acme/a", false], ["acme/b", true]])
      const found = Option.getOrThrow(yield* repo.find("acme/b"))
      expect(found).toMatchObject({ name: "B", version: "1.0.0", manifest: { id: "acme/b" }, source: write.source, signature: write.signature })
      yield* repo.setEnabled("acme/b", false)
      yield* repo.save({ ...write, version: "1.1.0", enabled: false })
      const updated = Option.getOrThrow(yield* repo.find("acme/b"))
      expect(updated).toMatchObject({ version: "1.1.0", enabled: false, createdAt: found.createdAt, id: found.id })
      yield* repo.remove("acme/b")
      expect(Option.isNone(yield* repo.find("acme/b"))).toBe(true)
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
