import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, Multipart } from "@effect/platform"
import { Schema } from "effect"
import { ActivityAction } from "../../domain/Installed.js"
import { ApplyReport, Plan } from "../../domain/PlanFormat.js"
import { NewServer } from "../../panel/Servers.js"
import {
  ActivityPage,
  ActivityRow,
  AdoptResultView,
  AvailableUpdate,
  DesiredStateView,
  DoctorReportView,
  ExtensionDetail,
  ExtensionHealth,
  ExtensionListRow,
  ExtensionRow,
  HealthOverview,
  Impact,
  OperationResultView,
  RegistryEntry,
  RegistrySearchMeta,
  ServerRow,
  SettingsForm,
  UpdateOutcome,
  UploadPreview,
  UploadSetting
} from "../../usecases/Views.js"
import { Admin, AdminOrSigned, AdminUpload } from "./Security.js"
import { failsWith, groupFailsWith } from "./Statuses.js"

// The admin JSON API under /admin/host/api (docs/http.md "Admin JSON API (`/admin/host/api`, an admin's
// token or session)") and the CI webhook POST /admin/host/reconcile (docs/gitops.md) as typed contracts.
// The bodies are the use cases' read models (usecases/Views.ts), wrapped as `{data}`.
//
// Who may call each endpoint is stated on it (http/contracts/Security.ts): HttpApiBuilder checks it before
// anything of the request is decoded, so a signed-out or non-admin request is 401/403 before its query or
// body is looked at. Query strings are declared with `setUrlParams` and decoded by HttpApiBuilder (the
// operation endpoint's excepted: its flags are read after the CSRF check and the action, and an update's
// with the uploaded form). The bodies are declared here too but read by the handler (http/admin/, decoded by
// http/admin/Decode.ts with these schemas), with `handleRaw`: an upload streams its multipart form under
// the archive's limits; a reconcile's signature covers the exact bytes; a JSON body is bounded to 64 levels
// and an empty one reads as `{}` before its schema sees it, and a malformed one is a 400 — HttpApiBuilder
// would read it with `request.json` and turn a malformed body into a defect (docs/decisions.md "Typed HTTP
// contracts, exhaustive error answers, one CSRF check, one ETag answer" and "Who may call an endpoint is its middleware").

const data = <S extends Schema.Schema.Any>(schema: S) => Schema.Struct({ data: schema })

// ---- what the requests carry --------------------------------------------------------------------

/** A flag in a query string: `1`, `true`, `yes` or `on` (any case) is true, anything else false. */
export const QueryFlag = Schema.transform(Schema.String, Schema.Boolean, {
  strict: true,
  decode: (value) => ["1", "true", "yes", "on"].includes(value.toLowerCase()),
  encode: (flag) => (flag ? "true" : "false")
})

/** `POST extensions?force&disabled&noMigrate` */
export const InstallQuery = Schema.Struct({
  force: Schema.optionalWith(QueryFlag, { default: () => false }),
  disabled: Schema.optionalWith(QueryFlag, { default: () => false }),
  noMigrate: Schema.optionalWith(QueryFlag, { default: () => false })
})

/** `POST extensions/{vendor}/{name}/update?force` with an uploaded archive. */
export const UpdateQuery = Schema.Struct({ force: Schema.optionalWith(QueryFlag, { default: () => false }) })

/** The multipart form of an upload: the `.host` file, an optional detached signature, the CSRF `_token`. */
export const UploadForm = HttpApiSchema.Multipart(Schema.Struct({
  archive: Multipart.SingleFileSchema,
  signature: Schema.optional(Schema.String),
  _token: Schema.optional(Schema.String)
}))

