import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { FrontendErrorReport } from "../../domain/FrontendErrors.js"
import { OwnsServer, SignedIn } from "./Security.js"
import { failsWith } from "./Statuses.js"

// The framework client endpoints (docs/http.md "Framework client endpoints (client-api: a user is required)" and "Extension access") as
// typed contracts: each path, method, request and answer, with the statuses an endpoint answers. The
// server implements them in http/api/Handlers.ts; the bridge (src/bridge) derives its types from these
// schemas with `import type`, so the browser bundle carries none of them.

/** One entry of `/api/client/host/extensions` (runtime/ClientView.ts `extensionMetadata`). */
export const ExtensionMetadata = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  version: Schema.String,
  description: Schema.String,
  bundle: Schema.NullOr(Schema.String),
  styles: Schema.NullOr(Schema.String),
  cssIsolation: Schema.NullOr(Schema.Struct({ mode: Schema.Literal("root-class"), class: Schema.String })),
  slots: Schema.Array(Schema.Struct(
    { slot: Schema.String, extensionId: Schema.String, order: Schema.Number, source: Schema.Literal("bundle", "manifest", "backend") },
    Schema.Record({ key: Schema.String, value: Schema.Unknown })
  )),
  routes: Schema.Array(Schema.Struct({
    group: Schema.String,
    method: Schema.String,
    path: Schema.String,
    url: Schema.String,
    permission: Schema.NullOr(Schema.String)
  }))
})
export type ExtensionMetadata = typeof ExtensionMetadata.Type

/** A registration as served in the slot map (runtime/Slots.ts `servedSlot`). */
export const ServedSlot = Schema.Struct(
  { extensionId: Schema.String, order: Schema.Number, source: Schema.Literal("bundle", "manifest", "backend") },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)

export const SlotsBody = Schema.Struct({ data: Schema.Record({ key: Schema.String, value: Schema.Array(ServedSlot) }) })
export const ExtensionsBody = Schema.Struct({ data: Schema.Array(ExtensionMetadata) })
export const ConfigBody = Schema.Struct({
  data: Schema.Struct({
    version: Schema.String,
    baseUrl: Schema.String,
    generation: Schema.Number,
    slots: Schema.Array(Schema.String),
    theme: Schema.Struct({ name: Schema.String, variables: Schema.Record({ key: Schema.String, value: Schema.String }) }),
    extensions: Schema.Array(ExtensionMetadata)
  })
})

/** `window.__HOST__.user` and GET /api/client/account (panel/PanelView.ts `accountView`). */
export const AccountView = Schema.Struct({
  id: Schema.Union(Schema.Number, Schema.String),
  username: Schema.String,
  email: Schema.String,
  admin: Schema.Boolean
})

/** `window.__HOST__.server` (panel/PanelView.ts `serverContextView`). */
export const ServerContextView = Schema.Struct({
  uuid: Schema.String,
  name: Schema.String,
  permissions: Schema.Array(Schema.String),
  isOwner: Schema.Boolean
})

/** The caller's bootstrap (docs/frontend.md "Page load order"): `window.__HOST__` of the shell, or GET /bootstrap. */
export const Bootstrap = Schema.Struct({
  version: Schema.String,
  baseUrl: Schema.String,
  csrfToken: Schema.NullOr(Schema.String),
  csrf: Schema.Literal("host", "panel"),
  user: AccountView,
  server: Schema.NullOr(ServerContextView),
  panel: Schema.Struct({ kind: Schema.String, name: Schema.String, version: Schema.NullOr(Schema.String) }),
  extensions: Schema.Array(Schema.Struct({
    id: Schema.String,
    name: Schema.String,
    version: Schema.String,
    bundle: Schema.NullOr(Schema.String),
    styles: Schema.NullOr(Schema.String),
    cssIsolation: ExtensionMetadata.fields.cssIsolation
  })),
  slots: Schema.Array(Schema.String)
})
export type Bootstrap = typeof Bootstrap.Type
export const BootstrapBody = Schema.Struct({ data: Bootstrap })

export const PublicSettingsBody = Schema.Struct({ data: Schema.Record({ key: Schema.String, value: Schema.Unknown }) })

