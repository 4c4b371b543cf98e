import { Data, Effect, FiberRef } from "effect"
import type { PanelDirectory, PanelUser, ServerAccess } from "./Directory.js"
import { type Session, sessionCookieName, type Sessions } from "./Session.js"

// How a request is checked against the panel (docs/panels.md "Drivers"): who is asking, what they may do on
// one server, which servers they see. One interface for every driver: the embedded panel answers from its
// directory at once; a real panel (Pterodactyl, Pelican) is asked over HTTP with the caller's own
// credentials, cached per credential. Nothing above panel/ knows which driver answers.

/** The caller's credential as a real panel sees it: what is forwarded, keyed by its sha256. */
export interface PanelCredential {
  readonly key: string
  readonly headers: Readonly<Record<string, string>>
}

export interface RequestAuth {
  readonly user: PanelUser | undefined
  readonly via: "token" | "session" | undefined
  /** The embedded panel's session (its CSRF token); none under a real panel. */
  readonly session: Session | undefined
  /** A Bearer token was sent but matches no user (401, whatever else the request carries). */
  readonly invalidToken: boolean
  /** Under a real panel: the credential the panel is asked with again (server scope, server list). */
  readonly credential?: PanelCredential | undefined
  /**
   * Under a real panel: resolved for an unsafe request, so the server scope and lists are asked of the
   * panel again too, never taken from the cache (docs/panels.md "Identity").
   */
  readonly fresh?: boolean | undefined
}

/** The request headers identity reads. */
export interface RequestCredentials {
  readonly authorization: string | undefined
  readonly cookie: string | undefined
  /**
   * An unsafe request (POST, PUT, PATCH, DELETE): a real panel is asked now, never answered from the
   * identity cache, so a session the panel ended cannot change anything (docs/panels.md "Identity").
   */
  readonly fresh?: boolean | undefined
}

/** The panel did not answer in time, answered 5xx, or could not be reached: Host answers 503 naming it. */
export class PanelUnavailable extends Data.TaggedError("PanelUnavailable")<{
  readonly url: string
  readonly reason: string
}> {
  override get message() {
    return `the panel at ${this.url} is unavailable: ${this.reason}`
  }
}

/**
 * A lookup of a credential the panel has not been asked about yet was refused: the caller's address made too
 * many of them (`panel.lookups_per_second`, docs/http.md "Limits"). Host answers 429 with Retry-After.
 */
export class LookupsLimited extends Data.TaggedError("LookupsLimited")<{
  readonly perSecond: number
  readonly retryAfterSeconds: number
}> {
  override get message() {
    return `too many sign-ins the panel has not seen from this address (panel.lookups_per_second: ${this.perSecond}); try again in ${this.retryAfterSeconds} s`
  }
}

/**
 * What a real panel's identity lookup runs before it asks the panel (the HTTP server sets it per request to
 * its per-address limit); the identity cache runs lookups in the caller's fiber, so only a credential that
 * is actually looked up — once, however many requests share it — spends one.
 */
export const identityLookupGate: FiberRef.FiberRef<Effect.Effect<void, LookupsLimited>> = FiberRef.unsafeMake<Effect.Effect<void, LookupsLimited>>(Effect.void)

export interface IdentityStats {
  readonly hits: number
  readonly misses: number
  readonly panelRequests: number
}

/** A subuser of a server as the panel reports it. */
export interface PanelSubuser {
  readonly username: string
  readonly email: string
  readonly uuid: string | undefined
  /** The panel's own permissions for this subuser on the server. */
  readonly permissions: ReadonlyArray<string>
}

export interface PanelAccess {
  /**
   * Whether Host keeps subusers' extension-permission grants (Pterodactyl) — else the panel's own subuser
   * permissions carry them (embedded panel.yaml, Pelican) and Host's grant endpoints refuse to write.
   */
  readonly hostGrants: boolean
  /** The subusers of a server (`undefined`: no such server or the caller may not list them). */
  readonly subusers: (auth: RequestAuth, serverId: string) => Effect.Effect<ReadonlyArray<PanelSubuser> | undefined, PanelUnavailable>
  /** Which CSRF check guards unsafe requests made with the session cookie (docs/http.md "CSRF"). */
  readonly csrf: "host" | "panel"
  /** `base_url`'s origin for the Origin check (`panel` CSRF only); undefined: a trusted proxy's forwarded host, else the request's Host (http/Auth.ts `expectedOrigin`). */
  readonly origin: string | undefined
  /**
   * The answer `authenticate` would give, when it is known at once, without asking the panel or waiting:
   * the embedded panel always (its directory); a real panel for a read whose credential has a warm,
   * unexpired identity-cache entry (the same entry, expiry and count `authenticate` would use; never for an
   * unsafe request, which the panel is asked about every time), else undefined. The embedded answer does not
   * include the database's sign-outs: a caller that has an embedded session checks them (http/Context.ts).
   */
  readonly peek: (credentials: RequestCredentials, sessions: Sessions<unknown>) => RequestAuth | undefined
  readonly authenticate: (credentials: RequestCredentials, sessions: Sessions<unknown>) => Effect.Effect<RequestAuth, PanelUnavailable | LookupsLimited>
  /** `undefined`: no such server, or the user has no access to it. `id`: the uuid or the panel's short id. */
  readonly serverAccess: (auth: RequestAuth, id: string) => Effect.Effect<ServerAccess | undefined, PanelUnavailable>
  readonly serversOf: (auth: RequestAuth) => Effect.Effect<ReadonlyArray<ServerAccess>, PanelUnavailable>
  /**
   * An extension permission (`backend.permissions`) of `extensionId`: on the server when given, else on any
   * server the user sees. Admins and owners hold them all; subusers by the driver's rule (docs/panels.md).
   */
  readonly can: (auth: RequestAuth, permission: string, serverUuid?: string, extensionId?: string) => Effect.Effect<boolean, PanelUnavailable>
}

