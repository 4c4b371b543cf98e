import { HttpRouter } from "@effect/platform"
import * as AdminApi from "./admin/index.js"
import { adminPage } from "./AdminPage.js"
import { frameworkAsset } from "./Static.js"

// The routes of the admin screens (docs/admin.md): the single-page app's shell for each screen's path,
// and the admin JSON API additions they call (docs/http.md "Admin screens").

export const routes = HttpRouter.empty.pipe(
  HttpRouter.get("/admin/host/extensions/:vendor/:name", adminPage),
  HttpRouter.get("/admin/host/registry", adminPage),
  HttpRouter.get("/admin/host/desired-state", adminPage),
  HttpRouter.get("/admin/host/activity", adminPage),
  HttpRouter.get("/host/admin.js", frameworkAsset("admin.js")),
  HttpRouter.get("/host/admin.css", frameworkAsset("admin.css")),
  HttpRouter.get("/admin/host/api/extensions/overview", AdminApi.extensionsOverview),
  HttpRouter.post("/admin/host/api/extensions/preview", AdminApi.uploadPreview),
  HttpRouter.get("/admin/host/api/extensions/:vendor/:name", AdminApi.extensionDetail),
  HttpRouter.get("/admin/host/api/extensions/:vendor/:name/impact", AdminApi.extensionImpact),
  HttpRouter.post("/admin/host/api/extensions/:vendor/:name/health", AdminApi.extensionHealthNow),
  HttpRouter.get("/admin/host/api/extensions/:vendor/:name/doctor", AdminApi.extensionDoctor),
  HttpRouter.get("/admin/host/api/registry", AdminApi.registrySearch),
  HttpRouter.post("/admin/host/api/registry/install", AdminApi.registryInstall),
  HttpRouter.get("/admin/host/api/desired-state", AdminApi.desiredState),
  HttpRouter.post("/admin/host/api/desired-state/adopt", AdminApi.adoptDesiredState),
  HttpRouter.get("/admin/host/api/activity/page", AdminApi.activityPage)
)