export const DiagnosticsAccepted = Schema.Struct({ data: Schema.Struct({ accepted: Schema.Literal(true) }) })

/** GET /api/client/host/servers/{server}/access */
export const AccessListing = Schema.Struct({
  server: Schema.Struct({ uuid: Schema.String, identifier: Schema.NullOr(Schema.String), name: Schema.String }),
  grants_kept_by: Schema.Literal("host", "panel"),
  permissions: Schema.Array(Schema.Struct({ extension: Schema.String, permission: Schema.String })),
  subusers: Schema.Array(Schema.Struct({
    username: Schema.String,
    email: Schema.String,
    uuid: Schema.NullOr(Schema.String),
    panel_permissions: Schema.Array(Schema.String),
    grants: Schema.Array(Schema.String)
  }))
})
export type AccessListing = typeof AccessListing.Type
export const AccessListingBody = Schema.Struct({ data: AccessListing })

/** PUT and DELETE /api/client/host/servers/{server}/access */
export const GrantRequest = Schema.Struct({ user: Schema.NonEmptyString, permission: Schema.NonEmptyString })
export const GrantResult = Schema.Struct({
  data: Schema.Struct({ server: Schema.String, user: Schema.String, permission: Schema.String, granted: Schema.Boolean, changed: Schema.Boolean })
})

/** `GET bootstrap?path=<panel page path>`: the page whose server (if it is a server page) is included. */
export const BootstrapQuery = Schema.Struct({ path: Schema.optionalWith(Schema.String, { default: () => "" }) })

const ServerPath = Schema.Struct({ server: Schema.String })
const SettingsPath = Schema.Struct({ vendor: Schema.String, name: Schema.String })

export class ClientApi extends HttpApiGroup.make("client")
  .add(HttpApiEndpoint.get("slots", "/api/client/host/slots").middleware(SignedIn).addSuccess(SlotsBody).pipe(failsWith(401)))
  .add(HttpApiEndpoint.get("extensions", "/api/client/host/extensions").middleware(SignedIn).addSuccess(ExtensionsBody).pipe(failsWith(401)))
  .add(HttpApiEndpoint.get("config", "/api/client/host/config").middleware(SignedIn).addSuccess(ConfigBody).pipe(failsWith(401)))
  .add(
    HttpApiEndpoint.get("bootstrap", "/api/client/host/bootstrap").middleware(SignedIn)
      .setUrlParams(BootstrapQuery)
      .addSuccess(BootstrapBody)
      // 400: a server page's segment that is not valid percent-encoding names no server.
      .pipe(failsWith(400, 401))
  )
  .add(
    HttpApiEndpoint.get("publicSettings", "/api/client/host/extensions/:vendor/:name/settings").middleware(SignedIn)
      .setPath(SettingsPath)
      .addSuccess(PublicSettingsBody)
      .pipe(failsWith(401, 404))
  )
  .add(
    HttpApiEndpoint.post("diagnostics", "/api/client/host/diagnostics").middleware(SignedIn)
      .setPayload(FrontendErrorReport)
      .addSuccess(DiagnosticsAccepted, { status: 202 })
      .pipe(failsWith(400, 401, 403, 404, 429))
  )
  .add(
    HttpApiEndpoint.get("accessList", "/api/client/host/servers/:server/access").middleware(OwnsServer)
      .setPath(ServerPath)
      .addSuccess(AccessListingBody)
      .pipe(failsWith(401, 403, 404))
  )
  .add(
    HttpApiEndpoint.put("accessGrant", "/api/client/host/servers/:server/access").middleware(OwnsServer)
      .setPath(ServerPath)
      .setPayload(GrantRequest)
      .addSuccess(GrantResult)
      .pipe(failsWith(400, 401, 403, 404, 409))
  )
  .add(
    HttpApiEndpoint.del("accessRevoke", "/api/client/host/servers/:server/access").middleware(OwnsServer)
      .setPath(ServerPath)
      .setPayload(GrantRequest)
      .addSuccess(GrantResult)
      .pipe(failsWith(400, 401, 403, 404, 409))
  )
{}
