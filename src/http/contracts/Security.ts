import { HttpApi, type HttpApiEndpoint, type HttpApiGroup, HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, type Effect } from "effect"
import type { Actor } from "../../domain/Installed.js"
import type { PanelUser, ServerAccess } from "../../panel/Panel.js"
import type { FrontDoor } from "../../usecases/FrontDoor.js"
import type { AuthenticatedRequest } from "../Context.js"
import type { HttpFailure } from "../Errors.js"
import { HostError } from "./Errors.js"

// Who may call each endpoint of the HttpApi, stated on the endpoint as an HttpApiMiddleware (docs/http.md
// "Authentication" and "Admin JSON API"). The middleware is the check: HttpApiBuilder runs it around the
// whole route, before the path, query or body is decoded, so a signed-out request is 401 before its body is
// looked at. It provides the caller (a signed-in user, the server's owner, the admin as the lifecycle's
// actor, a signed delivery) to the handler, which reads it as a service: a handler that needs an admin does
// not compile under an endpoint without the admin middleware (its requirement stays unsatisfied, checked
// in http/api/Handlers.ts). Every endpoint of HostApi must carry exactly one statement (`Unstated` below,
// checked in contracts/Api.ts); the OpenAPI document takes each operation's security from it, and the
// authorization test tries every endpoint against it (test/http/authz.test.ts "R5: every endpoint of the HttpApi").
// The checks themselves are http/api/Callers.ts.
//
// A statement names the security schemes a caller may use (`schemes`), for the OpenAPI document
// (http/api/OpenApiDocument.ts), but is no HttpApiMiddleware *security* middleware: HttpApiBuilder would
// decode one scheme after another around the check, and Host's check reads the whole request at once (the
// session cookie and the bearer token together, as the panel drivers do). The middleware's effect is the
// check itself (docs/decisions.md "A statement is one check").

// ---- the security schemes (named in the OpenAPI document) -----------------------------------------

/** The panel's session cookie: unsafe methods also need the CSRF token (docs/http.md "CSRF"). */
export const panelSession = HttpApiSecurity.apiKey({ in: "cookie", key: "host_session" }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "The panel's session cookie (embedded panel: host_session; under Pterodactyl or Pelican, the panel's own session cookie). Unsafe methods also need the CSRF header (docs/http.md \"Errors\", 403 CsrfTokenMismatch)."
  )
)

/** A panel API token. */
export const bearerToken = HttpApiSecurity.bearer.pipe(HttpApiSecurity.annotate(OpenApi.Description, "An API token of the panel (Authorization: Bearer …)."))

/** A signed webhook delivery (docs/gitops.md "Apply with a signed webhook"). */
export const webhookSignature = HttpApiSecurity.apiKey({ in: "header", key: "X-Host-Signature-256" }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "HMAC-SHA256 of the delivery with webhook_secret (docs/gitops.md \"Apply with a signed webhook\"), with X-Host-Delivery."
  )
)

/** The security schemes of a statement, in the order the OpenAPI document lists them. */
export type Schemes = Readonly<Record<string, HttpApiSecurity.HttpApiSecurity>>

/** A signed-in user: a bearer token, or the session cookie (the document lists the bearer scheme first). */
const signedIn = { bearerToken, panelSession } as const satisfies Schemes

// ---- what each statement provides to the handler ---------------------------------------------------

/** The request of a signed-in user (its CSRF check, for an unsafe method, passed). */
export interface SignedInCaller extends AuthenticatedRequest {
  readonly user: PanelUser
}
export class SignedInUser extends Context.Tag("host/http/SignedInUser")<SignedInUser, SignedInCaller>() {}

/** The request of the owner of the path's `{server}`, or of an administrator, with the server. */
export interface ServerOwnerCaller extends SignedInCaller {
  /** The path's `{server}` as given (a uuid, or a real panel's short identifier). */
  readonly serverId: string
  readonly server: ServerAccess
}
export class ServerOwner extends Context.Tag("host/http/ServerOwner")<ServerOwner, ServerOwnerCaller>() {}

