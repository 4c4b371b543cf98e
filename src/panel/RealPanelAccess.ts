import { Cache, Clock, Duration, Effect, Either, Exit, FiberRef, MutableHashMap, Option, Runtime, Schema } from "effect"
import { CoreRows } from "../store/CoreRows.js"
import {
  anonymous,
  identityLookupGate,
  invalidToken,
  type LookupsLimited,
  type PanelAccess,
  type PanelCredential,
  type PanelUnavailable,
  type RequestAuth,
  type RequestCredentials
} from "./Access.js"
import { grantsOn } from "./Grants.js"
import type { PanelServer, PanelUser, ServerAccess } from "./Panel.js"
import { allPages, type Answer, credentialOf, Key, morePages, type PanelClient, type PanelCounters } from "./PanelClient.js"
import type { Flavor } from "./PanelFlavor.js"
import { pelicanPermissionName } from "../domain/PelicanPermissions.js"
import { isServerId } from "../domain/ServerIds.js"

// How a real panel answers Host's access questions (docs/panels.md "Drivers"): identity, one server's scope
// and the list of servers are each asked of the panel with the caller's credential and cached per
// credential; extension permissions are decided from those answers (and Host-held grants under Pterodactyl).

const ServerItem = Schema.Struct({
  attributes: Schema.Struct({
    uuid: Schema.String,
    identifier: Schema.optional(Schema.String),
    name: Schema.String,
    server_owner: Schema.optional(Schema.Boolean)
  }),
  meta: Schema.optional(Schema.Struct({
    is_server_owner: Schema.optional(Schema.Boolean),
    user_permissions: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] })
  }))
})

const ServerList = Schema.Struct({
  data: Schema.Array(ServerItem),
  meta: Schema.optional(Schema.Struct({
    pagination: Schema.optional(Schema.Struct({ current_page: Schema.Number, total_pages: Schema.Number }))
  }))
})

export const SubuserList = Schema.Struct({
  data: Schema.Array(Schema.Struct({
    attributes: Schema.Struct({
      uuid: Schema.optional(Schema.String),
      username: Schema.String,
      email: Schema.optionalWith(Schema.String, { default: () => "" }),
      permissions: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] })
    })
  }))
})
export type SubuserList = typeof SubuserList.Type

/** The panel's own permission matching: `*` everything, `x.*` anything under `x`, else exact. */
export const panelPermits = (held: ReadonlyArray<string>, permission: string): boolean =>
  held.some((entry) => entry === "*" || entry === permission || (entry.endsWith(".*") && permission.startsWith(entry.slice(0, -1))))

export const serverOf = (attributes: { readonly uuid: string; readonly identifier?: string | undefined; readonly name: string }): PanelServer => ({
  uuid: attributes.uuid,
  name: attributes.name,
  identifier: attributes.identifier ?? attributes.uuid.slice(0, 8),
  ownerId: -1,
  subusers: []
})

// ---- the three caches --------------------------------------------------------------------------------

/** A server as the panel shows it to one caller: whether they own it and their permissions on it. */
interface ServerScope {
  readonly server: PanelServer
  readonly owner: boolean
  readonly permissions: ReadonlyArray<string>
}

interface ListedServer {
  readonly server: PanelServer
  readonly owner: boolean
}

/** How long an answer that says "no" (signed out, no such server) is kept. */
const failureWindow = Duration.seconds(5)

const twoFactorPending = (answer: Answer) =>
  answer.status === 400 && JSON.stringify(answer.body ?? "").includes("TwoFactorAuthRequired")

/** Who the credential belongs to; none when signed out (or, under Pterodactyl, still owing its second factor). */
const lookupIdentity = (client: PanelClient, flavor: Flavor) => (key: Key): Effect.Effect<Option.Option<PanelUser>, PanelUnavailable | LookupsLimited> =>
  Effect.gen(function*() {
    // The per-address limit on credentials the panel has not seen (docs/http.md "Limits"), set by the server.
    yield* Effect.flatten(FiberRef.get(identityLookupGate))
    const account = yield* client.ask("/api/client/account", key.credential.headers)
    if (account.status !== 200) return Option.none()
    const user = flavor.decodeUser(account.body)
    if (Option.isNone(user) || !flavor.twoFactorProbe) return user
    const probe = yield* client.ask("/api/client/permissions", key.credential.headers)
    return twoFactorPending(probe) || probe.status === 401 || probe.status === 403 ? Option.none() : user
  })

