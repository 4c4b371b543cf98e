import { HttpApiSchema } from "@effect/platform"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { PanelAccess, RequestAuth, RequestCredentials } from "../panel/Access.js"
import type { Sessions } from "../panel/Session.js"
import type { ClientBodies } from "../runtime/ClientView.js"
import type { LiveRuntimeService } from "../runtime/LiveState.js"
import { HostApi } from "./contracts/Api.js"
import { nosniff } from "./SecurityHeaders.js"
import { clientBodyCaching, conditional } from "./Static.js"

// The fast lane (DESIGN §23, docs/http.md "Performance"): GET /api/client/host/slots|extensions|config,
// answered in node's request listener before the Effect app, from the bodies precomputed per runtime
// generation and the driver's synchronous identity answer (`PanelAccess.peek`: the embedded panel always,
// a real panel from its warm identity cache). It answers only what the router would answer byte for byte
// (the same status, headers and body: test/http/fast-lane.test.ts compares them) and leaves everything
// else to the router: any other method, a request whose caller is not a signed-in user (the router words
// the 401), an embedded session cookie (its sign-out is a database read, docs/http.md "Signing out"), a
// credential the driver cannot answer for without asking the panel, a runtime still booting.
//
// Paths and content type are the contract's: the paths and the success encoding of the client group's
// endpoints (http/contracts/Client.ts). The contract declares no caching: the Cache-Control is
// `clientBodyCaching`, the one the router's answer carries (http/api/Handlers.ts).

/** One precomputed answer: which body, and the content type its endpoint declares. */
export interface FastLaneRoute {
  readonly body: keyof ClientBodies
  readonly contentType: string
  readonly cacheControl: string
}

/** The client endpoints answered from a precomputed body: each is named as its body is. */
const precomputedEndpoints: ReadonlyArray<keyof ClientBodies> = ["slots", "extensions", "config"]

const routesOf = (): ReadonlyMap<string, FastLaneRoute> => {
  const client = HostApi.groups["client"]
  const routes = new Map<string, FastLaneRoute>()
  for (const body of precomputedEndpoints) {
    const endpoint = client?.endpoints[body]
    // A contract without these endpoints is a programming error: say so when the module loads, not per request.
    if (endpoint === undefined || endpoint.method !== "GET") throw new Error(`the client contract has no GET endpoint "${body}" for the fast lane`)
    routes.set(endpoint.path, { body, contentType: HttpApiSchema.getEncoding(endpoint.successSchema.ast).contentType, cacheControl: clientBodyCaching })
  }
  return routes
}

/** Path → the precomputed answer at it, from the contract. */
export const fastLaneRoutes: ReadonlyMap<string, FastLaneRoute> = routesOf()

const headerText = (value: string | ReadonlyArray<string> | undefined) => (typeof value === "string" ? value : undefined)

/**
 * The driver's synchronous answer, or undefined when it has none — or when it throws: a defect here is not
 * the listener's to answer (thrown out of node's request listener it would end the process). The router
 * meets the same defect inside its fiber, logs it and answers 500 (http/Errors.ts `withErrorBodies`).
 */
const peekOrDecline = (access: PanelAccess, credentials: RequestCredentials, sessions: Sessions<unknown>): RequestAuth | undefined => {
  try {
    return access.peek(credentials, sessions)
  } catch {
    return undefined
  }
}

/** A body's two answers as raw header lines, in the order the router writes them: made once per body. */
interface PreparedAnswer {
  readonly ok: ReadonlyArray<string>
  readonly notModified: ReadonlyArray<string>
}

/**
 * The router's headers for `body` at `route`, in its order (http/Static.ts `withCachedETag`, written by
 * @effect/platform-node, after the nosniff every answer gets first, http/SecurityHeaders.ts `everyAnswer`):
 * the validators, then the body's type and length. As a flat name/value list written by `writeHead` alone,
 * node takes it as is, with no header object to build or merge per request.
 */
const prepare = (route: FastLaneRoute, body: { readonly etag: string; readonly bytes: Uint8Array }): PreparedAnswer => {
  const validators = conditional(undefined, body.etag, route.cacheControl).headers
  const first = [nosniff.name, nosniff.value, "etag", validators.etag, "cache-control", validators["cache-control"]]
  return { ok: [...first, "content-type", route.contentType, "content-length", String(body.bytes.byteLength)], notModified: first }
}

/**
 * Answers a fast-lane request and returns true, or returns false to let the router answer it. Called as the
 * request enters the server, before anything else touched the response: a request with a body (declared,
 * chunked, or awaiting `100 Continue`) is the server's edges' to judge first (http/Limits.ts), so it is
 * left to the router, which answers it after them.
 */
export const makeFastLane = (runtime: LiveRuntimeService, sessions: Sessions<unknown>) => {
  const prepared = new WeakMap<object, PreparedAnswer>()
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    if (request.method !== "GET") return false
    const url = request.url ?? ""
    const query = url.indexOf("?")
    const route = fastLaneRoutes.get(query < 0 ? url : url.slice(0, query))
    if (route === undefined) return false
    const headers = request.headers
    if (headers["content-length"] !== undefined || headers["transfer-encoding"] !== undefined) return false
    // A plain Node handler, outside any fiber: the generation is read synchronously, not by running an Effect.
    const live = runtime.currentNow()
    if (live === undefined) return false
    const auth = peekOrDecline(live.access, { authorization: headerText(headers.authorization), cookie: headerText(headers.cookie) }, sessions)
    // Only a signed-in user is answered here. An embedded session is checked against the sign-outs in the
    // database, which a synchronous answer cannot read: the router answers it. A real panel's session has
    // no such record (the panel is the authority, and `peek` answers only from an entry the router would use).
    if (auth === undefined || auth.user === undefined || auth.invalidToken || auth.session !== undefined) return false
    const body = live.bodies[route.body]
    let answer = prepared.get(body)
    if (answer === undefined) {
      answer = prepare(route, body)
      prepared.set(body, answer)
    }
    if (conditional(headerText(headers["if-none-match"]), body.etag, route.cacheControl).status === 304) {
      response.writeHead(304, answer.notModified as Array<string>)
      response.end()
      return true
    }
    response.writeHead(200, answer.ok as Array<string>)
    response.end(body.bytes)
    return true
  }
}