/** `force` and `keepData` of enable, disable and remove, in the query string… */
export const FlagsQuery = Schema.Struct({ force: Schema.optional(QueryFlag), keepData: Schema.optional(QueryFlag) })
/** …or in a JSON body (which wins); every operation body may carry these flags. */
export const FlagsBody = Schema.Struct({
  force: Schema.optional(Schema.Boolean),
  keepData: Schema.optional(Schema.Boolean),
  disabled: Schema.optional(Schema.Boolean),
  noMigrate: Schema.optional(Schema.Boolean)
})
/** `update` from the registry: `{"version": "1.2.3" | "^1.2"}`, default the latest. */
export const RegistryUpdate = Schema.Struct({ version: Schema.optional(Schema.String) })

/** `{values: {key: value}}`, or the object of key → value itself. */
export const SettingsBody = Schema.Union(
  Schema.Struct({ values: Schema.Record({ key: Schema.String, value: Schema.Unknown }) }),
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)

/** `limit` of `GET activity`: any value reads, a number is kept within 1..1000, anything else is 100. */
const LenientLimit = Schema.transform(Schema.String, Schema.Number, {
  strict: true,
  decode: (text) => Math.min(Math.max(Number(text) || 100, 1), 1000),
  encode: String
})

export const RecentActivityQuery = Schema.Struct({
  limit: Schema.optionalWith(LenientLimit, { default: () => 100 }),
  extension: Schema.optional(Schema.String)
})

export const ActivityPageQuery = Schema.Struct({
  limit: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000)), { default: () => 50 }),
  offset: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.greaterThanOrEqualTo(0)), { default: () => 0 }),
  extension: Schema.optional(Schema.String),
  action: Schema.optional(ActivityAction)
})

export const RegistrySearchQuery = Schema.Struct({ q: Schema.optionalWith(Schema.String, { default: () => "" }) })
export const RegistryInstallRequest = Schema.Struct({
  id: Schema.String,
  version: Schema.optional(Schema.String),
  // The registry of the entry chosen on the screen (docs/registry.md "Several registries").
  registry: Schema.optional(Schema.String)
})

export const AdoptRequest = Schema.Struct({
  write: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  expected_sha256: Schema.optional(Schema.String)
})

export const ReconcileRequest = Schema.Struct({
  dry_run: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  prune: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  allow_destroy: Schema.optionalWith(Schema.Boolean, { default: () => false })
})

// ---- what the answers are -------------------------------------------------------------------------

export const ExtensionListBody = data(Schema.Array(ExtensionListRow))
export const OverviewBody = data(Schema.Array(ExtensionRow))
export const DetailBody = data(ExtensionDetail)
export const ImpactBody = data(Impact)
export const HealthNowBody = data(ExtensionHealth)
export const HealthBody = data(HealthOverview)
export const DoctorBody = data(DoctorReportView)
export const SettingsFormBody = data(SettingsForm)
export const OperationBody = data(OperationResultView)
export const PreviewBody = data(UploadPreview)
export const UpdatesBody = data(Schema.Array(AvailableUpdate))
export const UpdateAllBody = data(Schema.Array(UpdateOutcome))
export const ActivityBody = data(Schema.Array(ActivityRow))
export const RegistrySearchBody = Schema.Struct({ data: Schema.Array(RegistryEntry), meta: RegistrySearchMeta })
export const DesiredStateBody = data(DesiredStateView)
export const AdoptBody = data(AdoptResultView)
export const ServerBody = data(ServerRow)
export const ServerRemovedBody = data(Schema.Struct({ uuid: Schema.String }))
/** A reconcile's plan, with `apply` when it was applied (docs/plan-format.md). */
export const ReconcileBody = data(Schema.Struct({ ...Plan.fields, apply: Schema.optional(ApplyReport) }))

