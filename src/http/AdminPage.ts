import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Eta } from "eta"
import { HostConfig } from "../config/HostConfig.js"
import { LiveRuntime } from "../runtime/LiveState.js"
import { authenticate } from "./Context.js"
import type { AdminBootstrap } from "./contracts/Admin.js"
import { forbidden } from "./Errors.js"
import { uploadPolicyOf } from "../usecases/UploadPolicy.js"
import { makeNonce, pageHeaders } from "./SecurityHeaders.js"

// The admin screens' page shell (docs/admin.md): one HTML page for every admin screen path, which loads
// the panel's React (vendor.js), the panel's theme and the admin app. The app does everything through
// the admin JSON API with the session's CSRF token. Extension bundles and the bridge are deliberately
// not loaded here: a broken extension must never keep an admin from disabling it.

const eta = new Eta({ autoEscape: true, useWith: false })

const template = `<!doctype html>
<html lang="en" data-host-panel="<%= it.panelKind %>">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Extensions · <%= it.panelName %></title>
<link rel="icon" href="/host/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/host/utility.css">
<link rel="stylesheet" href="/host/panel.css">
<link rel="stylesheet" href="/host/admin.css">
<script nonce="<%= it.nonce %>">window.__HOST__ = <%~ it.bootstrap %>;</script>
<script defer src="/host/vendor.js"></script>
<script defer src="/host/admin.js"></script>
</head>
<body>
<div id="admin-app"></div>
<noscript>The extension admin needs JavaScript. The same operations are available with the host CLI (docs/admin.md).</noscript>
</body>
</html>
`

/** JSON inside a <script> element: nothing in it may close the element or break the line. */
const scriptJson = (value: unknown) =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029")

/** GET of an admin screen: signed out → the sign-in form (and back); not an admin → 403. */
export const adminPage = Effect.gen(function*() {
  const { auth, live, request } = yield* authenticate
  if (auth.user === undefined) {
    return HttpServerResponse.redirect(`/auth/login?redirect=${encodeURIComponent(request.url.split("?")[0] ?? "/admin/host/extensions")}`, {
      status: 303,
      headers: { "cache-control": "no-store" }
    })
  }
  if (!auth.user.admin) return yield* forbidden("this needs a panel administrator")
  const { config, paths } = yield* HostConfig
  const nonce = yield* makeNonce
  const html = eta.renderString(template, {
    nonce,
    panelName: live.panelInfo.name,
    // Under a real panel admin.css gives the screens that panel's palette (docs/admin.md "Under a real panel").
    panelKind: live.panelInfo.kind,
    bootstrap: scriptJson({
      version: config.version,
      baseUrl: yield* (yield* LiveRuntime).baseUrl,
      csrfToken: auth.session?.csrfToken ?? null,
      csrf: live.access.csrf,
      user: { id: auth.user.id, username: auth.user.username, email: auth.user.email ?? "", admin: true },
      panel: { kind: live.panelInfo.kind, name: live.panelInfo.name, version: live.panelInfo.version ?? null },
      admin: { desiredState: paths.desiredState, registry: config.registry_url !== "", uploads: uploadPolicyOf(config).setting }
    } satisfies AdminBootstrap)
  })
  return HttpServerResponse.text(html, {
    contentType: "text/html; charset=utf-8",
    headers: { "cache-control": "no-store", ...pageHeaders(nonce) }
  })
})