/** The caller's scope on the server `key.subject`; none when the panel does not show it to them. */
const lookupServer = (client: PanelClient) => (key: Key): Effect.Effect<Option.Option<ServerScope>, PanelUnavailable> =>
  Effect.map(client.ask(`/api/client/servers/${encodeURIComponent(key.subject)}`, key.credential.headers), (answer) =>
    answer.status !== 200 ? Option.none() : Option.map(Schema.decodeUnknownOption(ServerItem)(answer.body), (item) => {
      const owner = item.meta?.is_server_owner ?? item.attributes.server_owner ?? false
      return { server: serverOf(item.attributes), owner, permissions: owner ? ["*"] : (item.meta?.user_permissions ?? []) }
    }))

/** Every server the caller sees (`key.subject` "admin": every server of the panel), page by page. */
const lookupServerList = (client: PanelClient) => (key: Key): Effect.Effect<ReadonlyArray<ListedServer>, PanelUnavailable> =>
  allPages((page) =>
    Effect.map(
      client.ask(`/api/client?per_page=100&page=${page}${key.subject === "admin" ? "&type=admin-all" : ""}`, key.credential.headers),
      (answer) =>
        answer.status !== 200 ? Option.none() : Option.map(Schema.decodeUnknownOption(ServerList)(answer.body), (list) => ({
          items: list.data.map((item) => ({ server: serverOf(item.attributes), owner: item.attributes.server_owner ?? false })),
          more: morePages(list.meta?.pagination)
        }))
    ))

/** A "yes" is kept for the configured window, a "no" for `failureWindow`, a failure not at all. */
const answerLifetime = (window: Duration.Duration) => <A, E>(exit: Exit.Exit<Option.Option<A>, E>) =>
  Exit.isSuccess(exit) ? (Option.isSome(exit.value) ? window : failureWindow) : Duration.zero

/** A clock stopped before any entry was made: under it a cache read never finds an entry expired. */
const stoppedClock: Clock.Clock = {
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => Number.NEGATIVE_INFINITY,
  currentTimeMillis: Effect.succeed(Number.NEGATIVE_INFINITY),
  unsafeCurrentTimeNanos: () => 0n,
  currentTimeNanos: Effect.succeed(0n),
  sleep: () => Effect.void
}

/** A cache entry as Effect's Cache keeps it (its implementation's shape, not its interface). */
interface KeptEntry {
  readonly _tag: unknown
  readonly key?: unknown
  readonly exit?: unknown
  readonly entryStats?: { readonly loadedMillis?: unknown }
  readonly complete?: KeptEntry
}

/** What `inPlaceReader`'s read answers: the entry's value and when it was made, none, or "cannot tell" (undefined). */
type InPlace<A> = { readonly value: A; readonly loadedMillis: number } | null | undefined

/**
 * The warm read of `warmReader` done in place, without running an Effect: Effect's Cache keeps its entries in
 * a MutableHashMap (`cacheState.map`) and counts an access and a hit of a read with `trackAccess` and
 * `trackHit`. This does what the Effect read does with them under the stopped clock — `entryStats` (a
 * pending lookup is none), then `getOptionComplete` (the access and the hit counted; a failed lookup is
 * none) — and answers undefined for anything it does not recognise, which the Effect read then answers.
 * Running that Effect (a fiber per read) was most of the fast lane's own work under a real panel
 * (docs/http.md "Performance"). None of this is the Cache's interface: when the cache is not built so
 * (another version of effect), this is undefined and every read runs the Effect;
 * test/panel/warm-identity.test.ts checks that the read in place is the one in use.
 */
