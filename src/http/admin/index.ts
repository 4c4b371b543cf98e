// The admin JSON API (docs/http.md) under /admin/host/api, one module per concern, declared in
// http/contracts/Admin.ts and served by http/api/AdminHandlers.ts. Each handler reads its caller (checked by the
// endpoint's statement, http/contracts/Security.ts), decodes
// its input (Decode.ts, with the contract's schemas), calls one use case (src/usecases/) and answers the
// contract's body or the refusal.

export { activity, activityPage } from "./Activity.js"
export { adoptDesiredState, desiredState } from "./DesiredState.js"
export { extensionDetail, extensionDoctor, extensionHealthNow, extensionImpact, extensionsOverview, health, listExtensions } from "./Extensions.js"
export { availableUpdates, extensionOperation, updateAll } from "./Operations.js"
export { reconcile } from "./Reconcile.js"
export { registryInstall, registrySearch } from "./Registry.js"
export { createServer, deleteServer } from "./Servers.js"
export { readSettings, writeSettings } from "./Settings.js"
export { uploadInstall, uploadPreview } from "./Uploads.js"