/** The admin making the request, as the lifecycle's actor (the CSRF check passed). */
export interface AdminCaller extends SignedInCaller {
  readonly actor: Actor & { readonly type: "admin"; readonly user: string }
}
export class AdminActor extends Context.Tag("host/http/AdminActor")<AdminActor, AdminCaller>() {}

/**
 * An admin sending an upload: the CSRF token of a multipart form is one of its fields, read with the
 * archive, so the actor is had only through `actorAfterCsrf` (the header, a urlencoded form's `_token`, or
 * the `formToken` the handler read from the form). An operation needs the actor: none runs unchecked.
 */
export interface UploadingAdminCaller extends SignedInCaller {
  readonly actorAfterCsrf: (formToken: string | undefined) => Effect.Effect<AdminCaller["actor"], HttpFailure>
}
export class UploadingAdmin extends Context.Tag("host/http/UploadingAdmin")<UploadingAdmin, UploadingAdminCaller>() {}

/** Who asked for a reconcile: an admin, or a signed delivery; with the body (read once: a signature covers its bytes). */
export interface ReconcileCallerService {
  readonly door: Extract<FrontDoor, { readonly _tag: "Admin" | "Webhook" }>
  readonly bodyText: string
}
export class ReconcileCaller extends Context.Tag("host/http/ReconcileCaller")<ReconcileCaller, ReconcileCallerService>() {}

// ---- the statements --------------------------------------------------------------------------------

/**
 * The caller kind each statement declares (the OpenAPI document's `x-host-caller`, the authorization test):
 * - `anyone`: no credential needed;
 * - `user`: a signed-in user (panel session cookie or bearer token);
 * - `server`: the owner of the path's `{server}`, or an administrator (a subuser of it: 403; a user who
 *   cannot see it: 404, its existence is not told);
 * - `admin`: a signed-in panel administrator;
 * - `admin-or-signed`: an administrator, or a webhook delivery signed with `webhook_secret`.
 */
export type Caller = "anyone" | "user" | "server" | "admin" | "admin-or-signed"

/** Public: no credential is read. A marker, so that "anyone" is said, not forgotten. */
export class Anyone extends HttpApiMiddleware.Tag<Anyone>()("host/http/Anyone") {
  static readonly callerKind: Caller = "anyone"
  static readonly schemes: Schemes = {}
}

/**
 * A signed-in user (401 signed out; an unsafe method with the session cookie needs the CSRF token: 403).
 * @effect-expect-leaking HttpServerRequest ParsedSearchParams RouteContext (the request, which HttpApiBuilder gives every middleware)
 */
export class SignedIn extends HttpApiMiddleware.Tag<SignedIn>()("host/http/SignedIn", {
  failure: HostError,
  provides: SignedInUser
}) {
  static readonly callerKind: Caller = "user"
  static readonly schemes: Schemes = signedIn
}

/**
 * The owner of the path's `{server}` or an administrator (then the CSRF check of an unsafe method).
 * @effect-expect-leaking HttpServerRequest ParsedSearchParams RouteContext (the request, which HttpApiBuilder gives every middleware)
 */
export class OwnsServer extends HttpApiMiddleware.Tag<OwnsServer>()("host/http/OwnsServer", {
  failure: HostError,
  provides: ServerOwner
}) {
  static readonly callerKind: Caller = "server"
  static readonly schemes: Schemes = signedIn
}

/**
 * A panel administrator (401 signed out, 403 not an admin or a wrong CSRF token: header or `_token` form field).
 * @effect-expect-leaking HttpServerRequest ParsedSearchParams RouteContext (the request, which HttpApiBuilder gives every middleware)
 */
export class Admin extends HttpApiMiddleware.Tag<Admin>()("host/http/Admin", {
  failure: HostError,
  provides: AdminActor
}) {
  static readonly callerKind: Caller = "admin"
  static readonly schemes: Schemes = signedIn
}

/**
 * A panel administrator sending a multipart upload: the CSRF check waits for the form (`UploadingAdmin`).
 * @effect-expect-leaking HttpServerRequest ParsedSearchParams RouteContext (the request, which HttpApiBuilder gives every middleware)
 */
