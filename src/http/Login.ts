import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Schema } from "effect"
import { Eta } from "eta"
import { sessionCookieName, sessionLifetimeSeconds } from "../panel/Session.js"
import { csrfOk } from "./Auth.js"
import { authenticate, header, ServerSessions } from "./Context.js"
import { badRequest, HttpFailure, unauthorized } from "./Errors.js"

// The embedded panel's login (docs/http.md "Authentication (embedded panel)"): a form at /auth/login (username + API token, as issued
// by `host panel:token`), answering with a signed, HttpOnly, SameSite=Lax session cookie. JSON clients
// may POST {username, token} and get {data: {user, csrfToken}}. /auth/session tells the page who is
// signed in and its CSRF token; /auth/logout ends the session (CSRF-checked).

const eta = new Eta({ autoEscape: true, useWith: false })

const loginTemplate = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Sign in · <%= it.panelName %></title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;background:#0f172a;color:#f8fafc;display:flex;min-height:100vh;align-items:center;justify-content:center;margin:0}
form{background:#1e293b;padding:2rem;border-radius:12px;width:20rem;display:flex;flex-direction:column;gap:.75rem}
input{padding:.5rem;border-radius:6px;border:1px solid #475569;background:#0f172a;color:inherit}
button{padding:.6rem;border:0;border-radius:6px;background:#3b82f6;color:#fff;font-weight:600;cursor:pointer}
.error{color:#fca5a5}
</style>
</head>
<body>
<div data-host-slot="auth.container.before"></div>
<form method="post" action="/auth/login">
<h1>Sign in to <%= it.panelName %></h1>
<% if (it.error) { %><p class="error"><%= it.error %></p><% } %>
<label>Username <input name="username" autocomplete="username" value="<%= it.username %>" required></label>
<label>API token <input name="password" type="password" autocomplete="current-password" required></label>
<input type="hidden" name="redirect" value="<%= it.redirect %>">
<button type="submit">Sign in</button>
<p><small>Issue a token with <code>host panel:token &lt;username&gt;</code>.</small></p>
</form>
<div data-host-slot="auth.container.after"></div>
</body>
</html>
`

const renderLogin = (data: { panelName: string; error: string | undefined; username: string; redirect: string }, status = 200) =>
  HttpServerResponse.text(eta.renderString(loginTemplate, data), { status, contentType: "text/html; charset=utf-8" })

/**
 * Only same-site paths: `/x`, never `//host`, absolute URLs, backslashes or control characters (browsers
 * drop tabs and newlines, so `/\t/evil.example` would leave the site).
 */
const safeRedirect = (value: string | undefined): string => {
  if (value === undefined || !value.startsWith("/") || /[\u0000-\u001f\u007f\\]/.test(value)) return "/"
  const base = "http://panel.invalid"
  const url = new URL(value, base)
  return url.origin === base ? `${url.pathname}${url.search}${url.hash}` : "/"
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
  const json = (header(request, "content-type") ?? "").includes("json")
  const form = json
    ? yield* HttpServerRequest.schemaBodyJson(LoginForm).pipe(Effect.mapError(() => badRequest("expected {username, token}")))
    : yield* HttpServerRequest.schemaBodyUrlParams(LoginForm).pipe(Effect.mapError(() => badRequest("expected the fields username and password")))
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
  const secure = (header(request, "x-forwarded-proto") ?? "") === "https"
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

export const logout = Effect.gen(function*() {
  const { auth, request } = yield* authenticate
  if (!csrfOk(auth, request.method, header(request, "x-csrf-token"), undefined)) {
    return yield* new HttpFailure({ status: 403, code: "CsrfTokenMismatch", detail: "missing or wrong CSRF token (X-CSRF-Token)" })
  }
  return HttpServerResponse.expireCookie(HttpServerResponse.empty({ status: 204 }), sessionCookieName, { path: "/" })
})