/** `window.__HOST__` of the admin screens' page shell (http/AdminPage.ts). */
export const AdminBootstrap = Schema.Struct({
  version: Schema.String,
  baseUrl: Schema.String,
  csrfToken: Schema.NullOr(Schema.String),
  /** Which CSRF rule the API applies (docs/http.md "CSRF"): the session's token, or the panel's XSRF-TOKEN cookie. */
  csrf: Schema.Literal("host", "panel"),
  user: Schema.Struct({ id: Schema.Union(Schema.Number, Schema.String), username: Schema.String, email: Schema.String, admin: Schema.Boolean }),
  /** `kind`: under a real panel the screens wear its name, palette and a link back to its admin area. */
  panel: Schema.Struct({ kind: Schema.Literal("embedded", "pterodactyl", "pelican"), name: Schema.String, version: Schema.NullOr(Schema.String) }),
  /** `uploads`: the web-install policy, `admin_uploads` (docs/operations.md "Web installs"). */
  admin: Schema.Struct({ desiredState: Schema.String, registry: Schema.Boolean, uploads: UploadSetting })
})
export type AdminBootstrap = typeof AdminBootstrap.Type

// ---- the endpoints --------------------------------------------------------------------------------

export const ExtensionPath = Schema.Struct({ vendor: Schema.String, name: Schema.String })
export type ExtensionPath = typeof ExtensionPath.Type
export const OperationPath = Schema.Struct({ vendor: Schema.String, name: Schema.String, action: Schema.String })
export type OperationPath = typeof OperationPath.Type

const api = "/admin/host/api"

/** Every admin endpoint needs an admin (401 signed out, 403 not an admin or a wrong CSRF token). */
const needsAdmin = groupFailsWith(401, 403)

const reconcile = <Name extends string, Path extends `/${string}`>(name: Name, path: Path) =>
  HttpApiEndpoint.post(name, path)
    // A signed delivery or an admin, on both paths (the admin API's reconcile has always taken a signed one).
    .middleware(AdminOrSigned)
    .setPayload(ReconcileRequest)
    .addSuccess(ReconcileBody)
    // An apply that stopped answers 422 with the same body: what was and was not applied.
    .addSuccess(ReconcileBody, { status: 422 })
    .pipe(failsWith(400, 409, 422))