export const anonymous: RequestAuth = { user: undefined, via: undefined, session: undefined, invalidToken: false }
export const invalidToken: RequestAuth = { user: undefined, via: undefined, session: undefined, invalidToken: true }

/** The value of one cookie in a Cookie header, without parsing the rest. */
export const cookieValue = (header: string | undefined, name: string): string | undefined => {
  if (header === undefined || header === "") return undefined
  for (const part of header.split(";")) {
    const index = part.indexOf("=")
    if (index < 0) continue
    if (part.slice(0, index).trim() === name) return part.slice(index + 1).trim()
  }
  return undefined
}

/** The Bearer value of an Authorization header (other schemes, e.g. Basic from a proxy, are not ours). */
export const bearerOf = (authorization: string | undefined): string | undefined => {
  const bearer = authorization === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(authorization)
  return bearer === null ? undefined : bearer[1]
}

// ---- the embedded panel --------------------------------------------------------------------------

const tokenCaches = new WeakMap<PanelDirectory, Map<string, PanelUser | null>>()

const userByToken = (directory: PanelDirectory, token: string): PanelUser | undefined => {
  let cache = tokenCaches.get(directory)
  if (cache === undefined) {
    cache = new Map()
    tokenCaches.set(directory, cache)
  }
  const cached = cache.get(token)
  if (cached !== undefined) return cached ?? undefined
  const user = directory.userByToken(token)
  if (cache.size > 10_000) cache.clear()
  cache.set(token, user ?? null)
  return user
}

/** Embedded identity (docs/http.md "Authentication"): a Bearer token by sha256, else the signed session cookie. */
export const resolveAuth = (
  authorization: string | undefined,
  cookieHeader: string | undefined,
  directory: PanelDirectory,
  sessions: Sessions<unknown>
): RequestAuth => {
  const bearer = bearerOf(authorization)
  if (bearer !== undefined) {
    const user = userByToken(directory, bearer)
    return user === undefined ? invalidToken : { user, via: "token", session: undefined, invalidToken: false }
  }
  const cookie = cookieValue(cookieHeader, sessionCookieName)
  if (cookie === undefined) return anonymous
  const session = sessions.verify(cookie)
  if (session === undefined) return anonymous
  const user = directory.userById(session.userId)
  return user === undefined || user.credentialStamp !== session.credentialStamp
    ? anonymous
    : { user, via: "session", session, invalidToken: false }
}

/** The embedded panel's answers: its directory, synchronously (wrapped, so callers are driver-blind). */
export const embeddedAccess = (directory: PanelDirectory): PanelAccess => ({
  hostGrants: false,
  subusers: (auth, serverId) =>
    Effect.sync(() => {
      const access = auth.user === undefined ? undefined : directory.serverAccess(auth.user, serverId)
      if (access === undefined || access.role === "subuser") return undefined
      return access.server.subusers.flatMap((subuser) => {
        const user = directory.userById(subuser.userId)
        return user === undefined ? [] : [{ username: user.username, email: user.email, uuid: undefined, permissions: subuser.permissions }]
      })
    }),
  csrf: "host",
  origin: undefined,
  peek: (credentials, sessions) => resolveAuth(credentials.authorization, credentials.cookie, directory, sessions),
  authenticate: (credentials, sessions) =>
    Effect.sync(() => resolveAuth(credentials.authorization, credentials.cookie, directory, sessions)),
  serverAccess: (auth, id) => Effect.sync(() => auth.user === undefined ? undefined : directory.serverAccess(auth.user, id)),
  serversOf: (auth) => Effect.sync(() => auth.user === undefined ? [] : directory.serversOf(auth.user)),
  can: (auth, permission, serverUuid) =>
    Effect.sync(() => auth.user !== undefined && directory.can(auth.user, permission, serverUuid))
})
