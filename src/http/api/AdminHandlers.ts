import { HttpApiBuilder } from "@effect/platform"
import * as Admin from "../admin/index.js"
import { HostApi } from "../contracts/Api.js"

// The admin API and the CI webhook (http/contracts/Admin.ts) implemented with HttpApiBuilder. Each
// handler is the admin module's own (http/admin/): it reads its caller (the endpoint's statement checked
// it first, http/contracts/Security.ts), takes its query as HttpApiBuilder decoded it or reads its body
// (declared in the contract, decoded by http/admin/Decode.ts), calls one use case, and answers the
// contract's body through api/Respond.ts. Why the endpoints with a body are `handleRaw`: the note atop
// http/contracts/Admin.ts.

export const AdminLive = HttpApiBuilder.group(HostApi, "admin", (handlers) =>
  handlers
    .handle("list", () => Admin.listExtensions)
    .handleRaw("install", ({ urlParams }) => Admin.uploadInstall(urlParams))
    .handle("overview", () => Admin.extensionsOverview)
    .handleRaw("preview", () => Admin.uploadPreview)
    .handle("detail", ({ path }) => Admin.extensionDetail(path))
    .handle("impact", ({ path }) => Admin.extensionImpact(path))
    .handle("healthNow", ({ path }) => Admin.extensionHealthNow(path))
    .handle("doctor", ({ path }) => Admin.extensionDoctor(path))
    .handle("readSettings", ({ path }) => Admin.readSettings(path))
    .handleRaw("writeSettings", ({ path }) => Admin.writeSettings(path))
    .handleRaw("operation", ({ path }) => Admin.extensionOperation(path))
    .handle("updates", () => Admin.availableUpdates)
    .handle("updateAll", () => Admin.updateAll)
    .handle("activity", ({ urlParams }) => Admin.activity(urlParams))
    .handle("activityPage", ({ urlParams }) => Admin.activityPage(urlParams))
    .handle("health", () => Admin.health)
    .handleRaw("reconcile", () => Admin.reconcile)
    .handleRaw("createServer", () => Admin.createServer)
    .handle("deleteServer", ({ path }) => Admin.deleteServer(path))
    .handle("registrySearch", ({ urlParams }) => Admin.registrySearch(urlParams))
    .handleRaw("registryInstall", () => Admin.registryInstall)
    .handle("desiredState", () => Admin.desiredState)
    .handleRaw("adopt", () => Admin.adoptDesiredState))

/** `POST /admin/host/reconcile`: the same handler as the admin API's reconcile (it tells a signed delivery from an admin). */
export const WebhookLive = HttpApiBuilder.group(HostApi, "webhook", (handlers) => handlers.handleRaw("reconcile", () => Admin.reconcile))
