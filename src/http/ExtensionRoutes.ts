import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { renderView, type ViewNamespaces, viewNamespaces } from "../runtime/Views.js"
import type { Generation } from "../runtime/Runtime.js"
import { Effect, Runtime, Schema } from "effect"
import type { Middleware, RouteContext, RouteServer, RouteUser } from "@host/sdk/server"
import type { RouteGroup } from "../domain/Manifest.js"
import { isTooDeepJson, parseJsonWithinDepth, tooDeepJson } from "../domain/JsonDepth.js"
import { effectiveSettings } from "../domain/Settings.js"
import type { PanelUser } from "../panel/Panel.js"
import { type CompiledRoute, groupPrefixes, matchRoute } from "../runtime/Routes.js"
import type { LoadedExtension } from "../runtime/Runtime.js"
import { awaitableSql } from "../store/AwaitableSql.js"
import { SettingsRepo } from "../store/SettingsRepo.js"
import { authenticate, type AuthenticatedRequest, header, requireCsrf } from "./Context.js"
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

const callExtension = (call: () => unknown) =>
  Effect.try({ try: call, catch: fromExtension }).pipe(
    Effect.flatMap(toResponse),
    Effect.mapError((error) => (error instanceof HttpFailure || error instanceof RouteCodeFailed ? error : fromExtension(error)))
  )

const runMiddleware = (middleware: ReadonlyArray<Middleware>, request: Request, extensionId: string) =>
  Effect.gen(function*() {
    for (const step of middleware) {
      const result = yield* Effect.tryPromise({ try: async () => await step({ request, extensionId }), catch: fromExtension })
      if (result instanceof Response) return HttpServerResponse.fromWeb(result)
    }
    return undefined
  })

/** One request to an extension route, once the route is found: what the later steps read. */
interface RouteCall {
  readonly caller: AuthenticatedRequest
  readonly group: RouteGroup
  readonly id: string
  readonly extension: LoadedExtension
  readonly route: CompiledRoute
  readonly params: Readonly<Record<string, string>>
}

/** The extension and route the path names: 404 for an extension not served or a path it has no route for, 405 for a method. */
const findRoute = (group: RouteGroup, caller: AuthenticatedRequest) =>
  Effect.gen(function*() {
    const { live, request } = caller
    const routeParams = yield* HttpRouter.params
    // Reached from the admin API's 405 check (Methods.ts) the route has no params: read them from the path.
    const [vendor, name] = routeParams.vendor !== undefined
      ? [routeParams.vendor, routeParams.name]
      : request.url.split("?")[0]!.slice(groupPrefixes[group].length + 1).split("/")
    const id = `${vendor}/${name ?? ""}`
    const extension: LoadedExtension | undefined = live.generation.extensions.get(id)
    if (extension === undefined) return yield* notServed(live.generation, id, `no enabled extension ${id}`)
    const pathname = request.url.split("?")[0]!
    const rest = pathname.slice(`${groupPrefixes[group]}/${id}`.length) || "/"
    const match = matchRoute(extension.routes[group] ?? [], request.method, rest)
    if (match._tag === "NotFound") return yield* notFound(`${id} has no ${group} route ${rest}`)
    if (match._tag === "MethodNotAllowed") {
      return yield* new HttpFailure({
        status: 405,
        code: "MethodNotAllowed",
        detail: `${request.method} is not allowed here (allowed: ${match.allowed.join(", ")})`
      })
    }
    return { caller, group, id, extension, route: match.route, params: match.params } satisfies RouteCall
  })

/** The group's default middleware: api-client needs a user, admin a panel administrator, web nothing. */
const groupDefaults = (group: RouteGroup, { auth }: AuthenticatedRequest) => {
  if (group === "api-client" && auth.user === undefined) return unauthorized()
  if (group === "admin") {
    if (auth.user === undefined) return unauthorized()
    if (!auth.user.admin) return forbidden("this needs a panel administrator")
  }
  return Effect.void
}

/** The body's bytes and its reading, after the CSRF check (a form's `_token` counts as the token). */
const readCheckedBody = (caller: AuthenticatedRequest) =>
  Effect.gen(function*() {
    const { request } = caller
    const bytes = request.method === "GET" || request.method === "HEAD" ? new Uint8Array(0) : new Uint8Array(yield* request.arrayBuffer)
    const body = yield* readBody(request, bytes)
    // Every group: a session cookie is an ambient credential wherever it is accepted.
    const formToken = typeof body === "object" && body !== null && "_token" in body && typeof body._token === "string"
      ? body._token
      : undefined
    yield* requireCsrf(caller, { formToken })
    return { bytes, body }
  })

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

/** What the handler is given: the request (made on first read), params, query, body, user, server, settings, SQL, views. */
const routeContext = (call: RouteCall, body: unknown, server: RouteServer | undefined, requestOnce: () => Request) =>
  Effect.gen(function*() {
    const { caller: { auth, live, request }, extension, id, params } = call
    // An extension that declares no settings has none to read (effectiveSettings keeps declared keys only).
    const stored = extension.manifest.settings.length === 0 ? {} : yield* Effect.flatMap(SettingsRepo, (settings) => settings.getAll(id))
    const runtime = yield* Effect.runtime<never>()
    const sql = awaitableSql(yield* SqlClient.SqlClient, runtime)
    const query: Record<string, string> = {}
    for (const [key, value] of new URLSearchParams(request.url.split("?")[1] ?? "")) query[key] = value
    const context: RouteContext = {
      get request() {
        return requestOnce()
      },
      params,
      query,
      body,
      user: routeUser(auth.user),
      server,
      settings: effectiveSettings(extension.manifest.settings, stored),
      sql,
      extension: { id, version: extension.manifest.version, basePath: extension.directory },
      view: (name, data) =>
        Runtime.runPromise(runtime)(Effect.flatMap(namespacesOf(live.generation), (namespaces) => renderView(namespaces, name, data)))
    }
    return context
  })

/** The handler of one group's catch-all route. */
export const extensionRoute = (group: RouteGroup) =>
  Effect.gen(function*() {
    const caller = yield* authenticate
    const call = yield* findRoute(group, caller)
    yield* groupDefaults(group, caller)
    const { body, bytes } = yield* readCheckedBody(caller)
    const server = yield* routeServer(call)

    // The web Request is made when middleware or the handler first reads it: most handlers never do.
    let webRequest: Request | undefined
    const requestOnce = () => (webRequest ??= toWebRequest(caller.request, bytes))
    const middleware = call.extension.middleware[middlewareGroup[group]] ?? []
    if (middleware.length > 0) {
      const stopped = yield* runMiddleware(middleware, requestOnce(), call.id)
      if (stopped !== undefined) return stopped
    }

    const context = yield* routeContext(call, body, server, requestOnce)
    return yield* callExtension(() => (call.route.handler as (context: RouteContext) => unknown)(context))
  })
