import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context, Effect } from "effect"
import { LiveRuntime } from "../runtime/LiveState.js"
import { adminPage } from "./AdminPage.js"
import { bootScript } from "./BootScript.js"
import * as AdminScreens from "./AdminScreens.js"
import { errorBody, errorResponse, withErrorBodiesThen } from "./Errors.js"
import { extensionRoute } from "./ExtensionRoutes.js"
import { methodNotAllowed } from "./Methods.js"
import { withSecurityHeaders } from "./SecurityHeaders.js"
import * as Login from "./Login.js"
import * as PanelPages from "./PanelPages.js"
import { extensionAsset, extensionBundles, frameworkAsset } from "./Static.js"
import * as ClientEvents from "./ClientEvents.js"
import { apiRoutes } from "./api/Handlers.js"

// The server's routes (docs/http.md). The client endpoints, the panel JSON, the admin API and the CI
// webhook are typed contracts (http/contracts), implemented in http/api/ and mounted here beside the
// routes that are not contracts: sign-in, static files, HTML pages, the events stream and the extension routes.

/**
 * The load balancer's health check (docs/operations.md "Running replicas"). 200 once booted: `ok`, or
 * `degraded` naming the extensions unavailable on this replica — it still serves everything else, so it
 * stays in rotation. `?strict` answers 503 instead while any extension is unavailable, for balancers
 * that should send all traffic to replicas that have everything.
 */
const ready = Effect.gen(function*() {
  const runtime = yield* LiveRuntime
  const request = yield* HttpServerRequest.HttpServerRequest
  const live = yield* runtime.current
  if (live === undefined) return errorResponse(503, "NotReady", "the runtime is still booting")
  const unavailable = [...live.generation.unavailable].map(([id, reason]) => ({ id, reason }))
  const strict = new URL(request.url, "http://host").searchParams.has("strict")
  if (strict && unavailable.length > 0) {
    const body = errorBody(503, "ExtensionUnavailable", `unavailable on this replica: ${unavailable.map((entry) => `${entry.id} (${entry.reason})`).join("; ")}`)
    return yield* HttpServerResponse.json({ ...body, unavailable }, { status: 503 })
  }
  return yield* HttpServerResponse.json({ status: unavailable.length === 0 ? "ok" : "degraded", generation: live.generation.number, unavailable })
})

const authRoutes = HttpRouter.empty.pipe(
  HttpRouter.get("/host/ready", ready),
  HttpRouter.get("/auth/login", Login.loginPage),
  HttpRouter.post("/auth/login", Login.login),
  HttpRouter.get("/auth/session", Login.session),
  HttpRouter.post("/auth/logout", Login.logout)
)

/** Framework client endpoints (client-api group: an authenticated user) and static files. */
const clientRoutes = HttpRouter.empty.pipe(
  HttpRouter.get("/host/boot.js", bootScript),
  HttpRouter.get("/host/vendor.js", frameworkAsset("vendor.js")),
  // The bridge's live updates (docs/frontend.md "Live updates").
  HttpRouter.get("/api/client/host/events", ClientEvents.events),
  HttpRouter.get("/host/bridge.js", frameworkAsset("bridge.js")),
  HttpRouter.get("/host/utility.css", frameworkAsset("utility.css")),
  HttpRouter.get("/host/ext/:vendor/:name/*", extensionAsset),
  // Under a real panel boot.js asks the bundles in one answer (docs/decisions.md "Under a real panel the bundles come in one answer").
  HttpRouter.get("/host/bundles.json", extensionBundles)
)

/** The admin screens' pages (docs/admin.md, docs/http.md "Admin screens"); their JSON API is a typed contract. */
const adminRoutes = HttpRouter.empty.pipe(
  HttpRouter.get("/admin/host/extensions", adminPage),
  HttpRouter.concat(AdminScreens.routes)
)

// A known admin API path asked with another method: 405 with Allow (anything else: the extension routes).
// The known paths and methods are the served routes' own, so the typed endpoints count.
const adminMethods = <E, R>(served: HttpRouter.HttpRouter<E, R>) =>
  HttpRouter.all(HttpRouter.empty, "/admin/host/api/*", methodNotAllowed(served, extensionRoute("admin")))

/** Extension routes of the three groups. */
const extensionRoutes = HttpRouter.empty.pipe(
  HttpRouter.all("/api/client/host/:vendor/:name", extensionRoute("api-client")),
  HttpRouter.all("/api/client/host/:vendor/:name/*", extensionRoute("api-client")),
  HttpRouter.all("/admin/host/:vendor/:name", extensionRoute("admin")),
  HttpRouter.all("/admin/host/:vendor/:name/*", extensionRoute("admin")),
  HttpRouter.all("/host/:vendor/:name", extensionRoute("web")),
  HttpRouter.all("/host/:vendor/:name/*", extensionRoute("web"))
)

/** The services the routes other than the typed endpoints take from the server's context. */
type ServicesOf<T> = T extends HttpRouter.HttpRouter<infer _E, infer R> ? HttpRouter.HttpRouter.ExcludeProvided<R> : never
type AppServices = ServicesOf<typeof authRoutes | typeof clientRoutes | typeof adminRoutes | typeof extensionRoutes | typeof PanelPages.routes>

/**
 * A router whose routes run in `services` (the server's context) with what the request brought on top, as
 * HttpApiBuilder runs the typed endpoints' handlers in the context they were built in. The request itself
 * runs in a context of five services (Server.ts `requestContext`), so what every request pays for — the context copies of
 * the router, of the caller's statement and of HttpApiBuilder, and the comparisons of the context fiber
 * ref — is over a handful of services, not the server's ~50; a route that needs the server's services
 * gets them in one merge (docs/http.md "Performance").
 */
const inServices = <S>(services: Context.Context<S>) => <E, R extends S | HttpRouter.HttpRouter.Provided>(router: HttpRouter.HttpRouter<E, R>) =>
  HttpRouter.use(router, (route) =>
    Effect.mapInputContext(route, (request: Context.Context<HttpRouter.HttpRouter.Provided>) => Context.merge(services, request)))

// The reference panel (its JSON, files and page shell) last: its catch-all shell route matches only
// what no other route does.
// The typed endpoints come first only for reading order: the router picks a static path over a
// parameter whatever the order.
const routerWith = <E, R>(typed: HttpRouter.HttpRouter<E, R>, services: Context.Context<AppServices>) => {
  const served = inServices(services)
  return HttpRouter.concatAll(
    served(authRoutes),
    typed,
    served(clientRoutes),
    served(adminRoutes),
    served(adminMethods(typed)),
    served(extensionRoutes),
    served(PanelPages.routes)
  )
}

/**
 * The router as one app whose every failure is a JSON error body, and every HTML answer hardened (docs/http.md
 * "Security headers"). Built in the server's context: the typed endpoints' handlers and every other route
 * take their services from it, so the app itself needs none but the request's (Server.ts runs it so).
 */
export const app = Effect.all([apiRoutes, Effect.context<AppServices>()]).pipe(
  Effect.flatMap(([typed, services]) => HttpRouter.toHttpApp(routerWith(typed, services))),
  Effect.map((httpApp) => withErrorBodiesThen(httpApp, withSecurityHeaders))
)
