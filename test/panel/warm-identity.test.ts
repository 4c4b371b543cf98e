import { Clock, Duration, Effect, Option } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { identityLookupGate, LookupsLimited, type RequestCredentials } from "../../src/panel/Access.js"
import { credentialOf, Key, makePanelClient, type PanelCounters } from "../../src/panel/PanelClient.js"
import { flavors } from "../../src/panel/PanelFlavor.js"
import { inPlaceReader, makePanelCaches, makeRealAccess } from "../../src/panel/RealPanelAccess.js"
import type { Sessions } from "../../src/panel/Session.js"
import { machines, type PanelStandIn, people, startPanelStandIn } from "../support/pterodactyl-api.js"

// `PanelAccess.peek` under a real panel (DESIGN §23: the fast lane serves under real panels from the warm
// identity cache): synchronously, exactly what `authenticate` would answer from the identity cache as it
// stands — nothing the slow path would ask the panel about again, nothing it would refuse. Against the
// Pterodactyl stand-in, with the caches' clock one this test moves (its sleeps are real ones).

const standIns: Array<PanelStandIn> = []
afterEach(async () => {
  await Promise.all(standIns.splice(0).map((standIn) => standIn.close()))
})

const noSessions: Sessions = {
  issue: () => {
    throw new Error("a real panel issues no Host sessions")
  },
  verify: () => undefined,
  revoked: () => Effect.succeed(false),
  revoke: () => Effect.void
}

const windowSeconds = 30

const setup = async () => {
  const standIn = await startPanelStandIn({ users: people, servers: machines })
  standIns.push(standIn)
  const realClock = Effect.runSync(Effect.clock)
  let now = 1_700_000_000_000
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => now,
    currentTimeMillis: Effect.sync(() => now),
    unsafeCurrentTimeNanos: () => BigInt(now) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(now) * 1_000_000n),
    sleep: (duration) => realClock.sleep(duration)
  }
  const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.withClock(effect, clock))
  const counters: PanelCounters = { hits: 0, misses: 0, panelRequests: 0 }
  const client = makePanelClient(standIn.url, counters)
  const caches = await run(makePanelCaches(client, flavors.pterodactyl, Duration.seconds(windowSeconds)))
  const access = makeRealAccess({
    flavor: flavors.pterodactyl,
    client,
    caches,
    counters,
    sessionCookie: "pterodactyl_session",
    rows: Option.none(),
    origin: undefined
  })
  const authenticate = (credentials: RequestCredentials) => run(access.authenticate(credentials, noSessions))
  const peek = (credentials: RequestCredentials) => access.peek(credentials, noSessions)
  const keyOf = (credentials: RequestCredentials) => new Key(credentialOf(credentials, "pterodactyl_session")!, "account")
  return {
    standIn,
    access,
    caches,
    counters,
    authenticate,
    peek,
    keyOf,
    run,
    advance: (millis: number) => {
      now += millis
    }
  }
}

const alice: RequestCredentials = { authorization: undefined, cookie: "pterodactyl_session=sess-alice; remember_web_1=r" }
const aliceKey: RequestCredentials = { authorization: "Bearer ptlc_alice", cookie: undefined }

