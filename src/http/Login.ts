import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { Eta } from "eta"
import { sessionCookieName, sessionLifetimeSeconds } from "../panel/Session.js"
import { authenticate, header, requireCsrf, ServerSessions } from "./Context.js"
import { signInVerdict } from "./Auth.js"
import { clientOrigin, TrustedProxies } from "./ClientAddress.js"
import { badRequest, forbidden, HttpFailure, unauthorized } from "./Errors.js"

const storeUnavailable = () => new HttpFailure({ status: 503, code: "StoreUnavailable", detail: "the database is unavailable: sign out again shortly" })
import { consume, signInTries, signInTriesPerAddress } from "./RateLimits.js"

// The embedded panel's login (docs/http.md "Authentication (embedded panel)"): a form at /auth/login (username + API token, as issued
// by `host panel:token`), answering with a signed, HttpOnly, SameSite=Lax session cookie. JSON clients
// may POST {username, token} and get {data: {user, csrfToken}}. /auth/session tells the page who is
// signed in and its CSRF token; /auth/logout ends the session (CSRF-checked).

const eta = new Eta({ autoEscape: true, useWith: false })

// The sign-in page wears the reference panel's look (/host/panel.css, /host/utility.css: docs/frontend.md)
// and carries the auth.container slots around the form.
const loginTemplate = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Sign in · <%= it.panelName %></title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="/host/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/host/utility.css">
<link rel="stylesheet" href="/host/panel.css">
</head>
<body>
<main class="flex min-h-screen flex-col items-center justify-center gap-4 px-4 py-10">
<div class="host-slot w-full max-w-sm" data-host-slot="auth.container.before"></div>
<form class="host-card flex w-full max-w-sm flex-col gap-4 p-6 sm:p-8" method="post" action="/auth/login">
<div class="flex items-center gap-3">
<span class="host-logo" aria-hidden="true">H</span>
<div>
<h1 class="text-lg font-semibold text-host-text-primary">Sign in</h1>
<p class="text-sm text-host-text-muted"><%= it.panelName %></p>
</div>
</div>
<% if (it.error) { %><p class="error rounded-md border border-host-danger px-3 py-2 text-sm text-host-danger" role="alert"><%= it.error %></p><% } %>
<label class="flex flex-col gap-1.5 text-sm text-host-text-secondary">Username <input class="host-input" name="username" autocomplete="username" value="<%= it.username %>" required autofocus></label>
<label class="flex flex-col gap-1.5 text-sm text-host-text-secondary">API token <input class="host-input font-mono" name="password" type="password" autocomplete="current-password" required></label>
<input type="hidden" name="redirect" value="<%= it.redirect %>">
<button class="host-button host-button--primary py-2.5" type="submit">Sign in</button>
<p class="text-xs text-host-text-muted">Issue a token with <code class="font-mono text-host-text-secondary">host panel:token &lt;username&gt;</code>.</p>
</form>
<div class="host-slot w-full max-w-sm" data-host-slot="auth.container.after"></div>
</main>
</body>
</html>
`

const renderLogin = (data: { panelName: string; error: string | undefined; username: string; redirect: string }, status = 200) =>
  HttpServerResponse.text(eta.renderString(loginTemplate, data), { status, contentType: "text/html; charset=utf-8" })

/**
 * Only same-site paths: `/x`, never `//host`, absolute URLs, backslashes or control characters (browsers
 * drop tabs and newlines, so `/\t/evil.example` would leave the site). The decision is made on the
 * normalised URL, the one the browser will follow: `/.//evil.test`, `/a/..//evil.test` and
 * `/%2e//evil.test` all normalise to `//evil.test`, which is another site (docs/decisions.md).
 */
export const safeRedirect = (value: string | undefined): string => {
  if (value === undefined || !value.startsWith("/") || /[\u0000-\u001f\u007f\\]/.test(value)) return "/"
  const base = "http://panel.invalid"
  const url = URL.parse(value, base)
  if (url === null || url.origin !== base) return "/"
  const normalised = `${url.pathname}${url.search}${url.hash}`
  // The answer must itself be a same-site path that normalises to itself (a fixed point), so the
  // Location header means the same to every client that resolves it again.
  if (!normalised.startsWith("/") || normalised.startsWith("//") || /[\u0000-\u001f\u007f\\]/.test(normalised)) return "/"
  const again = URL.parse(normalised, base)
  if (again === null || again.origin !== base || `${again.pathname}${again.search}${again.hash}` !== normalised) return "/"
  return normalised
}

const LoginForm = Schema.Struct({
  username: Schema.String,
  password: Schema.optional(Schema.String),
  token: Schema.optional(Schema.String),
  redirect: Schema.optional(Schema.String)
})

