import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, TestClock } from "effect"
import { HttpFailure } from "../../src/http/Errors.js"
import * as RateLimits from "../../src/http/RateLimits.js"

// The sign-in limit of POST /auth/login (docs/http.md "Rate limits"): 10 tries a minute per client
// address and username through the server's one limiter layer, answered 429 RateLimited with
// Retry-After in whole seconds; the window is a fixed minute on Effect's Clock, so a test moves time
// instead of waiting. The HTTP answer itself (JSON body and the form page) is in client-address.test.ts.

const tryAs = (address: string, username: string) =>
  RateLimits.consume(`sign-in|${address}|${username}`, RateLimits.signInTries, `too many sign-in tries for ${username} from ${address}`)

const failureOf = <A>(exit: Exit.Exit<A, HttpFailure>) => {
  if (Exit.isSuccess(exit)) throw new Error("expected a refusal")
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (failure === undefined) throw new Error(`expected a failure, got ${exit.cause._tag}`)
  return failure
}

describe("sign-in rate limit", () => {
  it.effect("the 11th try of one address and user in a minute is 429 with Retry-After; others are counted apart", () =>
    Effect.gen(function*() {
      expect(RateLimits.signInTries).toBe(10)
      for (let i = 0; i < 10; i++) yield* tryAs("203.0.113.7", "admin")
      yield* TestClock.adjust("30 seconds")
      const failure = failureOf(yield* Effect.exit(tryAs("203.0.113.7", "admin")))
      expect(failure).toBeInstanceOf(HttpFailure)
      expect(failure.status).toBe(429)
      expect(failure.code).toBe("RateLimited")
      expect(failure.headers).toEqual({ "retry-after": "30" })
      expect(failure.detail).toBe("too many sign-in tries for admin from 203.0.113.7; try again in 30 s")
      // Another user from the same address, and the same user from another address, still get their ten.
      yield* tryAs("203.0.113.7", "alice")
      yield* tryAs("198.51.100.2", "admin")
    }).pipe(Effect.provide(RateLimits.layer)))

  it.effect("the window is one minute: after it the user may try again", () =>
    Effect.gen(function*() {
      for (let i = 0; i < 10; i++) yield* tryAs("203.0.113.7", "admin")
      expect(Exit.isFailure(yield* Effect.exit(tryAs("203.0.113.7", "admin")))).toBe(true)
      yield* TestClock.adjust("59 seconds")
      expect(Exit.isFailure(yield* Effect.exit(tryAs("203.0.113.7", "admin")))).toBe(true)
      yield* TestClock.adjust("1 second")
      yield* tryAs("203.0.113.7", "admin")
    }).pipe(Effect.provide(RateLimits.layer)))

  it.effect("Retry-After is at least one second", () =>
    Effect.gen(function*() {
      for (let i = 0; i < 10; i++) yield* tryAs("203.0.113.7", "admin")
      yield* TestClock.adjust("59900 millis")
      const failure = failureOf(yield* Effect.exit(tryAs("203.0.113.7", "admin")))
      expect(failure.headers).toEqual({ "retry-after": "1" })
    }).pipe(Effect.provide(RateLimits.layer)))
})
