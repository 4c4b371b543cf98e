import * as RateLimiter from "@effect/experimental/RateLimiter"
import { Context, Duration, Effect, Layer } from "effect"
import { LookupsLimited } from "../panel/Access.js"
import { resolveClient, type TrustedProxiesService } from "./ClientAddress.js"
import { HttpFailure } from "./Errors.js"

// The server's rate limits (docs/http.md "Rate limits"): @effect/experimental's keyed RateLimiter over
// its in-memory store, one per `host serve` process (built in Server.ts; replicas limit separately).
// Keys name the client address of http/ClientAddress.ts, so clients behind a trusted proxy are limited
// one by one and a client cannot pick a fresh address by sending X-Forwarded-For itself.

/** Sign-in: tries per client address and username per minute (successful ones count too). */
export const signInTries = 10
/** Sign-in: tries per client address per minute over every username, so one address cannot fill memory with keys. */
export const signInTriesPerAddress = 100
/** Diagnostics: error reports per client address, user and extension per minute. */
export const diagnosticsReports = 10
export const window = Duration.minutes(1)

export { RateLimiter }

/** The process's one limiter, for every limit above (Server.ts builds it once and provides it to every request). */
export const layer: Layer.Layer<RateLimiter.RateLimiter> = RateLimiter.layer.pipe(Layer.provide(RateLimiter.layerStoreMemory))

/**
 * Takes one try of `key`; past `limit` in the window it fails with 429 `RateLimited` and `Retry-After`
 * (whole seconds until the window lets the key through again). The detail says `what` was limited.
 */
export const consume = (key: string, limit: number, what: string) =>
  Effect.gen(function*() {
    const limiter = yield* RateLimiter.RateLimiter
    yield* limiter.consume({ key, limit, window, algorithm: "fixed-window", onExceeded: "fail" }).pipe(
      Effect.catchTag("RateLimiterError", (error) => {
        const seconds = error.reason === "Exceeded" ? Math.max(1, Math.ceil(Duration.toSeconds(error.retryAfter))) : 60
        return Effect.fail(
          new HttpFailure({
            status: 429,
            code: "RateLimited",
            detail: `${what}; try again in ${seconds} s`,
            headers: { "retry-after": String(seconds) }
          })
        )
      })
    )
  })

/** The gate of one request's identity lookup, from its socket peer and X-Forwarded-For. */
export type LookupGate = (peer: string | undefined, forwardedFor: string | undefined) => Effect.Effect<void, LookupsLimited>

/**
 * The panel is not an amplifier (docs/http.md "Limits"): a real panel's lookups of credentials its identity
 * cache has no answer for are limited per client address (the one ClientAddress.ts resolves) to
 * `perSecond` a second, as a token bucket of `perSecond` tokens (so a burst of one second's worth passes at
 * once). Server.ts provides it in the server's context, which the routes are built in; Context.ts hands it
 * to the panel's lookup (panel/Access.ts `identityLookupGate`). Unset (no server): nothing is limited.
 * A service rather than a fiber ref: every ref a request fiber carries is copied at each change of its
 * context (docs/decisions.md "Effect routes: the steps beyond the floor, counted").
 */
export class PanelLookupGate extends Context.Reference<PanelLookupGate>()("host/http/PanelLookupGate", {
  defaultValue: (): LookupGate | undefined => undefined
}) {}

export const makeLookupGate = (limiter: RateLimiter.RateLimiter, proxies: TrustedProxiesService, perSecond: number): LookupGate => (peer, forwardedFor) =>
  limiter.consume({
    key: `panel-lookup:${resolveClient(peer, { "x-forwarded-for": forwardedFor }, proxies).address}`,
    limit: perSecond,
    window: Duration.seconds(1),
    algorithm: "token-bucket",
    onExceeded: "fail"
  }).pipe(
    Effect.asVoid,
    Effect.catchTag("RateLimiterError", (error) =>
      Effect.fail(
        new LookupsLimited({
          perSecond,
          retryAfterSeconds: error.reason === "Exceeded" ? Math.max(1, Math.ceil(Duration.toSeconds(error.retryAfter))) : 1
        })
      ))
  )
