import { Etag, FileSystem, HttpIncomingMessage, HttpMiddleware, HttpPlatform, Path } from "@effect/platform"
import * as NodeHttpPlatform from "@effect/platform-node/NodeHttpPlatform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Context, Data, Deferred, Effect, Layer, Option, Runtime } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { databaseRevocations, loadSessionKey, makeSessions } from "../panel/Session.js"
import { CoreRows } from "../store/CoreRows.js"
import { HostConfig } from "../config/HostConfig.js"
import { LiveRuntime } from "../runtime/LiveState.js"
import { randomBytes } from "../system/Ids.js"
import { app } from "./App.js"
import { generationFrame } from "./ClientEvents.js"
import { EventStreams, makeEventStreams } from "./EventStreams.js"
import { makeTrustedProxies, TrustedProxies } from "./ClientAddress.js"
import { ServerClosing, type ServerOptions, ServerSessions, ServerSettings } from "./Context.js"
import { closeWhenRefusedUnread, defaultBodyBytes, isChunked, isUploadRequest, limitConnections, readChunkedBody, refuseOversizedBody } from "./Limits.js"
import * as RateLimits from "./RateLimits.js"
import * as ServerState from "./ServerState.js"
import { everyAnswer } from "./SecurityHeaders.js"
import { makeFastLane } from "./FastLane.js"

// `host serve`'s HTTP server: a node:http server whose request listener first tries the fast lane —
// the three read-only client bodies, precomputed per runtime generation, for a caller the panel driver
// knows without asking (http/FastLane.ts) — and hands every other request (and every fast-lane request
// it does not answer exactly as the router would, e.g. a 401) to the Effect app, which runs with
// per-request tracing disabled.

export class ListenFailed extends Data.TaggedError("ListenFailed")<{ readonly host: string; readonly port: number; readonly detail: string }> {
  override get message() {
    return `cannot listen on ${this.host}:${this.port}: ${this.detail}`
  }
}

export interface ListenOptions extends ServerOptions {
  readonly host: string
  readonly port: number
  /** Largest request body accepted, uploads aside (they follow `limits.archive_bytes`): default 1 MiB. */
  readonly maxBodyBytes?: number
  /** Answer the hot client endpoints in the fast lane before the Effect app (default true; off to measure and compare). */
  readonly fastPath?: boolean
}

/** What a request of the app runs in (listen, below): the body limit, and the platform services HttpApiBuilder's router names. */
const requestContext = Effect.map(
  Effect.context<HttpIncomingMessage.MaxBodySize | FileSystem.FileSystem | Path.Path | HttpPlatform.HttpPlatform | Etag.Generator>(),
  Context.pick(HttpIncomingMessage.MaxBodySize, FileSystem.FileSystem, Path.Path, HttpPlatform.HttpPlatform, Etag.Generator)
)

/**
 * Listens (port 0 picks a free port) and serves until the scope closes; returns the bound address.
 * Closing stops accepting, lets in-flight requests finish for up to 5 s, then drops what is left.
 */
