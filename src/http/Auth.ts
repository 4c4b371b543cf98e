import { cookieValue, type PanelAccess, type RequestAuth } from "../panel/Access.js"

// Who is asking (docs/http.md "Authentication"): the panel driver answers (panel/Access.ts) — the embedded
// panel by its tokens and signed session cookie, a real panel by its own client API. Here: the CSRF rule
// for unsafe requests that carry an ambient credential (the session cookie).

export { cookieValue, type RequestAuth, resolveAuth } from "../panel/Access.js"

export const unsafeMethods: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** What the CSRF check reads of a request. */
export interface CsrfRequest {
  readonly method: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
}

const headerOf = (request: CsrfRequest, name: string) => {
  const value = request.headers[name]
  return typeof value === "string" ? value : undefined
}

const decoded = (value: string) => {
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

/**
 * CSRF (docs/http.md "CSRF"): an unsafe request authenticated by the session cookie must prove it comes
 * from a page of the panel. Embedded panel (`host`): the session's token in `X-CSRF-Token` (or the form
 * field `_token`). A real panel (`panel`): what the panel's own HTTP client sends — `X-XSRF-TOKEN` equal to
 * the `XSRF-TOKEN` cookie (URL-decoded) — and an `Origin`, when sent, of the panel itself (the origin of
 * `base_url` when configured, else the request's own Host). Token-authenticated and anonymous requests
 * carry no ambient credential, so they need none.
 */
export const csrfOk = (auth: RequestAuth, request: CsrfRequest, access: PanelAccess, formToken?: string): boolean => {
  if (!unsafeMethods.has(request.method) || auth.via !== "session") return true
  if (access.csrf === "host") {
    const given = headerOf(request, "x-csrf-token") ?? formToken
    return auth.session !== undefined && given !== undefined && given === auth.session.csrfToken
  }
  const cookie = cookieValue(headerOf(request, "cookie"), "XSRF-TOKEN")
  const given = headerOf(request, "x-xsrf-token")
  if (cookie === undefined || given === undefined || given === "" || decoded(given) !== decoded(cookie)) return false
  const origin = headerOf(request, "origin")
  if (origin === undefined) return true
  if (access.origin !== undefined) return origin === access.origin
  try {
    return new URL(origin).host === headerOf(request, "host")
  } catch {
    return false
  }
}

/** The header a failed CSRF check names. */
export const csrfHeaderName = (access: PanelAccess) => (access.csrf === "host" ? "X-CSRF-Token" : "X-XSRF-TOKEN with the XSRF-TOKEN cookie, from the panel's origin")
