import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { renderView, type ViewNamespaces, viewNamespaces } from "../runtime/Views.js"
import type { Generation } from "../runtime/Runtime.js"
import { Context, Effect, Runtime, Schema } from "effect"
import type { Middleware, RouteContext, RouteServer, RouteUser } from "@host/sdk/server"
import type { RouteGroup } from "../domain/Manifest.js"
import { isTooDeepJson, parseJsonWithinDepth, tooDeepJson } from "../domain/JsonDepth.js"
import { effectiveSettings } from "../domain/Settings.js"
import type { PanelUser } from "../panel/Panel.js"
import { type CompiledRoute, groupPrefixes, matchRoute } from "../runtime/Routes.js"
import type { LoadedExtension } from "../runtime/Runtime.js"
import { awaitableSql } from "../store/AwaitableSql.js"
import { SettingsRepo } from "../store/SettingsRepo.js"
import { LiveRuntime } from "../runtime/LiveState.js"
import { TrustedProxies, type TrustedProxiesService } from "./ClientAddress.js"
import { type AuthenticatedRequest, authenticateWith, authenticatorOf, csrfChecked, header, type ServerSessions } from "./Context.js"
import { forbidden, HttpFailure, notFound, notServed, panelUnavailable, RouteCodeFailed, unauthorized } from "./Errors.js"

/** View namespaces are read once per runtime generation, on first use. */
const namespacesByGeneration = new WeakMap<Generation, ViewNamespaces>()
const namespacesOf = (generation: Generation) =>
  Effect.suspend(() => {
    const known = namespacesByGeneration.get(generation)
    return known !== undefined
      ? Effect.succeed(known)
      : Effect.tap(viewNamespaces(generation), (namespaces) => Effect.sync(() => namespacesByGeneration.set(generation, namespaces)))
  })

// Extension routes (docs/http.md "Route groups"): `<group prefix>/<vendor>/<name>/<path>` looked up in the
// current generation, then the group's default middleware (client-api: a user; admin: an admin; web:
// optional user, CSRF on unsafe methods with a session), `{server}` access (404 without it), the
// PermissionBroker (the route's declared permission, 403 without it), the extension's HasMiddleware
// group, and the handler. Disabled, quarantined and unknown extensions answer 404.

const middlewareGroup: Readonly<Record<RouteGroup, string>> = { "api-client": "api", admin: "web", web: "web" }

const routeUser = (user: PanelUser | undefined): RouteUser | undefined =>
  user === undefined ? undefined : { id: user.id, username: user.username, email: user.email, admin: user.admin }

/** A failure thrown by a handler on purpose: `abort(403, "…")` of @host/sdk/server, or any `{status, message}` HttpError. */
const intendedFailure = (error: unknown): HttpFailure | undefined => {
  if (typeof error !== "object" || error === null) return undefined
  const candidate = error as { _tag?: unknown; name?: unknown; status?: unknown; message?: unknown; code?: unknown }
  const marked = candidate._tag === "HostHttpError" || candidate.name === "HttpError"
  if (!marked || typeof candidate.status !== "number" || candidate.status < 400 || candidate.status > 599) return undefined
  const status = candidate.status
  const code = typeof candidate.code === "string" ? candidate.code : status === 403 ? "Forbidden" : status === 404 ? "NotFound" : "HttpError"
  return new HttpFailure({ status, code, detail: typeof candidate.message === "string" ? candidate.message : "request refused" })
}

const fromExtension = (error: unknown) => intendedFailure(error) ?? new RouteCodeFailed({ cause: error })

const FormBody = Schema.Record({ key: Schema.String, value: Schema.String })
// Made once: a schema built inside the handler would be built again for every request.
// Bounded to 64 levels (docs/decisions.md "JSON from outside nests at most 64 levels"): a handler, a
// middleware or a message that walks the body recursively must not meet 100,000 nested arrays.
const decodeJsonBody = Schema.decodeUnknown(parseJsonWithinDepth())
const decodeFormBody = Schema.decodeUnknown(FormBody)
const utf8 = new TextDecoder()

