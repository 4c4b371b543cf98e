import { FileSystem, Path } from "@effect/platform"
import { Effect, Either, Schema } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"
import { sha256Base64url } from "../system/Hash.js"
import { HostConfig } from "../config/HostConfig.js"
import { ConfigInvalid } from "../domain/Errors.js"
import { problem } from "../domain/Problems.js"
import { CoreKeys, type CoreRows, member } from "../store/CoreRows.js"
import type { StoreError } from "../store/StoreError.js"
import { randomBytes } from "../system/Ids.js"

// Session cookies of the embedded panel: `<base64url(JSON payload)>.<base64url(HMAC-SHA256)>`, signed
// with a key generated once under storage/host/session.key (mode 0600). The payload carries the user id,
// the user's credential stamp (a new API token ends the sessions made before it), the session's CSRF
// token and the expiry; replicas sharing the key share sessions. Signing out records the session as
// revoked in the database (a `host/core` row per session, store/CoreRows.ts `revokedSessions`), which every
// replica reads on each request made with the cookie (docs/http.md "Signing out").

export const sessionCookieName = "host_session"
export const sessionLifetimeSeconds = 60 * 60 * 12

const SessionPayload = Schema.Struct({
  u: Schema.Union(Schema.Int, Schema.String),
  s: Schema.String,
  c: Schema.String,
  e: Schema.Number
})

export interface Session {
  readonly userId: number | string
  readonly credentialStamp: string
  readonly csrfToken: string
  readonly expiresAt: number
}

/** Where sign-outs are recorded: the database every replica shares (store/CoreRows.ts). */
export interface RevocationStore<E> {
  readonly isRevoked: (id: string) => Effect.Effect<boolean, E>
  readonly revoke: (id: string) => Effect.Effect<void, E>
}

export interface Sessions<E = never> {
  readonly issue: (user: { readonly id: number | string; readonly credentialStamp: string }) => { readonly cookie: string; readonly session: Session }
  /** The session of a cookie value, or undefined when it is forged, malformed or expired (signature and clock only). */
  readonly verify: (cookie: string) => Session | undefined
  /** Whether the session was signed out (on any replica). */
  readonly revoked: (session: Session) => Effect.Effect<boolean, E>
  /** Signs the session out everywhere: its cookie stops working on every replica at once. */
  readonly revoke: (session: Session) => Effect.Effect<void, E>
}

/**
 * A session's id in the revocation rows: a hash of its random CSRF token (unique per session, in every
 * cookie ever issued), so the row does not carry the token itself.
 */
export const sessionIdOf = (session: Session): string => sha256Base64url(session.csrfToken).slice(0, 32)

const noRevocations: RevocationStore<never> = { isRevoked: () => Effect.succeed(false), revoke: () => Effect.void }

const decodePayload = Schema.decodeUnknownEither(Schema.parseJson(SessionPayload))

/**
 * `now` reads the clock in epoch ms (the server passes its Effect Clock's), `random` makes the CSRF tokens
 * (the server passes its `Ids`', so a test can fix them); both synchronous, as signing in is.
 */
export const makeSessions = <E = never>(
  key: Uint8Array,
  now: () => number,
  random: (bytes: number) => Uint8Array,
  store: RevocationStore<E> = noRevocations as RevocationStore<E>
): Sessions<E> => {
  const sign = (data: string) => createHmac("sha256", key).update(data).digest("base64url")
  // Verified cookies, so a busy client costs one map lookup per request (bounded).
  const cache = new Map<string, Session>()
  return {
    issue: (user) => {
      const session: Session = {
        userId: user.id,
        credentialStamp: user.credentialStamp,
        csrfToken: Buffer.from(random(18)).toString("base64url"),
        expiresAt: now() + sessionLifetimeSeconds * 1000
      }
      const data = Buffer.from(JSON.stringify({ u: session.userId, s: session.credentialStamp, c: session.csrfToken, e: session.expiresAt }))
        .toString("base64url")
      return { cookie: `${data}.${sign(data)}`, session }
    },
    verify: (cookie) => {
      const cached = cache.get(cookie)
      if (cached !== undefined) {
        if (cached.expiresAt > now()) return cached
        cache.delete(cookie)
        return undefined
      }
      const dot = cookie.indexOf(".")
      if (dot <= 0) return undefined
      const data = cookie.slice(0, dot)
      const expected = Buffer.from(sign(data))
      const given = Buffer.from(cookie.slice(dot + 1))
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined
      const payload = decodePayload(Buffer.from(data, "base64url").toString("utf8"))
      if (Either.isLeft(payload) || payload.right.e <= now()) return undefined
      const session: Session = {
        userId: payload.right.u,
        credentialStamp: payload.right.s,
        csrfToken: payload.right.c,
        expiresAt: payload.right.e
      }
      if (cache.size > 10_000) cache.clear()
      cache.set(cookie, session)
      return session
    },
    revoked: (session) => store.isRevoked(sessionIdOf(session)),
    revoke: (session) => store.revoke(sessionIdOf(session))
  }
}

/**
 * Sign-outs in the database (`host/core` rows `session_revoked:<id>`): one row per session, inserted once
 * (a second sign-out of the same session is a no-op), read by its unique key. Rows older than a session's
 * lifetime end sessions that have expired anyway, so each sign-out deletes them.
 */
export const databaseRevocations = (rows: CoreRows, now: () => number): RevocationStore<StoreError> => ({
  isRevoked: (id) => Effect.map(rows.getText(member(CoreKeys.revokedSessions, id)), (text) => text._tag === "Some"),
  revoke: (id) =>
    Effect.zipRight(
      rows.insertNew(member(CoreKeys.revokedSessions, id), { revoked_at: new Date(now()).toISOString() }),
      rows.removeFamily(CoreKeys.revokedSessions, { createdBefore: new Date(now() - sessionLifetimeSeconds * 1000) })
    )
})

/** Reads storage/host/session.key, creating it (32 random bytes, hex, mode 0600) on first use. */
export const loadSessionKey = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const { paths } = yield* HostConfig
  const file = path.join(paths.storage, "session.key")
  const fail = (message: string) => new ConfigInvalid({ source: "storage/host/session.key", problems: [problem("(file)", message)] })
  // Anything but 32 bytes of hex is refused: a shorter key (an empty file, base64 text) would make
  // sessions forgeable.
  const decodeKey = (text: string) =>
    /^[0-9a-f]{64}$/.test(text.trim())
      ? Effect.succeed(Buffer.from(text.trim(), "hex"))
      : Effect.fail(fail("must hold 64 hexadecimal characters (32 random bytes); delete it to have a new key made (every session then ends)"))
  const existing = yield* fs.readFileString(file).pipe(Effect.option)
  if (existing._tag === "Some") return yield* decodeKey(existing.value)
  yield* fs.makeDirectory(paths.storage, { recursive: true }).pipe(Effect.mapError((error) => fail(error.message)))
  const key = Buffer.from(yield* randomBytes(32))
  const temporary = `${file}.${process.pid}.tmp`
  yield* fs.writeFileString(temporary, `${key.toString("hex")}\n`, { mode: 0o600 }).pipe(Effect.mapError((error) => fail(error.message)))
  // Another process may have won the race: keep whichever key landed first.
  const landed = yield* fs.link(temporary, file).pipe(Effect.either)
  yield* fs.remove(temporary).pipe(Effect.ignore)
  if (Either.isRight(landed)) return key
  return yield* Effect.flatMap(fs.readFileString(file).pipe(Effect.mapError((error) => fail(error.message))), decodeKey)
})