export const inPlaceReader = <A, E>(cache: Cache.Cache<Key, A, E>): ((key: Key) => InPlace<A>) | undefined => {
  const internals = cache as unknown as {
    readonly cacheState?: { readonly map?: unknown }
    readonly trackAccess?: unknown
    readonly trackHit?: unknown
  }
  const map = internals.cacheState?.map
  const { trackAccess, trackHit } = internals
  if (typeof map !== "object" || map === null || !(Symbol.for("effect/MutableHashMap") in map)) return undefined
  if (typeof trackAccess !== "function" || typeof trackHit !== "function") return undefined
  const entries = map as MutableHashMap.MutableHashMap<Key, KeptEntry>
  return (key) => {
    const found = MutableHashMap.get(entries, key)
    if (Option.isNone(found)) return null
    const kept = found.value
    if (kept._tag === "Pending") return null
    const complete = kept._tag === "Complete" ? kept : kept._tag === "Refreshing" ? kept.complete : undefined
    const loadedMillis = complete?.entryStats?.loadedMillis
    if (complete === undefined || complete.key === undefined || typeof loadedMillis !== "number" || !Exit.isExit(complete.exit)) return undefined
    trackAccess.call(cache, complete.key)
    trackHit.call(cache)
    return Exit.isSuccess(complete.exit) ? { value: complete.exit.value as A, loadedMillis } : null
  }
}

/**
 * A synchronous read of a cache's entry (`PanelAccess.peek`): its value when `cached` below would answer
 * from it as it stands — a finished lookup (or one being refreshed) within its lifetime — else none
 * (absent, still being looked up, failed, expired). Nothing is asked and nothing waited for.
 *
 * Expiry is the cache's own rule, judged here: an entry made at `loadedMillis` lives
 * `lifetime(its exit)` (the same function the cache was made with, the same `>` comparison against the
 * same clock). The entry itself is read under a stopped clock so that the read cannot expire it: an
 * expired entry stays for the slow path exactly as it was (it still counts as a credential seen, which the
 * lookup limit exempts), and the slow path replaces it as it always did.
 */
const warmReader = <A, E>(
  cache: Cache.Cache<Key, A, E>,
  lifetime: (exit: Exit.Exit<A, E>) => Duration.Duration,
  clock: Clock.Clock,
  stopped: Runtime.Runtime<never>
) => {
  // The stopped clock is the runtime's, made once: setting it per read (Effect.withClock) cost more than the read.
  const runStopped = Runtime.runSyncExit(stopped)
  const readOf = (key: Key) =>
    Effect.flatMap(cache.entryStats(key), (stats) =>
      Option.isNone(stats)
        ? Effect.succeedNone
        : Effect.map(cache.getOptionComplete(key), Option.map((value) => ({ value, loadedMillis: stats.value.loadedMillis }))))
  // The read of one key, described once: the same key object comes back for the same credential (`identityKeys`).
  const reads = new WeakMap<Key, ReturnType<typeof readOf>>()
  const entry = (key: Key) => {
    let read = reads.get(key)
    if (read === undefined) {
      read = readOf(key)
      reads.set(key, read)
    }
    return read
  }
  const inPlace = inPlaceReader(cache)
  const readEffect = (key: Key): Exclude<InPlace<A>, undefined> => {
    const read = runStopped(entry(key))
    // A failed lookup is dropped at once by its caller (`cached`); until then it is nothing to answer from.
    return Exit.isFailure(read) || Option.isNone(read.value) ? null : read.value.value
  }
  return (key: Key): Option.Option<A> => {
    const known = inPlace?.(key)
    const read = known === undefined ? readEffect(key) : known
    if (read === null) return Option.none()
    const { loadedMillis, value } = read
    const expiresAt = loadedMillis + Duration.toMillis(lifetime(Exit.succeed(value)))
    return clock.unsafeCurrentTimeMillis() > expiresAt ? Option.none() : Option.some(value)
  }
}