describe("peek under a real panel", () => {
  it("knows nobody before the panel was asked; after one lookup it answers what authenticate answers, asking nobody", async () => {
    const { authenticate, counters, peek, standIn } = await setup()
    expect(peek(alice)).toBeUndefined()
    expect(peek(aliceKey)).toBeUndefined()
    expect(standIn.received).toEqual([])
    // No credential at all is anonymous, as authenticate says without asking.
    expect(peek({ authorization: undefined, cookie: "other=1" })).toEqual(await authenticate({ authorization: undefined, cookie: "other=1" }))

    const bySession = await authenticate(alice)
    const byKey = await authenticate(aliceKey)
    expect(bySession.user).toMatchObject({ username: "alice" })
    const asked = standIn.received.length
    const hits = counters.hits
    expect(peek(alice)).toEqual(bySession)
    const peekedKey = peek(aliceKey)
    expect(peekedKey).toEqual(byKey)
    expect(peekedKey?.via).toBe("token")
    expect(standIn.received.length).toBe(asked)
    // Counted as the cache hits they are, like the slow path's.
    expect(counters.hits).toBe(hits + 2)
    // …and then authenticate agrees again, from the same entry.
    expect(await authenticate(alice)).toEqual(bySession)
    expect(standIn.received.length).toBe(asked)
  })

  it("never answers an unsafe request (the panel is asked every time)", async () => {
    const { authenticate, peek } = await setup()
    await authenticate(alice)
    expect(peek(alice)).toBeDefined()
    expect(peek({ ...alice, fresh: true })).toBeUndefined()
  })

  it("answers the panel's 'no' as authenticate does, for as long as the cache keeps it", async () => {
    const { advance, authenticate, peek, standIn } = await setup()
    const wrong: RequestCredentials = { authorization: "Bearer ptlc_wrong", cookie: undefined }
    const refused = await authenticate(wrong)
    expect(refused.invalidToken).toBe(true)
    expect(peek(wrong)).toEqual(refused)
    // A "no" is kept 5 s (docs/panels.md "Identity"): then the panel is asked again.
    advance(5_000)
    expect(peek(wrong)).toEqual(refused)
    advance(1)
    expect(peek(wrong)).toBeUndefined()
    const before = standIn.count("/api/client/account")
    expect(await authenticate(wrong)).toEqual(refused)
    expect(standIn.count("/api/client/account")).toBe(before + 1)
  })

  it("an expired entry falls back to the slow path, which still counts the credential as seen", async () => {
    const { access, advance, authenticate, peek, run, standIn } = await setup()
    const signedIn = await authenticate(alice)
    advance(windowSeconds * 1000)
    // The cache's rule: an entry expires once the clock is past its time to live.
    expect(peek(alice)).toEqual(signedIn)
    advance(1)
    expect(peek(alice)).toBeUndefined()
    expect(peek(alice)).toBeUndefined()
    const before = standIn.count("/api/client/account")
    // Peeking did not drop the expired entry: the slow path finds the credential seen, so the limit on
    // lookups of unseen credentials does not apply to it (a gate that refuses everything lets it through).
    const refuseAll = Effect.fail(new LookupsLimited({ perSecond: 0, retryAfterSeconds: 1 }))
    const again = await run(Effect.locally(access.authenticate(alice, noSessions), identityLookupGate, refuseAll))
    expect(again).toEqual(signedIn)
    expect(standIn.count("/api/client/account")).toBe(before + 1)
    expect(peek(alice)).toEqual(signedIn)
  })

  it("an evicted entry falls back, and so does one still being looked up", async () => {
    const { authenticate, caches, keyOf, peek, standIn } = await setup()
    await authenticate(alice)
    await Effect.runPromise(caches.identity.invalidate(keyOf(alice)))
    expect(peek(alice)).toBeUndefined()
    standIn.mode = "slow"
    standIn.slowMs = 200
    const pending = authenticate(aliceKey)
    expect(peek(aliceKey)).toBeUndefined()
    standIn.mode = "ok"
    const answered = await pending
    expect(peek(aliceKey)).toEqual(answered)
  })

  it("a session the panel ended: reads keep the cache, as authenticate does, until an unsafe request asked the panel", async () => {
    const { authenticate, peek, standIn } = await setup()
    const index = standIn.users.findIndex((user) => user.username === "bob")
    const bob = standIn.users[index]!
    standIn.users[index] = { ...bob, sessions: ["sess-bob-ending"] }
    const ending: RequestCredentials = { authorization: undefined, cookie: "pterodactyl_session=sess-bob-ending" }
    const signedIn = await authenticate(ending)
    expect(signedIn.user).toMatchObject({ username: "bob" })
    standIn.users[index] = bob
    expect(peek(ending)).toEqual(signedIn)
    const unsafe = await authenticate({ ...ending, fresh: true })
    expect(unsafe.user).toBeUndefined()
    expect(peek(ending)?.user).toBeUndefined()
    expect(peek(ending)).toEqual(await authenticate(ending))
  })

  it("reads the cache in place (no Effect run per read), counting the access and the hit as the cache's own read does", async () => {
    const { authenticate, caches, keyOf, run } = await setup()
    const read = inPlaceReader(caches.identity)
    // Undefined would mean every read runs an Effect: the cache is no longer built as the read in place expects.
    expect(read).toBeDefined()
    expect(read!(keyOf(alice))).toBeNull()
    await authenticate(alice)
    const stats = () => run(caches.identity.cacheStats)
    const before = await stats()
    const inPlace = read!(keyOf(alice))
    expect(inPlace?.value).toEqual(await run(caches.identity.get(keyOf(alice))))
    expect(inPlace?.loadedMillis).toEqual(Option.getOrThrow(await run(caches.identity.entryStats(keyOf(alice)))).loadedMillis)
    // Two hits: the read in place, and the `get` beside it.
    expect((await stats()).hits).toBe(before.hits + 2)
  })

  it("while an unsafe request asks the panel again, reads keep the answer the cache holds, as authenticate does", async () => {
    const { authenticate, caches, keyOf, peek, standIn } = await setup()
    const wrong: RequestCredentials = { authorization: "Bearer ptlc_wrong", cookie: undefined }
    const refused = await authenticate(wrong)
    const loaded = Option.getOrThrow(await Effect.runPromise(caches.identity.entryStats(keyOf(wrong)))).loadedMillis
    standIn.mode = "slow"
    standIn.slowMs = 200
    // The cached "no" is asked again in full: the entry is being refreshed, the old answer still in it.
    const asking = authenticate({ ...wrong, fresh: true })
    await new Promise((wake) => setTimeout(wake, 50))
    expect(peek(wrong)).toEqual(refused)
    // Read in place, too: the entry being refreshed still answers from what it holds.
    expect(inPlaceReader(caches.identity)!(keyOf(wrong))).toEqual({ value: Option.none(), loadedMillis: loaded })
    expect(peek(wrong)).toEqual(await authenticate(wrong))
    standIn.mode = "ok"
    expect((await asking).invalidToken).toBe(true)
  })

  it("keeps the identity key of a Bearer header: the same key object, equal to the one its credential gives", async () => {
    const { authenticate, caches, keyOf, peek } = await setup()
    await authenticate(aliceKey)
    expect(peek(aliceKey)?.credential).toEqual(keyOf(aliceKey).credential)
    // The same header with a cookie beside it: a Bearer credential is the header's alone.
    expect(peek({ ...aliceKey, cookie: "pterodactyl_session=sess-alice" })).toEqual(peek(aliceKey))
    expect(peek({ ...aliceKey, cookie: "pterodactyl_session=sess-alice" })?.credential).toBe(peek(aliceKey)?.credential)
    expect(await Effect.runPromise(caches.identity.contains(keyOf(aliceKey)))).toBe(true)
  })
})
