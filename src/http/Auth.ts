import type { PanelDirectory, PanelUser } from "../panel/Panel.js"
import { sessionCookieName, type Session, type Sessions } from "../panel/Session.js"

// Who is asking (docs/http.md "Authentication"): `Authorization: Bearer <token>` (compared by sha256 with the
// panel's users) or the signed session cookie of the login form. Synchronous and cached, so the hot
// read-only endpoints pay one map lookup per request.

export interface RequestAuth {
  readonly user: PanelUser | undefined
  readonly via: "token" | "session" | undefined
  readonly session: Session | undefined
  /** A Bearer token was sent but matches no user (401, whatever else the request carries). */
  readonly invalidToken: boolean
}

const anonymous: RequestAuth = { user: undefined, via: undefined, session: undefined, invalidToken: false }
const invalid: RequestAuth = { user: undefined, via: undefined, session: undefined, invalidToken: true }

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

export const resolveAuth = (
  authorization: string | undefined,
  cookieHeader: string | undefined,
  directory: PanelDirectory,
  sessions: Sessions
): RequestAuth => {
  // Other schemes (Basic from a proxy in front of the panel) are not ours: the cookie still counts.
  const bearer = authorization === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(authorization)
  if (bearer !== null) {
    const user = userByToken(directory, bearer[1]!)
    return user === undefined ? invalid : { user, via: "token", session: undefined, invalidToken: false }
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

export const unsafeMethods: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"])

/**
 * CSRF (web and admin groups, admin API): an unsafe request authenticated by the session cookie must
 * carry the session's token in `X-CSRF-Token` (or the form field `_token`). Token-authenticated and
 * anonymous requests carry no ambient credential, so they need none.
 */
export const csrfOk = (auth: RequestAuth, method: string, headerToken: string | undefined, formToken: string | undefined): boolean => {
  if (!unsafeMethods.has(method) || auth.via !== "session" || auth.session === undefined) return true
  const given = headerToken ?? formToken
  return given !== undefined && given === auth.session.csrfToken
}