export const makePanelCaches = (client: PanelClient, flavor: Flavor, window: Duration.Duration) =>
  Effect.gen(function*() {
    const identityLifetime = answerLifetime(window)
    const identity = yield* Cache.makeWith({ capacity: 100_000, lookup: lookupIdentity(client, flavor), timeToLive: identityLifetime })
    const servers = yield* Cache.makeWith({ capacity: 100_000, lookup: lookupServer(client), timeToLive: answerLifetime(window) })
    const lists = yield* Cache.makeWith({
      capacity: 10_000,
      lookup: lookupServerList(client),
      timeToLive: (exit) => Exit.isSuccess(exit) ? window : Duration.zero
    })
    // The clock the caches judge expiry by is the one of the fibers that use them: the process's, as here.
    const warmIdentity = warmReader(identity, identityLifetime, yield* Effect.clock, yield* Effect.withClock(Effect.runtime<never>(), stoppedClock))
    return { identity, servers, lists, warmIdentity }
  })

export type PanelCaches = Effect.Effect.Success<ReturnType<typeof makePanelCaches>>

// A failure is not kept (timeToLive zero, and dropped at once: a zero window could still match a call
// in the same millisecond); the callers waiting on that one request share it.
const cached = <A, E>(cache: Cache.Cache<Key, A, E>, key: Key, counters: PanelCounters): Effect.Effect<A, E> =>
  Effect.map(cache.getEither(key).pipe(Effect.tapError(() => cache.invalidate(key))), (either: Either.Either<A, A>) => {
    if (Either.isLeft(either)) {
      counters.hits++
      return either.left
    }
    counters.misses++
    return either.right
  })

/**
 * Asks the panel now, whatever the cache holds, and keeps the answer for the readers after it (docs/panels.md
 * "Identity": unsafe requests are authenticated against the panel every time).
 */
const freshly = <A, E>(cache: Cache.Cache<Key, A, E>, key: Key, counters: PanelCounters): Effect.Effect<A, E> =>
  Effect.zipRight(
    Effect.zipRight(Effect.sync(() => counters.misses++), cache.refresh(key)),
    cache.get(key)
  ).pipe(Effect.tapError(() => cache.invalidate(key)))

/**
 * The identity of an unsafe request, asked now. A credential the cache holds as signed in (and so past
 * Pterodactyl's 2FA probe) is asked `/api/client/account` only: one panel round trip per write, the session's
 * second factor cannot be undone. Anything else is looked up in full. The answer replaces the cached one.
 */
const freshIdentity = (context: RealAccessContext, key: Key): Effect.Effect<Option.Option<PanelUser>, PanelUnavailable | LookupsLimited> =>
  Effect.gen(function*() {
    const cache = context.caches.identity
    const previous = yield* cache.getOption(key).pipe(Effect.orElseSucceed(() => Option.none()))
    if (Option.isNone(previous) || Option.isNone(previous.value)) return yield* freshly(cache, key, context.counters)
    context.counters.misses++
    const account = yield* context.client.ask("/api/client/account", key.credential.headers)
    const user = account.status === 200 ? context.flavor.decodeUser(account.body) : Option.none<PanelUser>()
    yield* cache.set(key, user)
    return user
  })

// ---- the access rules --------------------------------------------------------------------------------

export interface RealAccessContext {
  readonly flavor: Flavor
  readonly client: PanelClient
  readonly caches: PanelCaches
  readonly counters: PanelCounters
  /** The panel's session cookie name (from its `.env`). */
  readonly sessionCookie: string
  /** Host's rows, where Pterodactyl's extension grants are kept; none: nobody holds a grant. */
  readonly rows: Option.Option<CoreRows>
  readonly origin: string | undefined
}

/** The request's identity from the panel's answer about its credential (none: signed out, or a key it refuses). */
const authOf = (user: Option.Option<PanelUser>, credential: PanelCredential, fresh: boolean): RequestAuth => {
  const byToken = "authorization" in credential.headers
  return Option.isNone(user)
    ? (byToken ? invalidToken : anonymous)
    : { user: user.value, via: byToken ? "token" : "session", session: undefined, invalidToken: false, credential, fresh }
}

/** How many bearer headers `identityKeys` keeps before it starts again. */
const bearerKeysKept = 10_000

/**
 * The identity cache's key of a request's credential (`credentialOf`, keyed by its sha256). The key of a
 * Bearer credential depends on the Authorization header alone, so it is kept per header, up to
 * `bearerKeysKept` of them: the same key object, without hashing the token again, for every request of a
 * client that holds its key. Only the derivation is kept: what the key finds (and for how long) is the
 * identity cache's own answer, read afresh each time.
 */
