import { HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Schema } from "effect"
import { anchorReportId, FrontendErrorReport } from "../domain/FrontendErrors.js"
import { recordFrontendError } from "../runtime/FrontendErrors.js"
import { LiveRuntime, type LiveRuntimeService } from "../runtime/LiveState.js"
import { csrfOk } from "./Auth.js"
import { authenticate, requireUser } from "./Context.js"
import { badRequest, HttpFailure, notFound } from "./Errors.js"

// POST /api/client/host/diagnostics (docs/frontend.md "Diagnostics"): a render error of an extension
// component, sent by the bridge's error boundary. Decoded once here, rate-limited per user and
// extension (a component failing in every row must not flood the store), kept as the newest few per
// extension (runtime/FrontendErrors.ts), answered 202.

/** At most this many reports per user and extension per window; more are 429. */
export const reportsPerWindow = 10
export const windowMs = 60_000

const limiters = new WeakMap<LiveRuntimeService, Map<string, Array<number>>>()

const allowed = (runtime: LiveRuntimeService, key: string, now: number) => {
  let limiter = limiters.get(runtime)
  if (limiter === undefined) {
    limiter = new Map()
    limiters.set(runtime, limiter)
  }
  const recent = (limiter.get(key) ?? []).filter((time) => now - time < windowMs)
  if (recent.length >= reportsPerWindow) {
    limiter.set(key, recent)
    return false
  }
  recent.push(now)
  limiter.set(key, recent)
  if (limiter.size > 10_000) limiter.clear()
  return true
}

const writes = Effect.unsafeMakeSemaphore(1)

export const diagnostics = Effect.gen(function*() {
  const { auth, live, request } = yield* authenticate
  const user = yield* requireUser(auth)
  if (!csrfOk(auth, request, live.access)) {
    return yield* new HttpFailure({ status: 403, code: "CsrfTokenMismatch", detail: "missing or wrong CSRF token (X-CSRF-Token)" })
  }
  const json = yield* Effect.mapError(request.json, () => badRequest("the body must be JSON: {extensionId, message, stack?, componentStack?}"))
  const report = yield* Schema.decodeUnknown(FrontendErrorReport)(json, { onExcessProperty: "ignore" }).pipe(
    Effect.mapError((error) => badRequest(`invalid diagnostics report: ${error.message}`))
  )
  // A missing anchor is the panel's markup, not an extension's fault: kept under the bridge's own row.
  if (report.kind === "anchor" && report.extensionId !== anchorReportId) {
    return yield* badRequest(`an anchor report's extensionId must be ${anchorReportId}`)
  }
  const extension = report.kind === "anchor" ? undefined : live.generation.extensions.get(report.extensionId)
  if (report.kind !== "anchor" && extension === undefined) return yield* notFound(`no enabled extension ${report.extensionId}`)
  const runtime = yield* LiveRuntime
  if (!allowed(runtime, `${user.id}|${report.extensionId}`, yield* Clock.currentTimeMillis)) {
    return yield* new HttpFailure({
      status: 429,
      code: "RateLimited",
      detail: `too many error reports for ${report.extensionId}: at most ${reportsPerWindow} a minute per user`
    })
  }
  yield* writes.withPermits(1)(recordFrontendError(report, { version: extension?.record.version ?? live.panelInfo.kind, user: user.username }))
  return HttpServerResponse.unsafeJson({ data: { accepted: true } }, { status: 202 })
})

