// The admin JSON API (docs/http.md) under /admin/host/api, one module per concern. Each handler decodes
// its input (Decode.ts), calls one use case (src/usecases/) and renders the answer or the refusal.

export { activity, activityPage } from "./Activity.js"
export { adminActor } from "./Caller.js"
export { adoptDesiredState, desiredState } from "./DesiredState.js"
export { extensionDetail, extensionDoctor, extensionHealthNow, extensionImpact, extensionsOverview, health, listExtensions } from "./Extensions.js"
export { availableUpdates, extensionOperation, updateAll } from "./Operations.js"
export { reconcile } from "./Reconcile.js"
export { registryInstall, registrySearch } from "./Registry.js"
export { createServer, deleteServer } from "./Servers.js"
export { readSettings, writeSettings } from "./Settings.js"
export { uploadInstall, uploadPreview } from "./Uploads.js"