/** Reads the body once: JSON, form fields, text, or undefined when there is none. */
const readBody = (request: HttpServerRequest.HttpServerRequest, bytes: Uint8Array<ArrayBuffer>) =>
  Effect.gen(function*() {
    if (bytes.byteLength === 0) return undefined
    const type = header(request, "content-type") ?? ""
    const text = utf8.decode(bytes)
    if (type.includes("json")) {
      return yield* decodeJsonBody(text).pipe(
        Effect.mapError((error) =>
          new HttpFailure({
            status: 400,
            code: "BadRequest",
            detail: isTooDeepJson(error) ? `the body is refused: ${tooDeepJson}` : "the body is not valid JSON"
          })
        )
      )
    }
    if (type.includes("application/x-www-form-urlencoded")) {
      return yield* decodeFormBody(Object.fromEntries(new URLSearchParams(text)))
    }
    return text
  })

const toWebRequest = (request: HttpServerRequest.HttpServerRequest, bytes: Uint8Array<ArrayBuffer>): Request => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === "string") headers.set(name, value)
  const init: RequestInit = { method: request.method, headers }
  if (bytes.byteLength > 0 && request.method !== "GET" && request.method !== "HEAD") init.body = bytes
  const url = `http://${header(request, "host") ?? "127.0.0.1"}${request.originalUrl}`
  return new Request(URL.canParse(url) ? url : `http://127.0.0.1${request.originalUrl}`, init)
}

/** What a handler (or middleware) returned, as a response: JSON value, Response, HttpServerResponse, Promise or Effect. */
const toResponse = (value: unknown): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    let result = value
    if (Effect.isEffect(result)) result = yield* (result as Effect.Effect<unknown, unknown, SqlClient.SqlClient>)
    if (result instanceof Promise) result = yield* Effect.tryPromise({ try: () => result as Promise<unknown>, catch: fromExtension })
    if (HttpServerResponse.isServerResponse(result)) return result
    if (result instanceof Response) return HttpServerResponse.fromWeb(result)
    if (result === undefined) return HttpServerResponse.empty({ status: 204 })
    return yield* HttpServerResponse.json(result)
  })

/**
 * Runs the middleware in order until one answers with a Response. A step that answers synchronously (most
 * pass by returning nothing) is taken as it is; only a promise is awaited, so the request waits on no
 * promise that was not there.
 */
const runMiddleware = (
  middleware: ReadonlyArray<Middleware>,
  request: Request,
  extensionId: string,
  from = 0
): Effect.Effect<HttpServerResponse.HttpServerResponse | undefined, HttpFailure | RouteCodeFailed> => {
  for (let index = from; index < middleware.length; index++) {
    let result: unknown
    try {
      result = middleware[index]!({ request, extensionId })
    } catch (error) {
      return Effect.fail(fromExtension(error))
    }
    if (isPromiseLike(result)) {
      return Effect.flatMap(
        Effect.tryPromise({ try: async () => await result, catch: fromExtension }),
        (settled) => settled instanceof Response ? Effect.succeed(HttpServerResponse.fromWeb(settled)) : runMiddleware(middleware, request, extensionId, index + 1)
      )
    }
    if (result instanceof Response) return Effect.succeed(HttpServerResponse.fromWeb(result))
  }
  return passedAll
}

const noAnswer: HttpServerResponse.HttpServerResponse | undefined = undefined
const passedAll = Effect.succeed(noAnswer)

/** What `await` would wait for: a promise or any other object or function with a `then` method. */
const isPromiseLike = (value: unknown): value is PromiseLike<unknown> =>
  (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { then?: unknown }).then === "function"

/** One request to an extension route, once the route is found: what the later steps read. */
interface RouteCall {
  readonly caller: AuthenticatedRequest
  readonly group: RouteGroup
  readonly id: string
  readonly extension: LoadedExtension
  readonly route: CompiledRoute
  readonly params: Readonly<Record<string, string>>
}

// Every request to an extension route passes the steps below, so they are plain functions that answer a
// value or the failure, and the handler chains an Effect only where a step may wait (the body, the
// panel's access answers, the settings row, the handler's own result): each Effect step costs the
// request fiber more than the check it wraps (docs/http.md "Performance").