export class AdminApi extends HttpApiGroup.make("admin")
  .add(HttpApiEndpoint.get("list", `${api}/extensions`).middleware(Admin).addSuccess(ExtensionListBody))
  .add(
    HttpApiEndpoint.post("install", `${api}/extensions`).middleware(AdminUpload)
      .setUrlParams(InstallQuery)
      .setPayload(UploadForm)
      .addSuccess(OperationBody, { status: 201 })
      .pipe(failsWith(400, 404, 409, 413, 422, 502))
  )
  .add(HttpApiEndpoint.get("overview", `${api}/extensions/overview`).middleware(Admin).addSuccess(OverviewBody))
  .add(
    HttpApiEndpoint.post("preview", `${api}/extensions/preview`).middleware(AdminUpload)
      .setPayload(UploadForm)
      .addSuccess(PreviewBody)
      .pipe(failsWith(400, 413, 422))
  )
  .add(HttpApiEndpoint.get("detail", `${api}/extensions/:vendor/:name`).middleware(Admin).setPath(ExtensionPath).addSuccess(DetailBody).pipe(failsWith(404)))
  .add(
    HttpApiEndpoint.get("impact", `${api}/extensions/:vendor/:name/impact`).middleware(Admin).setPath(ExtensionPath).addSuccess(ImpactBody).pipe(failsWith(404))
  )
  .add(
    HttpApiEndpoint.post("healthNow", `${api}/extensions/:vendor/:name/health`).middleware(Admin)
      .setPath(ExtensionPath)
      .addSuccess(HealthNowBody)
      .pipe(failsWith(404, 409))
  )
  .add(
    HttpApiEndpoint.get("doctor", `${api}/extensions/:vendor/:name/doctor`).middleware(Admin).setPath(ExtensionPath).addSuccess(DoctorBody).pipe(failsWith(404))
  )
  .add(
    HttpApiEndpoint.get("readSettings", `${api}/extensions/:vendor/:name/settings`).middleware(Admin)
      .setPath(ExtensionPath)
      .addSuccess(SettingsFormBody)
      .pipe(failsWith(404))
  )
  .add(
    HttpApiEndpoint.put("writeSettings", `${api}/extensions/:vendor/:name/settings`).middleware(Admin)
      .setPath(ExtensionPath)
      .setPayload(SettingsBody)
      .addSuccess(SettingsFormBody)
      .pipe(failsWith(400, 404, 409, 422))
  )
  .add(
    // action: enable, disable, remove or update (any other is 404, answered after the caller is known);
    // update takes an uploaded archive (multipart) or a registry version (JSON).
    HttpApiEndpoint.post("operation", `${api}/extensions/:vendor/:name/:action`).middleware(AdminUpload)
      .setPath(OperationPath)
      .setPayload(Schema.Union(FlagsBody, RegistryUpdate, UploadForm))
      .addSuccess(OperationBody)
      .pipe(failsWith(400, 404, 409, 413, 422, 502))
  )
  .add(HttpApiEndpoint.get("updates", `${api}/updates`).middleware(Admin).addSuccess(UpdatesBody).pipe(failsWith(409, 502)))
  .add(HttpApiEndpoint.post("updateAll", `${api}/updates`).middleware(Admin).addSuccess(UpdateAllBody).pipe(failsWith(409)))
  .add(HttpApiEndpoint.get("activity", `${api}/activity`).middleware(Admin).setUrlParams(RecentActivityQuery).addSuccess(ActivityBody).pipe(failsWith(400)))
  .add(HttpApiEndpoint.get("activityPage", `${api}/activity/page`).middleware(Admin).setUrlParams(ActivityPageQuery).addSuccess(ActivityPage).pipe(failsWith(400)))
  .add(HttpApiEndpoint.get("health", `${api}/health`).middleware(Admin).addSuccess(HealthBody))
  .add(reconcile("reconcile", `${api}/reconcile`))
  .add(
    HttpApiEndpoint.post("createServer", `${api}/servers`).middleware(Admin)
      .setPayload(NewServer)
      .addSuccess(ServerBody, { status: 201 })
      .pipe(failsWith(400, 409))
  )
  .add(
    HttpApiEndpoint.del("deleteServer", `${api}/servers/:uuid`).middleware(Admin)
      .setPath(Schema.Struct({ uuid: Schema.String }))
      .addSuccess(ServerRemovedBody)
      .pipe(failsWith(404))
  )
  .add(
    HttpApiEndpoint.get("registrySearch", `${api}/registry`).middleware(Admin)
      .setUrlParams(RegistrySearchQuery)
      .addSuccess(RegistrySearchBody)
      .pipe(failsWith(400, 409, 502))
  )
  .add(
    HttpApiEndpoint.post("registryInstall", `${api}/registry/install`).middleware(Admin)
      .setPayload(RegistryInstallRequest)
      .addSuccess(OperationBody, { status: 201 })
      .pipe(failsWith(400, 404, 409, 422, 502))
  )
  .add(HttpApiEndpoint.get("desiredState", `${api}/desired-state`).middleware(Admin).addSuccess(DesiredStateBody))
  .add(
    HttpApiEndpoint.post("adopt", `${api}/desired-state/adopt`).middleware(Admin)
      .setPayload(AdoptRequest)
      .addSuccess(AdoptBody)
      .pipe(failsWith(400, 409, 422))
  )
  .pipe(needsAdmin)
{}

/**
 * The CI webhook (docs/gitops.md "Apply with a signed webhook"), beside (not under) the admin API prefix:
 * a signed delivery (401 for a bad signature, 409 for a repeated delivery id), or an admin as above.
 */
export class WebhookApi extends HttpApiGroup.make("webhook")
  .add(reconcile("reconcile", "/admin/host/reconcile"))
  .pipe(needsAdmin)
{}
