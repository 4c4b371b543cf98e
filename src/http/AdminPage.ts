import { HttpServerResponse } from "@effect/platform"
import { Effect, Either } from "effect"
import { Eta } from "eta"
import { formatPlan } from "../reconcile/PlanRender.js"
import { HostConfig } from "../config/HostConfig.js"
import { Reconciler } from "../reconcile/Reconciler.js"
import { extensionView } from "../runtime/ExtensionView.js"
import { readQuarantine } from "../runtime/Quarantine.js"
import { ActivityRepo } from "../store/ActivityRepo.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { authenticate } from "./Context.js"
import { forbidden } from "./Errors.js"

// GET /admin/host/extensions: the admin page. Server-rendered (Eta, auto-escaping) from the same data as
// the JSON API; its buttons and upload form call that API with the session's CSRF token, so every change
// goes through the lifecycle operations like the CLI's.

const eta = new Eta({ autoEscape: true, useWith: false })

const template = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="<%= it.csrfToken %>">
<title>Extensions · <%= it.panelName %></title>
<style>
body{font-family:system-ui,sans-serif;margin:0;background:#f8fafc;color:#0f172a}
main{max-width:72rem;margin:0 auto;padding:1.5rem}
table{width:100%;border-collapse:collapse;background:#fff}
th,td{text-align:left;padding:.5rem;border-bottom:1px solid #e2e8f0;vertical-align:top}
section{margin:1.5rem 0}
button{margin-right:.25rem;cursor:pointer}
pre{background:#0f172a;color:#e2e8f0;padding:1rem;border-radius:8px;overflow:auto}
.quarantined{color:#b91c1c}
#message{min-height:1.2em;color:#b91c1c}
</style>
</head>
<body>
<main>
<h1>Extensions</h1>
<p id="message" role="status"></p>
<section>
<table>
<thead><tr><th>ID</th><th>Name</th><th>Version</th><th>Status</th><th>Signature</th><th>Source</th><th>Actions</th></tr></thead>
<tbody>
<% if (it.extensions.length === 0) { %><tr><td colspan="7">No extensions installed.</td></tr><% } %>
<% for (const extension of it.extensions) { %>
<tr data-extension="<%= extension.id %>">
<td><%= extension.id %></td>
<td><%= extension.name %></td>
<td><%= extension.version %></td>
<td class="<%= extension.status %>"><%= extension.status %><% if (extension.quarantine) { %>: <%= extension.quarantine %><% } %></td>
<td><%= extension.signature %></td>
<td><%= extension.source %></td>
<td>
<% if (extension.enabled) { %><button data-action="disable">Disable</button><% } else { %><button data-action="enable">Enable</button><% } %>
<button data-action="update">Update</button>
<button data-action="remove">Remove</button>
</td>
</tr>
<% } %>
</tbody>
</table>
</section>
<section>
<h2>Install a .host archive</h2>
<form id="upload"><input type="file" name="archive" accept=".host" required> <input name="signature" placeholder="detached signature (optional)"> <button type="submit">Install</button></form>
</section>
<section>
<h2>Desired state</h2>
<p><%= it.desiredState %></p>
<pre><%= it.plan %></pre>
<% if (it.planReady) { %><button id="reconcile">Apply the plan</button><% } %>
</section>
<section>
<h2>Activity</h2>
<table>
<thead><tr><th>When</th><th>Extension</th><th>Action</th><th>Summary</th><th>By</th></tr></thead>
<tbody>
<% for (const row of it.activity) { %>
<tr><td><%= row.createdAt %></td><td><%= row.extensionId %></td><td><%= row.action %></td><td><%= row.summary %></td><td><%= row.actor %></td></tr>
<% } %>
</tbody>
</table>
<p><a href="/admin/host/api/health">Health checks (JSON)</a></p>
</section>
</main>
<script>
const csrf = document.querySelector('meta[name="csrf-token"]').content
const message = document.getElementById("message")
const call = async (url, init) => {
  const response = await fetch(url, { credentials: "same-origin", ...init, headers: { "x-csrf-token": csrf, ...(init.headers || {}) } })
  if (response.ok) return location.reload()
  const body = await response.json().catch(() => null)
  message.textContent = body && body.errors ? body.errors.map((error) => error.detail).join("; ") : "The request failed (" + response.status + ")"
}
for (const button of document.querySelectorAll("button[data-action]")) {
  button.addEventListener("click", () => {
    const id = button.closest("tr").dataset.extension
    const action = button.dataset.action
    if (action === "remove" && !confirm("Remove " + id + "? Its migrations are rolled back and its settings deleted.")) return
    call("/admin/host/api/extensions/" + id + "/" + action, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
  })
}
document.getElementById("upload").addEventListener("submit", (event) => {
  event.preventDefault()
  call("/admin/host/api/extensions", { method: "POST", body: new FormData(event.target) })
})
const reconcile = document.getElementById("reconcile")
if (reconcile) reconcile.addEventListener("click", () =>
  call("/admin/host/api/reconcile", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }))
</script>
</body>
</html>
`

export const adminPage = Effect.gen(function*() {
  const { auth, live, request } = yield* authenticate
  if (auth.user === undefined) {
    return HttpServerResponse.redirect(`/auth/login?redirect=${encodeURIComponent(request.url.split("?")[0] ?? "/admin/host/extensions")}`, { status: 303 })
  }
  if (!auth.user.admin) return yield* forbidden("this needs a panel administrator")
  const { paths } = yield* HostConfig
  const extensions = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.list)
  const quarantine = yield* readQuarantine
  const activity = yield* Effect.flatMap(ActivityRepo, (repo) => repo.list({ limit: 20 }))
  const plan = yield* Effect.flatMap(Reconciler, (reconciler) =>
    reconciler.plan({ file: paths.desiredState, prune: false, allowDestroy: false, env: process.env })).pipe(Effect.either)
  const html = eta.renderString(template, {
    panelName: live.panelInfo.name,
    csrfToken: auth.session?.csrfToken ?? "",
    extensions: extensions.map((extension) => {
      const view = extensionView(extension, quarantine)
      return { ...view, source: `${view.source.type} ${view.source.ref}` }
    }),
    activity: activity.map((row) => {
      const actor = (row.context as { actor?: { type?: unknown; user?: unknown } }).actor
      return { ...row, actor: `${String(actor?.type ?? "?")}${actor?.user === undefined ? "" : ` (${String(actor.user)})`}` }
    }),
    desiredState: paths.desiredState,
    plan: Either.match(plan, { onLeft: (error) => `The plan cannot be made: ${error.message}`, onRight: formatPlan }),
    planReady: Either.isRight(plan) && plan.right.actions.length > 0
  })
  return HttpServerResponse.text(html, { contentType: "text/html; charset=utf-8" })
})