/** The extension and route the path names: 404 for an extension not served or a path it has no route for, 405 for a method. */
const findRoute = (group: RouteGroup, caller: AuthenticatedRequest, routeParams: Readonly<Record<string, string | undefined>>): RouteCall | HttpFailure => {
  const { live, request } = caller
  const pathname = request.url.split("?")[0]!
  // Reached from the admin API's 405 check (Methods.ts) the route has no params: read them from the path.
  const [vendor, name] = routeParams.vendor !== undefined
    ? [routeParams.vendor, routeParams.name]
    : pathname.slice(groupPrefixes[group].length + 1).split("/")
  const id = `${vendor}/${name ?? ""}`
  const extension: LoadedExtension | undefined = live.generation.extensions.get(id)
  if (extension === undefined) return notServed(live.generation, id, `no enabled extension ${id}`)
  const rest = pathname.slice(`${groupPrefixes[group]}/${id}`.length) || "/"
  const match = matchRoute(extension.routes[group] ?? [], request.method, rest)
  if (match._tag === "NotFound") return notFound(`${id} has no ${group} route ${rest}`)
  if (match._tag === "MethodNotAllowed") {
    return new HttpFailure({
      status: 405,
      code: "MethodNotAllowed",
      detail: `${request.method} is not allowed here (allowed: ${match.allowed.join(", ")})`
    })
  }
  return { caller, group, id, extension, route: match.route, params: match.params }
}

/** The group's default middleware: api-client needs a user, admin a panel administrator, web nothing. */
const groupDefaults = (group: RouteGroup, { auth }: AuthenticatedRequest): HttpFailure | undefined => {
  if (group === "api-client" && auth.user === undefined) return unauthorized()
  if (group === "admin") {
    if (auth.user === undefined) return unauthorized()
    if (!auth.user.admin) return forbidden("this needs a panel administrator")
  }
  return undefined
}

const noRouteServer: RouteServer | undefined = undefined

interface CheckedBody {
  readonly bytes: Uint8Array<ArrayBuffer>
  readonly body: unknown
}

const noBody: CheckedBody = { bytes: new Uint8Array(0), body: undefined }

/** The CSRF check of the body read (a form's `_token` counts as the token). Every group: a session cookie is an ambient credential wherever it is accepted. */
const csrfOf = (caller: AuthenticatedRequest, proxies: TrustedProxiesService, checked: CheckedBody): Effect.Effect<CheckedBody, HttpFailure> => {
  const { body } = checked
  const formToken = typeof body === "object" && body !== null && "_token" in body && typeof body._token === "string"
    ? body._token
    : undefined
  return Effect.as(csrfChecked(caller, proxies, { formToken }), checked)
}

/** The body's bytes and its reading, after the CSRF check. */
const readCheckedBody = (caller: AuthenticatedRequest, proxies: TrustedProxiesService) => {
  const { request } = caller
  if (request.method === "GET" || request.method === "HEAD") return csrfOf(caller, proxies, noBody)
  return Effect.flatMap(request.arrayBuffer, (buffer) => {
    const bytes = new Uint8Array(buffer)
    return Effect.flatMap(readBody(request, bytes), (body) => csrfOf(caller, proxies, { bytes, body }))
  })
}

/** `{server}` access (404 without it), then the PermissionBroker (403 without the route's permission). */
const routeServer = ({ caller: { auth, live }, id, params, route }: RouteCall) =>
  Effect.gen(function*() {
    let server: RouteServer | undefined = undefined
    if (route.usesServer) {
      if (auth.user === undefined) return yield* unauthorized()
      const access = yield* live.access.serverAccess(auth, params.server ?? "").pipe(Effect.mapError(panelUnavailable))
      if (access === undefined) return yield* notFound(`server ${params.server ?? ""} not found`)
      server = { uuid: access.server.uuid, name: access.server.name, permissions: access.permissions }
    }
    if (route.permission !== undefined) {
      if (auth.user === undefined) return yield* unauthorized()
      if (!(yield* live.access.can(auth, route.permission, server?.uuid, id).pipe(Effect.mapError(panelUnavailable)))) {
        return yield* forbidden(`this needs the permission ${route.permission}`)
      }
    }
    return server
  })

const noServer = Effect.succeed<RouteServer | undefined>(noRouteServer)
const noSettings: Readonly<Record<string, unknown>> = {}

/** What the handler is given: the request (made on first read), params, query, body, user, server, settings, SQL, views. */
const routeContext = (
  call: RouteCall,
  body: unknown,
  server: RouteServer | undefined,
  stored: Readonly<Record<string, unknown>>,
  sqlClient: SqlClient.SqlClient,
  runtimeOnce: () => Runtime.Runtime<never>,
  requestOnce: () => Request
): RouteContext => {
  const { caller: { auth, live, request }, extension, id, params } = call
  const query: Record<string, string> = {}
  if (request.url.includes("?")) for (const [key, value] of new URLSearchParams(request.url.split("?")[1])) query[key] = value
  // Made on first read: most handlers never touch `sql`.
  let sql: (SqlClient.SqlClient & RouteContext["sql"]) | undefined
  return {
    get request() {
      return requestOnce()
    },
    params,
    query,
    body,
    user: routeUser(auth.user),
    server,
    settings: effectiveSettings(extension.manifest.settings, stored),
    get sql() {
      return (sql ??= awaitableSql(sqlClient, runtimeOnce()))
    },
    extension: { id, version: extension.manifest.version, basePath: extension.directory },
    view: (name, data) =>
      Runtime.runPromise(runtimeOnce())(Effect.flatMap(namespacesOf(live.generation), (namespaces) => renderView(namespaces, name, data)))
  }
}

