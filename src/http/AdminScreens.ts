import { HttpRouter } from "@effect/platform"
import { adminPage } from "./AdminPage.js"
import { frameworkAsset } from "./Static.js"

// The routes of the admin screens (docs/admin.md): the single-page app's shell for each screen's path and
// the app's files. The JSON API they call is a typed contract (http/contracts/Admin.ts).

export const routes = HttpRouter.empty.pipe(
  HttpRouter.get("/admin/host/extensions/:vendor/:name", adminPage),
  HttpRouter.get("/admin/host/registry", adminPage),
  HttpRouter.get("/admin/host/desired-state", adminPage),
  HttpRouter.get("/admin/host/activity", adminPage),
  HttpRouter.get("/host/admin.js", frameworkAsset("admin.js")),
  HttpRouter.get("/host/admin.css", frameworkAsset("admin.css"))
)
