import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { join } from "node:path"
import { CoreRows } from "../../src/store/CoreRows.js"
import { sqliteLayer } from "../../src/store/Database.js"
import { ensureSchema } from "../../src/store/Schema.js"
import { SettingsRepo } from "../../src/store/SettingsRepo.js"
import { WebhookDeliveries } from "../../src/store/WebhookDeliveries.js"
import { tempDir } from "../support/cli.js"

// Webhook deliveries (docs/gitops.md): answered once within 24 hours, as host/core rows of host_settings.

const storeIn = (file: string) =>
  Layer.mergeAll(WebhookDeliveries.Default, SettingsRepo.Default).pipe(
    Layer.provideMerge(CoreRows.Default),
    Layer.provideMerge(Layer.effectDiscard(ensureSchema)),
    Layer.provideMerge(sqliteLayer(file).pipe(Layer.provide(NodeContext.layer)))
  )

const hours = (n: number) => n * 3_600_000

// it.effect runs on the TestClock: the repository reads the time from it, the test moves it.

describe("WebhookDeliveries", () => {
  it.effect("claims an id once, forgets it after 24 hours, and releases it on request", () => {
    const dir = tempDir()
    return Effect.gen(function*() {
      const deliveries = yield* WebhookDeliveries
      const start = new Date("2026-11-22T00:00:00.000Z")
      yield* TestClock.setTime(start.getTime())
      expect(yield* deliveries.claim("a")).toBe(true)
      yield* TestClock.adjust(hours(23))
      expect(yield* deliveries.claim("a")).toBe(false)
      expect(yield* deliveries.claim("b")).toBe(true)
      // 25 hours on, "a" is pruned (and may come again); "b" (23 h + 2 h old) is kept.
      yield* TestClock.adjust(hours(2))
      const later = new Date(start.getTime() + hours(25))
      expect(yield* deliveries.claim("a")).toBe(true)
      expect(yield* deliveries.claim("b")).toBe(false)
      const rows = yield* Effect.flatMap(SettingsRepo, (settings) => settings.getAll("host/core"))
      expect(Object.keys(rows).sort()).toEqual(["webhook_delivery:a", "webhook_delivery:b"])
      expect(rows["webhook_delivery:a"]).toEqual({ delivery: "a", received_at: later.toISOString() })
      yield* deliveries.release("a")
      expect(yield* deliveries.claim("a")).toBe(true)
    }).pipe(Effect.provide(storeIn(join(dir.path, "host.db"))), Effect.ensuring(Effect.sync(dir.cleanup)))
  })

  it.effect("lets only one of many concurrent claims of one id win", () => {
    const dir = tempDir()
    return Effect.gen(function*() {
      const deliveries = yield* WebhookDeliveries
      const outcomes = yield* Effect.forEach(Array.from({ length: 8 }, () => "same"), (id) => deliveries.claim(id), { concurrency: "unbounded" })
      expect(outcomes.filter(Boolean)).toHaveLength(1)
    }).pipe(Effect.provide(storeIn(join(dir.path, "host.db"))), Effect.ensuring(Effect.sync(dir.cleanup)))
  })
})
