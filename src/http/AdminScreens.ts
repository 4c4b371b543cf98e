import { HttpRouter, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { adminPage } from "./AdminPage.js"
import { frameworkAsset } from "./Static.js"

// The routes of the admin screens (docs/admin.md): the single-page app's shell for each screen's path and
// the app's files. The JSON API they call is a typed contract (http/contracts/Admin.ts).

/**
 * `/admin/host` and `/admin/host/` are the addresses an admin types or is told (`host setup` prints
 * `<base_url>/admin/host/`): they lead to the first screen (docs/panels.md "Finding Host's admin screens").
 * A 302, not a 301: a browser must not remember it should a later version put a screen there.
 */
const toFirstScreen = Effect.succeed(HttpServerResponse.redirect("/admin/host/extensions", { status: 302 }))

export const routes = HttpRouter.empty.pipe(
  // The router ignores a trailing slash: this route answers `/admin/host/` too.
  HttpRouter.get("/admin/host", toFirstScreen),
  HttpRouter.get("/admin/host/extensions/:vendor/:name", adminPage),
  HttpRouter.get("/admin/host/registry", adminPage),
  HttpRouter.get("/admin/host/desired-state", adminPage),
  HttpRouter.get("/admin/host/activity", adminPage),
  HttpRouter.get("/host/admin.js", frameworkAsset("admin.js")),
  HttpRouter.get("/host/admin.css", frameworkAsset("admin.css"))
)
