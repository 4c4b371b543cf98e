import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { join } from "node:path"
import { databaseRevocations, makeSessions, sessionLifetimeSeconds } from "../../src/panel/Session.js"
import { CoreKeys, CoreRows } from "../../src/store/CoreRows.js"
import { sqliteLayer } from "../../src/store/Database.js"
import { ensureSchema } from "../../src/store/Schema.js"
import { tempDir } from "../support/cli.js"

// Embedded sign-outs as host/core rows of host_settings (docs/http.md "Signing out"): a revoked
// session stays revoked while it could still be presented, and its row is pruned once it has expired.

const storeIn = (file: string) =>
  CoreRows.Default.pipe(
    Layer.provideMerge(Layer.effectDiscard(ensureSchema)),
    Layer.provideMerge(sqliteLayer(file).pipe(Layer.provide(NodeContext.layer)))
  )

describe("session revocations", () => {
  it.effect("revoke ends one session only; the row is pruned after a session's lifetime", () => {
    const dir = tempDir()
    return Effect.gen(function*() {
      const rows = yield* CoreRows
      let clock = new Date("2026-11-28T00:00:00.000Z").getTime()
      yield* TestClock.setTime(clock)
      const now = () => clock
      const sessions = makeSessions(Buffer.alloc(32, 1), now, (bytes) => crypto.getRandomValues(new Uint8Array(bytes)), databaseRevocations(rows, now))
      const first = sessions.issue({ id: 1, credentialStamp: "s" }).session
      const second = sessions.issue({ id: 1, credentialStamp: "s" }).session
      expect(yield* sessions.revoked(first)).toBe(false)
      yield* sessions.revoke(first)
      yield* sessions.revoke(first)
      expect(yield* sessions.revoked(first)).toBe(true)
      expect(yield* sessions.revoked(second)).toBe(false)
      // Just under a lifetime later the first session could still be presented: its row stays.
      clock += sessionLifetimeSeconds * 1000 - 1000
      yield* TestClock.setTime(clock)
      yield* sessions.revoke(second)
      expect(yield* sessions.revoked(first)).toBe(true)
      // Past it, the next sign-out prunes the first row (that session has expired anyway).
      clock += 2000
      yield* TestClock.setTime(clock)
      const third = sessions.issue({ id: 2, credentialStamp: "t" }).session
      yield* sessions.revoke(third)
      expect((yield* rows.list(CoreKeys.revokedSessions)).length).toBe(2)
      expect(yield* sessions.revoked(first)).toBe(false)
      expect(yield* sessions.revoked(second)).toBe(true)
      expect(yield* sessions.revoked(third)).toBe(true)
    }).pipe(Effect.provide(storeIn(join(dir.path, "host.sqlite"))), Effect.ensuring(Effect.sync(dir.cleanup)))
  })
})
