// The platform's floor for P3 (docs/decisions.md "P3: the platform's floor") and R4: the cheapest Effect HTTP
// apps that answer the same bytes, run as a child of a bench so it gets its own core like host serve.
// `router`: one HttpRouter GET route; `api`: one HttpApiBuilder endpoint (handleRaw), the way Host's typed
// endpoints are served; `caller`: that endpoint with a statement of its caller as DESIGN §23 asks of every
// endpoint (an HttpApiMiddleware that provides the caller, here a constant, which the handler reads);
// `any`: one HttpRouter route answering every method and path (R4's mix, bench/load.bench.mjs).
// All behind node:http through NodeHttpServer.makeHandler, tracing off as in host serve.
// Usage: node bench/effect-floor.mjs <router|api|caller|any> <body file>; prints the URL once listening.
import { Etag, HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpMiddleware, HttpRouter, HttpServerResponse } from "@effect/platform"
import * as NodeHttpPlatform from "@effect/platform-node/NodeHttpPlatform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Context, Effect, Layer, Schema } from "effect"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"

const [kind, file] = process.argv.slice(2)
const body = new Uint8Array(readFileSync(file))
const path = "/api/client/host/slots"
const answer = Effect.sync(() => HttpServerResponse.uint8Array(body, { contentType: "application/json" }))

const routerApp = Effect.succeed(HttpRouter.empty.pipe(HttpRouter.get(path, answer)))
const anyApp = Effect.succeed(HttpRouter.empty.pipe(HttpRouter.all("*", answer)))

/** An HttpApiBuilder app of one group, built with `extra` (the middleware's layer, if any). */
const apiAppOf = (Api, client, extra = Layer.empty) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      Layer.mergeAll(HttpApiBuilder.api(Api).pipe(Layer.provide(client), Layer.provide(extra)), HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer, NodeHttpPlatform.layer, Etag.layer)
    )
    return yield* Effect.provide(HttpApiBuilder.httpApp, context)
  })

const apiApp = Effect.suspend(() => {
  const Api = HttpApi.make("floor").add(HttpApiGroup.make("client").add(HttpApiEndpoint.get("slots", path).addSuccess(Schema.Unknown)))
  return apiAppOf(Api, HttpApiBuilder.group(Api, "client", (handlers) => handlers.handleRaw("slots", () => answer)))
})

class CurrentCaller extends Context.Tag("floor/CurrentCaller")() {}
class Caller extends HttpApiMiddleware.Tag()("floor/Caller", { provides: CurrentCaller }) {}
const caller = { id: 1 }

const callerApp = Effect.suspend(() => {
  const Api = HttpApi.make("floor").add(HttpApiGroup.make("client").add(HttpApiEndpoint.get("slots", path).addSuccess(Schema.Unknown).middleware(Caller)))
  const client = HttpApiBuilder.group(Api, "client", (handlers) => handlers.handleRaw("slots", () => Effect.zipRight(CurrentCaller, answer)))
  return apiAppOf(Api, client, Layer.succeed(Caller, Effect.succeed(caller)))
})

const handler = await Effect.runPromise(
  Effect.scoped(
    ({ api: apiApp, caller: callerApp, any: anyApp }[kind] ?? routerApp).pipe(
      Effect.flatMap(NodeHttpServer.makeHandler),
      HttpMiddleware.withTracerDisabledWhenEffect(() => true),
      Effect.withTracerEnabled(false)
    )
  )
)
const server = createServer(handler)
server.listen(0, "127.0.0.1", () => console.log(`http://127.0.0.1:${server.address().port}`))
