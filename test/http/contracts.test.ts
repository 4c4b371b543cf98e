import { HttpApi } from "@effect/platform"
import { Data, Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { HostApi } from "../../src/http/contracts/Api.js"
import { HostError } from "../../src/http/contracts/Errors.js"
import { errorBody, HttpFailure, isHttpError, notFound, withErrorBodies } from "../../src/http/Errors.js"

// The typed HTTP contracts (docs/decisions.md "Typed HTTP contracts, exhaustive error answers, one CSRF
// check, one ETag answer (issue 22, HTTP contracts)"): which paths they declare, the error body they declare, and the exhaustive
// error answers (checked by tsc: the `@ts-expect-error` line stops compiling if the guard goes away).

class NotAnHttpError extends Data.TaggedError("NotAnHttpError")<{}> {}

describe("HTTP contracts", () => {
  it("declare the client endpoints, the panel JSON, the admin API, the CI webhook and the OpenAPI document at their paths", () => {
    const declared: Array<string> = []
    const statuses = new Map<string, ReadonlyArray<number>>()
    HttpApi.reflect(HostApi, {
      onGroup: () => undefined,
      onEndpoint: ({ endpoint, errors, successes }) => {
        declared.push(`${endpoint.method} ${endpoint.path}`)
        statuses.set(`${endpoint.method} ${endpoint.path}`, [...successes.keys(), ...errors.keys()].sort())
      }
    })
    expect(declared.sort()).toEqual([
      "DELETE /admin/host/api/servers/:uuid",
      "DELETE /api/client/host/servers/:server/access",
      "GET /admin/host/api/activity",
      "GET /admin/host/api/activity/page",
      "GET /admin/host/api/desired-state",
      "GET /admin/host/api/extensions",
      "GET /admin/host/api/extensions/:vendor/:name",
      "GET /admin/host/api/extensions/:vendor/:name/doctor",
      "GET /admin/host/api/extensions/:vendor/:name/impact",
      "GET /admin/host/api/extensions/:vendor/:name/settings",
      "GET /admin/host/api/extensions/overview",
      "GET /admin/host/api/health",
      "GET /admin/host/api/registry",
      "GET /admin/host/api/updates",
      "GET /api/client/account",
      "GET /api/client/host/bootstrap",
      "GET /api/client/host/config",
      "GET /api/client/host/extensions",
      "GET /api/client/host/extensions/:vendor/:name/settings",
      "GET /api/client/host/servers/:server/access",
      "GET /api/client/host/slots",
      "GET /api/client/servers",
      "GET /api/client/servers/:uuid",
      "GET /host/openapi.json",
      "POST /admin/host/api/desired-state/adopt",
      "POST /admin/host/api/extensions",
      "POST /admin/host/api/extensions/:vendor/:name/:action",
      "POST /admin/host/api/extensions/:vendor/:name/health",
      "POST /admin/host/api/extensions/preview",
      "POST /admin/host/api/reconcile",
      "POST /admin/host/api/registry/install",
      "POST /admin/host/api/servers",
      "POST /admin/host/api/updates",
      "POST /admin/host/reconcile",
      "POST /api/client/host/diagnostics",
      "PUT /admin/host/api/extensions/:vendor/:name/settings",
      "PUT /api/client/host/servers/:server/access"
    ])
    expect(statuses.get("POST /api/client/host/diagnostics")).toEqual([202, 400, 401, 403, 404, 429, 500, 503])
    expect(statuses.get("GET /api/client/host/slots")).toEqual([200, 400, 401, 500, 503])
    // An admin endpoint: every status the admin API answers it with, its success first among them.
    expect(statuses.get("POST /admin/host/api/extensions")).toEqual([201, 400, 401, 403, 404, 409, 413, 422, 500, 502, 503])
    // A stopped apply answers 422 with the plan and what was applied, as a success body beside 200.
    expect(statuses.get("POST /admin/host/reconcile")).toEqual([200, 400, 401, 403, 409, 422, 422, 500, 503])
  })

  it("declare the one error body: a failure encodes as the server renders it, and reads back as an HttpFailure", () => {
    const failure = notFound("no server x")
    const encoded = Schema.encodeSync(HostError)(failure)
    expect(encoded).toEqual(errorBody(404, "NotFound", "no server x"))
    const decoded = Schema.decodeUnknownSync(HostError)(encoded)
    expect(decoded).toBeInstanceOf(HttpFailure)
    expect(decoded).toMatchObject({ status: 404, code: "NotFound", detail: "no server x" })
  })

  it("answer only failures with an answer of their own; others do not compile", () => {
    expect(isHttpError(notFound())).toBe(true)
    expect(isHttpError(new NotAnHttpError())).toBe(false)
    const unanswered = withErrorBodies(
      // @effect-diagnostics-next-line missingEffectError:off
      // @ts-expect-error a failure without an answer in http/Errors.ts cannot reach withErrorBodies
      Effect.fail(new NotAnHttpError())
    )
    expect(Effect.isEffect(unanswered)).toBe(true)
  })
})