export const loginPage = Effect.gen(function*() {
  const { live, request } = yield* authenticate
  const redirect = safeRedirect(new URLSearchParams(request.url.split("?")[1] ?? "").get("redirect") ?? undefined)
  return renderLogin({ panelName: live.panelInfo.name, error: undefined, username: "", redirect })
})

export const login = Effect.gen(function*() {
  const { live, request } = yield* authenticate
  const sessions = yield* ServerSessions
  // A form sent from another site is refused before its body is read (docs/http.md "Signing in (embedded panel)").
  const crossSite = signInVerdict(
    { method: request.method, headers: request.headers, peer: Option.getOrUndefined(request.remoteAddress) },
    live.access,
    yield* TrustedProxies
  )
  if (!crossSite.ok) {
    // A form is answered with the panel's own sign-in page saying why (403, no cookie), so a person who
    // followed such a form can sign in from there; a JSON client gets the error body.
    if ((header(request, "content-type") ?? "").includes("json")) return yield* forbidden(crossSite.detail)
    return renderLogin({ panelName: live.panelInfo.name, error: `${crossSite.detail}.`, username: "", redirect: "/" }, 403)
  }
  const json = (header(request, "content-type") ?? "").includes("json")
  const form = json
    ? yield* HttpServerRequest.schemaBodyJson(LoginForm).pipe(Effect.mapError(() => badRequest("expected {username, token}")))
    : yield* HttpServerRequest.schemaBodyUrlParams(LoginForm).pipe(Effect.mapError(() => badRequest("expected the fields username and password")))
  // Counted before the token is checked, so guessing costs a try whether it is right or wrong.
  const client = yield* clientOrigin
  const limited = yield* Effect.flip(Effect.zipRight(
    consume(`sign-in|${client.address}`, signInTriesPerAddress, `too many sign-in tries from ${client.address}: at most ${signInTriesPerAddress} a minute`),
    consume(
      `sign-in|${client.address}|${form.username.toLowerCase()}`,
      signInTries,
      `too many sign-in tries for ${form.username} from ${client.address}: at most ${signInTries} sign-in tries a minute per client and user`
    )
  )).pipe(Effect.option)
  if (limited._tag === "Some") {
    if (json) return yield* limited.value
    // The form says it on the page, with the same status and Retry-After.
    return HttpServerResponse.setHeaders(
      renderLogin({ panelName: live.panelInfo.name, error: `${limited.value.detail}.`, username: form.username, redirect: safeRedirect(form.redirect) }, 429),
      limited.value.headers ?? {}
    )
  }
  const secret = form.token ?? form.password ?? ""
  const user = live.panel.userByName(form.username)
  const valid = user !== undefined && secret !== "" && live.panel.userByToken(secret)?.id === user.id
  if (!valid || user === undefined) {
    if (json) return yield* unauthorized("unknown username or wrong token")
    return renderLogin(
      { panelName: live.panelInfo.name, error: "Unknown username or wrong token.", username: form.username, redirect: safeRedirect(form.redirect) },
      401
    )
  }
  const { cookie, session } = sessions.issue(user)
  // Secure only when the client reached a trusted proxy over HTTPS (docs/operations.md "Behind a proxy").
  const secure = client.secure
  const response = json
    ? yield* HttpServerResponse.json({
      data: { user: { id: user.id, username: user.username, email: user.email, admin: user.admin }, csrfToken: session.csrfToken }
    })
    : HttpServerResponse.redirect(safeRedirect(form.redirect), { status: 303 })
  return HttpServerResponse.unsafeSetCookie(response, sessionCookieName, cookie, {
    httpOnly: true,
    sameSite: "lax",
    path: "/",
    maxAge: `${sessionLifetimeSeconds} seconds`,
    secure
  })
})

export const session = Effect.gen(function*() {
  const { auth } = yield* authenticate
  if (auth.user === undefined) return yield* unauthorized()
  return yield* HttpServerResponse.json({
    data: {
      user: { id: auth.user.id, username: auth.user.username, email: auth.user.email, admin: auth.user.admin },
      csrfToken: auth.session?.csrfToken ?? null
    }
  })
})

/**
 * Ends the session on every replica: it is recorded as revoked in the database, so the old cookie answers
 * 401 from the next request on wherever it is sent (docs/http.md "Signing out"). The clearing
 * cookie carries the same attributes as the one it replaces.
 */
export const logout = Effect.gen(function*() {
  const caller = yield* authenticate
  yield* requireCsrf(caller, { expected: "X-CSRF-Token" })
  const sessions = yield* ServerSessions
  if (caller.auth.via === "session" && caller.auth.session !== undefined) {
    yield* sessions.revoke(caller.auth.session).pipe(Effect.mapError(() => storeUnavailable()))
  }
  const client = yield* clientOrigin
  return HttpServerResponse.expireCookie(HttpServerResponse.empty({ status: 204 }), sessionCookieName, {
    path: "/",
    httpOnly: true,
    sameSite: "lax",
    secure: client.secure
  })
})