const identityKeys = (sessionCookie: string) => {
  const byBearerHeader = new Map<string, Key>()
  return (credentials: RequestCredentials): Key | undefined => {
    const authorization = credentials.authorization
    if (authorization !== undefined) {
      const known = byBearerHeader.get(authorization)
      if (known !== undefined) return known
    }
    const credential = credentialOf(credentials, sessionCookie)
    if (credential === undefined) return undefined
    const key = new Key(credential, "account")
    if (authorization !== undefined && "authorization" in credential.headers) {
      if (byBearerHeader.size >= bearerKeysKept) byBearerHeader.clear()
      byBearerHeader.set(authorization, key)
    }
    return key
  }
}

type IdentityKeyOf = ReturnType<typeof identityKeys>

const authenticate = (context: RealAccessContext, keyOf: IdentityKeyOf) => (credentials: RequestCredentials): Effect.Effect<RequestAuth, PanelUnavailable | LookupsLimited> => {
  const key = keyOf(credentials)
  if (key === undefined) return Effect.succeed(anonymous)
  const credential = key.credential
  const fresh = credentials.fresh === true
  // An unsafe request asks the panel now; its answer replaces the cached one, so reads see a sign-out too.
  const ask = fresh ? freshIdentity(context, key) : cached(context.caches.identity, key, context.counters)
  // A credential the cache holds (or is looking up) has been seen: asking again is not the limited kind.
  const lookup = Effect.flatMap(context.caches.identity.contains(key), (seen) =>
    seen ? Effect.locally(ask, identityLookupGate, Effect.void) : ask)
  return Effect.map(lookup, (user) => authOf(user, credential, fresh))
}

/**
 * What `authenticate` would answer from the identity cache as it stands, without asking the panel or
 * waiting (docs/panels.md "Identity"): a read's credential with a warm, unexpired entry — the same answer
 * (a user, or the "no" the panel gave), counted as the same cache hit. An unsafe request is never answered
 * here (the panel is asked every time), nor a credential without a usable entry: `authenticate` asks.
 */
const peek = (context: RealAccessContext, keyOf: IdentityKeyOf) => (credentials: RequestCredentials): RequestAuth | undefined => {
  if (credentials.fresh === true) return undefined
  const key = keyOf(credentials)
  if (key === undefined) return anonymous
  const known = context.caches.warmIdentity(key)
  if (Option.isNone(known)) return undefined
  context.counters.hits++
  return authOf(known.value, key.credential, false)
}

const serverAccess = (context: RealAccessContext) => (auth: RequestAuth, id: string): Effect.Effect<ServerAccess | undefined, PanelUnavailable> => {
  const user = auth.user
  // An id that names no server never reaches the panel (domain/ServerIds.ts).
  if (user === undefined || auth.credential === undefined || !isServerId(id)) return Effect.sync((): ServerAccess | undefined => undefined)
  const key = new Key(auth.credential, id)
  return Effect.map(auth.fresh === true ? freshly(context.caches.servers, key, context.counters) : cached(context.caches.servers, key, context.counters), (found) => {
    if (Option.isNone(found)) return undefined
    const { owner, permissions, server } = found.value
    return {
      server: { ...server, ownerId: owner ? user.id : server.ownerId },
      role: user.admin ? "admin" as const : owner ? "owner" as const : "subuser" as const,
      permissions: user.admin ? ["*", ...permissions.filter((entry) => entry !== "*")] : permissions
    }
  })
}

const serversOf = (context: RealAccessContext) => (auth: RequestAuth): Effect.Effect<ReadonlyArray<ServerAccess>, PanelUnavailable> => {
  const user = auth.user
  if (user === undefined || auth.credential === undefined) return Effect.succeed([])
  const key = new Key(auth.credential, user.admin ? "admin" : "user")
  return Effect.map(auth.fresh === true ? freshly(context.caches.lists, key, context.counters) : cached(context.caches.lists, key, context.counters), (list) =>
    list.map(({ owner, server }): ServerAccess => ({
      server: { ...server, ownerId: owner ? user.id : server.ownerId },
      role: user.admin ? "admin" : owner ? "owner" : "subuser",
      // The list does not carry a subuser's permissions: the server's own answer does (serverAccess).
      permissions: user.admin || owner ? ["*"] : []
    })))
}

