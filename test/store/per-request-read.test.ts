import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Option } from "effect"
import { makeReadConnection } from "../../src/store/Dialect.js"
import { perRequestRead, ReadConnection } from "../../src/store/PerRequestRead.js"
import { SettingsRepo } from "../../src/store/SettingsRepo.js"
import { tempDir } from "../support/cli.js"
import { describeDatabases, type TestDatabase } from "../support/databases.js"

// The reads made on every request (docs/decisions.md "Extension routes copy the request's context less"):
// with the tracer off, as on request fibers, no span and, outside a transaction, none of the caller's
// services; with the tracer on, or in a transaction, as before.

class Caller extends Context.Tag("test/Caller")<Caller, string>() {}

const seen = Effect.all({
  caller: Effect.serviceOption(Caller),
  span: Effect.option(Effect.currentSpan)
})

it.effect("with the tracer on, the read is its span, under the caller's services", () =>
  Effect.gen(function*() {
    const { caller, span } = yield* perRequestRead({ span: "Test.read" })(seen)
    expect(caller).toEqual(Option.some("request"))
    expect(Option.map(span, (s) => s.name)).toEqual(Option.some("Test.read"))
  }).pipe(Effect.provideService(Caller, "request")))

it.effect("with the tracer off, the read has no span and sees none of the caller's services", () =>
  Effect.gen(function*() {
    const { caller, span } = yield* perRequestRead({ span: "Test.read" })(seen)
    expect(caller).toEqual(Option.none())
    expect(Option.isNone(span)).toBe(true)
    // The caller's own context is back after it.
    expect(yield* Effect.serviceOption(Caller)).toEqual(Option.some("request"))
  }).pipe(Effect.provideService(Caller, "request"), Effect.withTracerEnabled(false)))

const storeOn = (db: TestDatabase, root: string) => SettingsRepo.Default.pipe(Layer.provideMerge(db.layer(root)))

describeDatabases("settings reads made per request", (db, dialect) => {
  const withStore = <A, E>(effect: Effect.Effect<A, E, SettingsRepo | SqlClient.SqlClient>) => {
    const dir = tempDir()
    return effect.pipe(Effect.provide(storeOn(db(), dir.path)), Effect.ensuring(Effect.sync(dir.cleanup)))
  }

  it.effect("with the tracer off they read the stored rows, and inside a transaction its uncommitted writes", () =>
    withStore(Effect.gen(function*() {
      const settings = yield* SettingsRepo
      const sql = yield* SqlClient.SqlClient
      yield* settings.put("acme/a", "greeting", "hello")
      expect(yield* settings.getAll("acme/a")).toEqual({ greeting: "hello" })
      expect(yield* settings.get("acme/a", "greeting")).toEqual(Option.some("hello"))
      const inside = yield* sql.withTransaction(Effect.gen(function*() {
        yield* settings.put("acme/a", "greeting", "changed")
        return { all: yield* settings.getAll("acme/a"), one: yield* settings.get("acme/a", "greeting") }
      }))
      expect(inside).toEqual({ all: { greeting: "changed" }, one: Option.some("changed") })
      expect(yield* settings.getAll("acme/a")).toEqual({ greeting: "changed" })
    }).pipe(Effect.withTracerEnabled(false))))

  // Under SQLite a read made per request runs on a read connection of its own (docs/decisions.md "R4: per-request
  // reads on a read connection"): it sees what was committed and does not wait for a transaction the client's
  // connection is in; with the tracer on (the CLI) it waits for the connection as before.
  // (Only SQLite has one, so the test is made for SQLite alone rather than skipped for the servers.)
  if (dialect === "sqlite") it.effect("under SQLite they read what was committed without waiting for an open transaction", () =>
    withStore(Effect.gen(function*() {
      const settings = yield* SettingsRepo
      const sql = yield* SqlClient.SqlClient
      expect(Option.isSome(yield* Effect.serviceOption(ReadConnection))).toBe(true)
      yield* settings.put("acme/a", "greeting", "hello")
      const written = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const writer = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
        yield* settings.put("acme/a", "greeting", "changed")
        yield* Deferred.succeed(written, undefined)
        yield* Deferred.await(release)
      })))
      yield* Deferred.await(written)
      // Through the client's connection this would wait for the transaction, which waits for this read.
      expect(yield* settings.getAll("acme/a").pipe(Effect.timeout("5 seconds"))).toEqual({ greeting: "hello" })
      expect(yield* settings.get("acme/a", "greeting").pipe(Effect.timeout("5 seconds"))).toEqual(Option.some("hello"))
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(writer)
      expect(yield* settings.getAll("acme/a")).toEqual({ greeting: "changed" })
    }).pipe(Effect.withTracerEnabled(false))))
})

describe("the read connection", () => {
  const fakeDatabase = (reader = true) => {
    const counts = { opened: 0, prepared: 0, closed: 0 }
    const open = () => {
      counts.opened++
      return {
        prepare: (text: string) => {
          counts.prepared++
          return { reader, all: (...params: Array<unknown>) => [{ text, params }] }
        },
        close: () => counts.closed++
      }
    }
    return { counts, open }
  }

  it("opens the file on the first read and prepares each text once", () => {
    const { counts, open } = fakeDatabase()
    const reads = makeReadConnection("db", open)
    expect(counts.opened).toBe(0)
    expect(reads.all("SELECT 1", [1])).toEqual([{ text: "SELECT 1", params: [1] }])
    expect(reads.all("SELECT 1", [2])).toEqual([{ text: "SELECT 1", params: [2] }])
    expect(counts).toEqual({ opened: 1, prepared: 1, closed: 0 })
    reads.close()
    expect(counts.closed).toBe(1)
  })

  it("answers nothing (the client's connection then reads) when the file cannot be opened, and does not try again", () => {
    let attempts = 0
    const reads = makeReadConnection("db", () => {
      attempts++
      throw new Error("SQLITE_CANTOPEN")
    })
    expect(reads.all("SELECT 1", [])).toBeUndefined()
    expect(reads.all("SELECT 1", [])).toBeUndefined()
    expect(attempts).toBe(1)
  })

  it("answers nothing for a statement that is not a read", () => {
    const { open } = fakeDatabase(false)
    expect(makeReadConnection("db", open).all("DELETE FROM t", [])).toBeUndefined()
  })
})