export class AdminUpload extends HttpApiMiddleware.Tag<AdminUpload>()("host/http/AdminUpload", {
  failure: HostError,
  provides: UploadingAdmin
}) {
  static readonly callerKind: Caller = "admin"
  static readonly schemes: Schemes = signedIn
}

/**
 * A webhook delivery signed with `webhook_secret` (a request carrying X-Host-Signature-256), or else an
 * administrator as `Admin` says; 401 for neither, naming all three ways.
 * @effect-expect-leaking HttpServerRequest ParsedSearchParams RouteContext (the request, which HttpApiBuilder gives every middleware)
 */
export class AdminOrSigned extends HttpApiMiddleware.Tag<AdminOrSigned>()("host/http/AdminOrSigned", {
  failure: HostError,
  provides: ReconcileCaller
}) {
  static readonly callerKind: Caller = "admin-or-signed"
  static readonly schemes: Schemes = { bearerToken, webhookSignature, panelSession }
}

/** Every statement of who may call an endpoint. */
export const statements = [Anyone, SignedIn, OwnsServer, Admin, AdminUpload, AdminOrSigned] as const
export type Statement = InstanceType<(typeof statements)[number]>

// ---- the compiler's check: every endpoint states its caller, once -----------------------------------

type IsUnion<T, All = T> = T extends unknown ? ([All] extends [T] ? false : true) : never

/** `group.endpoint` of each endpoint of `Groups` that states no caller, or more than one. */
export type Unstated<Groups extends HttpApiGroup.HttpApiGroup.Any> = Groups extends
  HttpApiGroup.HttpApiGroup<infer GroupName, infer Endpoints, infer _E, infer _R, infer _TopLevel> ? UnstatedIn<GroupName, Endpoints>
  : never

type UnstatedIn<GroupName extends string, Endpoints> = Endpoints extends HttpApiEndpoint.HttpApiEndpoint<
  infer Name,
  infer _Method,
  infer _Path,
  infer _UrlParams,
  infer _Payload,
  infer _Headers,
  infer _Success,
  infer _Error,
  infer R,
  infer _RE
> ? [Extract<R, Statement>] extends [never] ? `${GroupName}.${Name}: no caller stated`
  : true extends IsUnion<Extract<R, Statement>> ? `${GroupName}.${Name}: more than one caller stated`
  : never
  : never

/** The unstated endpoints of an HttpApi. */
export type UnstatedEndpoints<A> = A extends HttpApi.HttpApi<infer _Id, infer Groups, infer _E, infer _R> ? Unstated<Groups> : never

/** What `Verdict<UnstatedEndpoints<typeof Api>>` must be: the verdict names each endpoint at fault otherwise. */
export const everyEndpointStated = "every endpoint states who may call it"
export type Verdict<Faults extends string> = [Faults] extends [never] ? typeof everyEndpointStated : Faults

// ---- reading the statements back -----------------------------------------------------------------

const statementOf = (middlewares: ReadonlySet<HttpApiMiddleware.TagClassAny>, where: string) => {
  const stated = [...middlewares].flatMap((middleware) => {
    const statement = middleware as { readonly callerKind?: Caller; readonly schemes?: Schemes }
    return statement.callerKind === undefined || statement.schemes === undefined ? [] : [{ caller: statement.callerKind, schemes: statement.schemes }]
  })
  if (stated.length !== 1) throw new Error(`http/contracts/Security.ts: ${where} states ${stated.length} callers`)
  return stated[0]!
}

/**
 * Every group and endpoint of an HttpApi with the caller its middleware states and the security schemes
 * it names, in the HttpApi's order, for the document and the tests that walk the API.
 */
export const endpointsOf = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(api: HttpApi.HttpApi<Id, Groups, E, R>) => {
  const endpoints: Array<
    { readonly group: string; readonly name: string; readonly method: string; readonly path: string; readonly caller: Caller; readonly schemes: Schemes }
  > = []
  HttpApi.reflect(api, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, group, middleware }) => {
      endpoints.push({
        group: group.identifier,
        name: endpoint.name,
        method: endpoint.method,
        path: endpoint.path,
        ...statementOf(middleware, `${group.identifier}.${endpoint.name}`)
      })
    }
  })
  return endpoints
}