/** What a handler (or middleware) returned, as a response: JSON value, Response, HttpServerResponse, Promise or Effect. */
const handlerResponse = (call: () => unknown): Effect.Effect<HttpServerResponse.HttpServerResponse, HttpFailure | RouteCodeFailed, SqlClient.SqlClient> => {
  let result: unknown
  try {
    result = call()
  } catch (error) {
    return Effect.fail(fromExtension(error))
  }
  // A plain value, the usual answer, needs no further step than its JSON.
  if (!Effect.isEffect(result) && !(result instanceof Promise)) {
    if (HttpServerResponse.isServerResponse(result)) return Effect.succeed(result)
    if (result instanceof Response) return Effect.succeed(HttpServerResponse.fromWeb(result))
    if (result === undefined) return Effect.succeed(HttpServerResponse.empty({ status: 204 }))
    return Effect.mapError(HttpServerResponse.json(result), fromExtension)
  }
  return Effect.mapError(toResponse(result), (error) => (error instanceof HttpFailure || error instanceof RouteCodeFailed ? error : fromExtension(error)))
}

/** The handler of one group's catch-all route. */
export const extensionRoute = (group: RouteGroup) =>
  Effect.contextWithEffect((services: Context.Context<HttpRouter.RouteContext | LiveRuntime | ServerSessions | TrustedProxies | SqlClient.SqlClient | SettingsRepo>) =>
    Effect.flatMap(authenticateWith(authenticatorOf(services)), (caller) => {
      const call = findRoute(group, caller, Context.get(services, HttpRouter.RouteContext).params)
      if (call instanceof HttpFailure) return Effect.fail(call)
      const refused = groupDefaults(group, caller)
      if (refused !== undefined) return Effect.fail(refused)
      return Effect.flatMap(readCheckedBody(caller, Context.get(services, TrustedProxies)), ({ body, bytes }) =>
        Effect.flatMap(call.route.usesServer || call.route.permission !== undefined ? routeServer(call) : noServer, (server) => {
          // The web Request is made when middleware or the handler first reads it: most handlers never do.
          let webRequest: Request | undefined
          const requestOnce = () => (webRequest ??= toWebRequest(caller.request, bytes))
          const handle = Effect.flatMap(
            // An extension that declares no settings has none to read (effectiveSettings keeps declared keys only).
            call.extension.manifest.settings.length === 0 ? Effect.succeed(noSettings) : Context.get(services, SettingsRepo).getAll(call.id),
            (stored) =>
              Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, HttpFailure | RouteCodeFailed, SqlClient.SqlClient>((fiber, status) => {
                // The runtime awaited statements and views run on is made when the handler first reads `sql`
                // or calls `view`: most never do, and making it copies the fiber's refs (docs/decisions.md
                // "Extension routes copy the request's context less"). It has the request's context and
                // flags as they are here; its refs are read then (`getFiberRefs` only records the flags the
                // fiber already has), even after the response went out: a handler that goes on working once it
                // returned gets the refs the request fiber ended with, which nothing between here and there sets.
                const context = fiber.currentContext
                let runtime: Runtime.Runtime<never> | undefined
                const runtimeOnce = () => (runtime ??= Runtime.make({ context, fiberRefs: fiber.getFiberRefs(), runtimeFlags: status.runtimeFlags }))
                const routeArgs = routeContext(call, body, server, stored, Context.get(services, SqlClient.SqlClient), runtimeOnce, requestOnce)
                return handlerResponse(() => (call.route.handler as (context: RouteContext) => unknown)(routeArgs))
              })
          )
          const middleware = call.extension.middleware[middlewareGroup[group]] ?? []
          if (middleware.length === 0) return handle
          return Effect.flatMap(runMiddleware(middleware, requestOnce(), call.id), (stopped) => stopped !== undefined ? Effect.succeed(stopped) : handle)
        }))
    }))