export const listen = (options: ListenOptions) =>
  Effect.gen(function*() {
    const runtime = yield* LiveRuntime
    const clock = yield* Effect.clock
    // The sessions' CSRF tokens come from the current Ids (system/Ids.ts), run synchronously as signing in is.
    const runSync = Runtime.runSync(yield* Effect.runtime<never>())
    const now = () => clock.unsafeCurrentTimeMillis()
    // Sign-outs are rows in the shared database, so every replica honours them (docs/http.md "Security").
    const sessions = makeSessions(yield* loadSessionKey, now, (bytes) => runSync(randomBytes(bytes)), databaseRevocations(yield* CoreRows, now))
    const { config } = yield* HostConfig
    const otherBytes = options.maxBodyBytes ?? defaultBodyBytes
    const closing = yield* Deferred.make<void>()
    // One rate limiter and one trusted-proxy matcher for the process (docs/http.md "Rate limits").
    const perServer = yield* Layer.build(Layer.merge(RateLimits.layer, ServerState.layer))
    const proxies = makeTrustedProxies(config.trusted_proxies)
    // The live-update streams, capped (docs/http.md "Live updates: caps").
    const streams = yield* makeEventStreams({ runtime, frameOf: generationFrame, total: config.limits.event_streams })
    // The app is built in the server's context, which every route runs in (http/App.ts); a request itself runs
    // in `requestContext` only, so it copies and compares five services, not all of them (docs/http.md "Performance").
    const handler = yield* Effect.flatMap(app, (httpApp) =>
      Effect.flatMap(requestContext, (context) => Effect.mapInputContext(NodeHttpServer.makeHandler(httpApp), (_: Context.Context<never>) => context))).pipe(
      Effect.provideService(ServerSessions, sessions),
      Effect.provideService(ServerClosing, closing),
      Effect.provide(perServer),
      Effect.provideService(TrustedProxies, proxies),
      Effect.provideService(EventStreams, streams),
      Effect.provideService(ServerSettings, { publicDirectories: options.publicDirectories, frameworkRoot: options.frameworkRoot, env: options.env }),
      Effect.provideService(
        HttpIncomingMessage.MaxBodySize,
        Option.some(FileSystem.Size(otherBytes))
      ),
      // The HTTP platform and ETag generator HttpApiBuilder's router asks for (file answers); only
      // those, so the file system and everything else stay the ones the server was started with.
      Effect.provide(Layer.mergeAll(NodeHttpPlatform.layer, Etag.layer)),
      // No request span, and no span for what a request calls (the repositories' withSpan): nothing
      // exports them, and each one costs a stack trace (docs/http.md "Performance").
      HttpMiddleware.withTracerDisabledWhenEffect(() => true),
      Effect.withTracerEnabled(false),
      // A real panel's lookups of credentials it has not seen, per client address (docs/http.md "Limits").
      Effect.provideService(
        RateLimits.PanelLookupGate,
        RateLimits.makeLookupGate(Context.get(perServer, RateLimits.RateLimiter.RateLimiter), proxies, config.panel.lookups_per_second)
      )
    )
    const fast = options.fastPath === false ? () => false : makeFastLane(runtime, sessions)
    // The edges of the server (docs/http.md "Limits"): uploads are authenticated and authorized before a
    // byte of their body is read (their size is judged after that, admin/Uploads.ts), and a refusal written
    // while the body is unread closes the connection; other bodies are judged here, declared or chunked.
    const accept = (request: IncomingMessage, response: ServerResponse, waitingForContinue: boolean) => {
      // The fast lane first: it answers only a request without a body, which none of the edges below
      // would stop, and writes the nosniff header itself, with the rest of its precomputed header lines.
      if (!waitingForContinue && fast(request, response)) return
      // Every answer, whoever writes it (docs/http.md "Security").
      everyAnswer(response)
      if (isUploadRequest(request.method, request.url)) {
        closeWhenRefusedUnread(request, response)
        // `100 Continue` only once the upload is read, i.e. after it was authorized.
        if (waitingForContinue) request.once("resume", () => response.headersSent || response.writeContinue())
        return handler(request, response)
      }
      if (refuseOversizedBody(request, response, config.limits.archive_bytes, { otherBytes, waitingForContinue })) return
      if (waitingForContinue) response.writeContinue()
      if (isChunked(request)) return readChunkedBody(request, response, otherBytes, handler)
      handler(request, response)
    }
    const headersTimeout = config.server.headers_timeout * 1000
    const server = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const created = createServer({
          // Request headers must arrive within server.headers_timeout (node answers 408 and closes); its
          // check runs every connectionsCheckingInterval, so that is a fraction of the timeout.
          headersTimeout,
          requestTimeout: Math.max(300_000, headersTimeout),
          connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(headersTimeout / 4)))
        }, (request, response) => accept(request, response, false))
        // A client that waits for `100 Continue` before sending a body too large is answered without it.
        created.on("checkContinue", (request: IncomingMessage, response: ServerResponse) => accept(request, response, true))
        limitConnections(created, config.server.connections_per_address, proxies.trusts)
        return created
      }),
      (server) =>
        Effect.zipRight(Deferred.succeed(closing, undefined).pipe(Effect.zipLeft(Effect.sync(streams.endAll))), Effect.async<void>((resume) => {
          const timer = setTimeout(() => server.closeAllConnections(), 5_000)
          server.close(() => {
            clearTimeout(timer)
            resume(Effect.void)
          })
          server.closeIdleConnections()
        }))
    )
    yield* Effect.async<void, ListenFailed>((resume) => {
      const onError = (error: Error) => resume(Effect.fail(new ListenFailed({ host: options.host, port: options.port, detail: error.message })))
      server.once("error", onError)
      server.listen({ host: options.host, port: options.port }, () => {
        server.off("error", onError)
        resume(Effect.void)
      })
    })
    const address = server.address() as AddressInfo
    return { host: address.address, port: address.port, url: `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}` }
  })