/** Host-held grants (Pterodactyl): does `username` hold `permission` on `serverUuid`? */
const granted = (rows: RealAccessContext["rows"], username: string, permission: string, serverUuid: string) =>
  Option.match(rows, {
    onNone: () => Effect.succeed(false),
    onSome: (store) =>
      grantsOn(serverUuid).pipe(
        Effect.map((users) => (users[username] ?? []).includes(permission)),
        Effect.provideService(CoreRows, store),
        Effect.orElseSucceed(() => false)
      )
  })

type ServerAccessOf = ReturnType<typeof serverAccess>

/** Pelican: the panel's own permission list of a subuser carries the extension permission's name. */
const panelGranted = (scopeOf: ServerAccessOf, auth: RequestAuth, accesses: ReadonlyArray<ServerAccess>, name: string, oneServer: boolean) =>
  Effect.gen(function*() {
    if (oneServer) return accesses.some((access) => panelPermits(access.permissions, name))
    // The list carries no subuser permissions: each server is asked on its own.
    for (const access of accesses) {
      const full = yield* scopeOf(auth, access.server.uuid)
      if (full !== undefined && panelPermits(full.permissions, name)) return true
    }
    return false
  })

const can = (context: RealAccessContext, scopeOf: ServerAccessOf, listOf: ReturnType<typeof serversOf>) =>
(auth: RequestAuth, permission: string, serverUuid?: string, extensionId?: string): Effect.Effect<boolean, PanelUnavailable> =>
  Effect.gen(function*() {
    const user = auth.user
    if (user === undefined) return false
    if (user.admin) return true
    const accesses = serverUuid === undefined
      ? yield* listOf(auth)
      : Option.toArray(Option.fromNullable(yield* scopeOf(auth, serverUuid)))
    if (accesses.some((access) => access.role === "owner")) return true
    if (context.flavor.panelGrants) {
      if (extensionId === undefined) return false
      return yield* panelGranted(scopeOf, auth, accesses, pelicanPermissionName(extensionId, permission), serverUuid !== undefined)
    }
    // A grant counts only while the panel still gives this user access to the server as a subuser.
    if (serverUuid !== undefined) return accesses.length > 0 && (yield* granted(context.rows, user.username, permission, accesses[0]!.server.uuid))
    for (const access of accesses) if (yield* granted(context.rows, user.username, permission, access.server.uuid)) return true
    return false
  })

/** The panel's subuser list of a server, asked with the caller's credential (owners and admins may read it). */
const subusers = (context: RealAccessContext, scopeOf: ServerAccessOf) => (auth: RequestAuth, serverId: string) =>
  Effect.gen(function*() {
    if (auth.user === undefined || auth.credential === undefined) return undefined
    const server = yield* scopeOf(auth, serverId)
    if (server === undefined || !isServerId(server.server.uuid)) return undefined
    const answer = yield* context.client.ask(`/api/client/servers/${encodeURIComponent(server.server.uuid)}/users`, auth.credential.headers)
    if (answer.status !== 200) return undefined
    return Option.getOrUndefined(Option.map(Schema.decodeUnknownOption(SubuserList)(answer.body), (list) =>
      list.data.map(({ attributes: a }) => ({ username: a.username, email: a.email, uuid: a.uuid, permissions: a.permissions }))))
  })

export const makeRealAccess = (context: RealAccessContext): PanelAccess => {
  const scopeOf = serverAccess(context)
  const listOf = serversOf(context)
  const keyOf = identityKeys(context.sessionCookie)
  return {
    hostGrants: !context.flavor.panelGrants,
    subusers: subusers(context, scopeOf),
    csrf: "panel",
    origin: context.origin,
    peek: peek(context, keyOf),
    authenticate: authenticate(context, keyOf),
    serverAccess: scopeOf,
    serversOf: listOf,
    can: can(context, scopeOf, listOf)
  }
}
