import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { CoreKeys, CoreRows, member } from "../../src/store/CoreRows.js"
import { SettingsRepo } from "../../src/store/SettingsRepo.js"
import { tempDir } from "../support/cli.js"
import { describeDatabases, type TestDatabase } from "../support/databases.js"

// The host/core rows (docs/architecture.md "Store"): one repository, a typed key per kind of row, values
// decoded where they are read.

const storeOn = (db: TestDatabase, root: string) =>
  Layer.mergeAll(CoreRows.Default, SettingsRepo.Default).pipe(Layer.provideMerge(db.layer(root)))

const lock = (id: string) => ({
  id,
  holder: "cli",
  pid: 1,
  hostname: "here",
  operation: "add acme/a",
  acquired_at: "2026-11-22T00:00:00.000Z"
})

describeDatabases("host/core rows", (db) => {
  const withStore = <A, E>(effect: Effect.Effect<A, E, CoreRows | SettingsRepo | SqlClient.SqlClient>) => {
    const dir = tempDir()
    return effect.pipe(Effect.provide(storeOn(db(), dir.path)), Effect.ensuring(Effect.sync(dir.cleanup)))
  }

  it.effect("each kind is written and read back by its key, as a host/core settings row", () =>
    withStore(Effect.gen(function*() {
      const rows = yield* CoreRows
      expect(Option.isNone(yield* rows.get(CoreKeys.protectedIds))).toBe(true)
      yield* rows.put(CoreKeys.protectedIds, ["acme/a", "acme/b"])
      yield* rows.put(CoreKeys.sensitiveKeys, { "acme/a": ["token"] })
      yield* rows.put(CoreKeys.panelServers, [{ uuid: "u1", name: "One" }])
      yield* rows.put(CoreKeys.quarantine, { "acme/a": { reason: "boot() failed", version: "1.0.0", generation: 2, since: "t" } })
      yield* rows.put(CoreKeys.protectedIds, ["acme/c"])
      expect(yield* rows.get(CoreKeys.protectedIds)).toEqual(Option.some(["acme/c"]))
      expect(yield* rows.get(CoreKeys.sensitiveKeys)).toEqual(Option.some({ "acme/a": ["token"] }))
      expect(yield* rows.get(CoreKeys.panelServers)).toEqual(Option.some([{ uuid: "u1", name: "One" }]))
      expect(Option.getOrThrow(yield* rows.get(CoreKeys.quarantine))["acme/a"]?.reason).toBe("boot() failed")
      // The keys and values other processes (and older versions) read.
      const stored = yield* Effect.flatMap(SettingsRepo, (settings) => settings.getAll("host/core"))
      expect(stored).toEqual({
        panel_servers: [{ uuid: "u1", name: "One" }],
        protected: ["acme/c"],
        quarantine: { "acme/a": { reason: "boot() failed", version: "1.0.0", generation: 2, since: "t" } },
        sensitive_settings: { "acme/a": ["token"] }
      })
      yield* rows.remove(CoreKeys.protectedIds)
      expect(Option.isNone(yield* rows.get(CoreKeys.protectedIds))).toBe(true)
    })))

  it.effect("a stored value that does not decode reads as absent", () =>
    withStore(Effect.gen(function*() {
      const rows = yield* CoreRows
      yield* Effect.flatMap(SettingsRepo, (settings) => settings.put("host/core", "protected", { not: "a list" }))
      expect(Option.isNone(yield* rows.get(CoreKeys.protectedIds))).toBe(true)
      expect(Option.isSome(yield* rows.getText(CoreKeys.protectedIds))).toBe(true)
    })))

  it.effect("insertNew lets one of many concurrent inserts win; compare-and-swap and compare-and-delete need the stored text", () =>
    withStore(Effect.gen(function*() {
      const rows = yield* CoreRows
      const row = CoreKeys.namedLock("test-lock")
      const outcomes = yield* Effect.forEach(["a", "b", "c", "d", "e", "f"], (id) => rows.insertNew(row, lock(id)), { concurrency: "unbounded" })
      const won = outcomes.filter(Option.isSome)
      expect(won).toHaveLength(1)
      const text = won[0]!.value
      expect(yield* rows.getText(row)).toEqual(Option.some(text))

      expect(yield* rows.replaceIfUnchanged(row, "{}", lock("x"))).toEqual(Option.none())
      const replaced = yield* rows.replaceIfUnchanged(row, text, lock("y"))
      expect(Option.isSome(replaced)).toBe(true)
      expect(Option.getOrThrow(yield* rows.get(row)).id).toBe("y")

      yield* rows.remove(row, text) // no longer the stored text: nothing happens
      expect(Option.getOrThrow(yield* rows.get(row)).id).toBe("y")
      yield* rows.remove(row, Option.getOrThrow(replaced))
      expect(Option.isNone(yield* rows.getText(row))).toBe(true)
    })))

  it.effect("families list their members by name (exact prefix, undecodable ones skipped) and are pruned", () =>
    withStore(Effect.gen(function*() {
      const rows = yield* CoreRows
      const settings = yield* SettingsRepo
      const entry = { message: "boom", count: 1, firstAt: "t", lastAt: "t", version: "1.0.0", user: "u" }
      yield* rows.put(member(CoreKeys.frontendErrors, "acme/b"), [entry])
      yield* rows.put(member(CoreKeys.frontendErrors, "acme/a"), [])
      // `_` in the prefix is LIKE's any-character: a key that only looks alike is not a member.
      yield* settings.put("host/core", "frontendXerrors:acme/c", [entry])
      yield* settings.put("host/core", "frontend_errors:acme/d", "not a list")
      const listed = yield* rows.list(CoreKeys.frontendErrors)
      expect(listed.map(([name]) => name)).toEqual(["acme/a", "acme/b"])

      const old = new Date("2026-01-01T00:00:00.000Z")
      const recent = new Date("2026-01-02T00:00:00.000Z")
      yield* rows.insertNew(member(CoreKeys.webhookDeliveries, "old"), { delivery: "old", received_at: old.toISOString() }, old)
      yield* rows.insertNew(member(CoreKeys.webhookDeliveries, "new"), { delivery: "new", received_at: recent.toISOString() }, recent)
      yield* rows.removeFamily(CoreKeys.webhookDeliveries, { createdBefore: new Date("2026-01-01T12:00:00.000Z") })
      expect((yield* rows.list(CoreKeys.webhookDeliveries)).map(([name]) => name)).toEqual(["new"])

      yield* rows.insertNew(member(CoreKeys.scheduleClaims, "m1"), lock("m1"))
      yield* rows.insertNew(member(CoreKeys.scheduleClaims, "m2"), lock("m2"))
      yield* rows.removeFamily(CoreKeys.scheduleClaims, { except: "m2" })
      expect((yield* rows.list(CoreKeys.scheduleClaims)).map(([name]) => name)).toEqual(["m2"])
      // Other kinds are untouched by a family's pruning.
      expect((yield* rows.list(CoreKeys.webhookDeliveries)).map(([name]) => name)).toEqual(["new"])
    })))
})
