import { cookieValue, type PanelAccess, type RequestAuth } from "../panel/Access.js"
import { resolveClient, type TrustedProxiesService } from "./ClientAddress.js"

// Who is asking (docs/http.md "Authentication"): the panel driver answers (panel/Access.ts) — the embedded
// panel by its tokens and signed session cookie, a real panel by its own client API. Here: the CSRF rule
// for unsafe requests that carry an ambient credential (the session cookie).

export { cookieValue, type RequestAuth, resolveAuth } from "../panel/Access.js"

export const unsafeMethods: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** What the CSRF check reads of a request. */
export interface CsrfRequest {
  readonly method: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  /** The socket peer: only a trusted proxy's X-Forwarded-Host / -Proto count (docs/operations.md "Behind a proxy"). */
  readonly peer?: string | undefined
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

/** The connection's scheme: `host serve` listens on plain HTTP (docs/operations.md "Behind a proxy"). */
const listenerScheme = "http"

/** A host as a browser's `Host` carries it: a name or address and an optional port, nothing else. */
const plainHost = /^[^\s/?#@\\]+$/

/** `scheme://host` as a URL origin (lower case, default port dropped), or undefined when it is not one. */
const originOf = (scheme: string, host: string | undefined): string | undefined => {
  if (host === undefined || !plainHost.test(host)) return undefined
  const text = `${scheme}://${host}`
  return URL.canParse(text) ? new URL(text).origin : undefined
}

/** An `Origin` header normalised the same way (`https://x:443` is `https://x`); `null` and garbage are undefined. */
const normalisedOrigin = (origin: string): string | undefined => {
  if (!/^https?:\/\//i.test(origin) || !URL.canParse(origin)) return undefined
  const url = new URL(origin)
  return url.pathname === "/" && url.search === "" && url.hash === "" && url.username === "" ? url.origin : undefined
}

/**
 * The panel's origin as this request should see it (docs/panels.md "CSRF"): `base_url`'s when configured;
 * else, from a trusted proxy, its `X-Forwarded-Host` (the last entry: the one the proxy next to us wrote;
 * Apache appends to what the client sent) with `X-Forwarded-Proto`; else the request's own `Host` on the
 * listener's scheme. `undefined` when none can be told (no Host at all).
 */
export const expectedOrigin = (request: CsrfRequest, access: PanelAccess, proxies: TrustedProxiesService | undefined): string | undefined => {
  if (access.origin !== undefined) return access.origin
  const host = headerOf(request, "host")
  if (proxies === undefined || request.peer === undefined) return originOf(listenerScheme, host)
  const client = resolveClient(request.peer, { "x-forwarded-proto": headerOf(request, "x-forwarded-proto") }, proxies)
  if (!client.forwarded) return originOf(listenerScheme, host)
  const forwardedHost = (headerOf(request, "x-forwarded-host") ?? "").split(",").map((entry) => entry.trim()).filter((entry) => entry !== "").at(-1)
  return originOf(client.secure ? "https" : listenerScheme, forwardedHost ?? host)
}

/** What a CSRF check found: nothing wrong, or the refusal's detail. */
export type CsrfVerdict = { readonly ok: true } | { readonly ok: false; readonly detail: string }

const passed: CsrfVerdict = { ok: true }

/** The rule a real panel's refusal names: the headers its own HTTP client sends. */
export const panelCsrfRule = "the X-XSRF-TOKEN header equal to the XSRF-TOKEN cookie, from a page of the panel"

/** A value from the request, bounded and quoted, for a refusal's detail. */
const quoted = (value: string) => JSON.stringify(value.length > 120 ? `${value.slice(0, 120)}…` : value)

/**
 * CSRF (docs/http.md "CSRF"): an unsafe request authenticated by the session cookie must prove it comes
 * from a page of the panel. Embedded panel (`host`): the session's token in `X-CSRF-Token` (or the form
 * field `_token`). A real panel (`panel`): what the panel's own HTTP client sends — `X-XSRF-TOKEN` equal to
 * the `XSRF-TOKEN` cookie (URL-decoded) — and an `Origin`, when sent, of the panel itself as scheme, host
 * and port (`expectedOrigin`). Token-authenticated and anonymous requests carry no ambient credential, so
 * they need none. `expected` words the embedded rule's refusal; a real panel's names its own headers.
 */
export const csrfVerdict = (
  auth: RequestAuth,
  request: CsrfRequest,
  access: PanelAccess,
  options: { readonly formToken?: string | undefined; readonly proxies?: TrustedProxiesService | undefined; readonly expected?: string | undefined } = {}
): CsrfVerdict => {
  if (!unsafeMethods.has(request.method) || auth.via !== "session") return passed
  if (access.csrf === "host") {
    const given = headerOf(request, "x-csrf-token") ?? options.formToken
    return auth.session !== undefined && given !== undefined && given === auth.session.csrfToken
      ? passed
      : { ok: false, detail: `missing or wrong CSRF token (${options.expected ?? "X-CSRF-Token"})` }
  }
  const cookie = cookieValue(headerOf(request, "cookie"), "XSRF-TOKEN")
  const given = headerOf(request, "x-xsrf-token")
  if (cookie === undefined || given === undefined || given === "" || decoded(given) !== decoded(cookie)) {
    return { ok: false, detail: `missing or wrong CSRF token (${panelCsrfRule})` }
  }
  const origin = headerOf(request, "origin")
  if (origin === undefined) return passed
  const expected = expectedOrigin(request, access, options.proxies)
  if (expected !== undefined && normalisedOrigin(origin) === expected) return passed
  return {
    ok: false,
    detail: `the request's Origin ${quoted(origin)} is not the panel's origin ${expected === undefined ? "(the request names no Host)" : quoted(expected)}: ` +
      `send ${panelCsrfRule}; behind a web server, set base_url to the panel's address (docs/panels.md "CSRF")`
  }
}

/**
 * Login CSRF (docs/http.md "Signing in (embedded panel)"): a sign-in that a browser sends from another site is
 * refused, so no page elsewhere can sign a visitor into an account of its choosing. A browser says where a
 * form came from in `Origin` (every POST since 2020) and `Sec-Fetch-Site`; `cross-site`, or an `Origin`
 * (`null` included) that is not the panel's own as `expectedOrigin` tells it, is refused. A request with
 * neither header is not a browser's form (curl, scripts) and carries no ambient credential to abuse: it
 * passes, as it could sign in anyway.
 */
export const signInVerdict = (request: CsrfRequest, access: PanelAccess, proxies: TrustedProxiesService | undefined): CsrfVerdict => {
  const site = headerOf(request, "sec-fetch-site")
  if (site !== undefined && site.trim().toLowerCase() === "cross-site") {
    return { ok: false, detail: "sign-in refused: the form was sent from another site (Sec-Fetch-Site: cross-site); sign in on the panel's own page" }
  }
  const origin = headerOf(request, "origin")
  if (origin === undefined) return passed
  const expected = expectedOrigin(request, access, proxies)
  if (expected !== undefined && normalisedOrigin(origin) === expected) return passed
  return {
    ok: false,
    detail: `sign-in refused: the form's Origin ${quoted(origin)} is not the panel's origin ${expected === undefined ? "(the request names no Host)" : quoted(expected)}; ` +
      `sign in on the panel's own page`
  }
}

/** Whether the CSRF check passes (`csrfVerdict` without a trusted proxy: the request's own Host counts). */
export const csrfOk = (auth: RequestAuth, request: CsrfRequest, access: PanelAccess, formToken?: string): boolean =>
  csrfVerdict(auth, request, access, { formToken }).ok
