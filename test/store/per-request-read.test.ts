import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { perRequestRead } from "../../src/store/PerRequestRead.js"
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

describeDatabases("settings reads made per request", (db) => {
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
})
