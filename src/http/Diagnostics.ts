import { Effect, Schema } from "effect"
import { parseJsonWithinDepth } from "../domain/JsonDepth.js"
import { anchorReportId } from "../domain/FrontendErrors.js"
import { declaredPayload } from "./api/Payload.js"
import { respondNow } from "./api/Respond.js"
import { DiagnosticsAccepted } from "./contracts/Client.js"
import { SignedInUser } from "./contracts/Security.js"
import { recordFrontendError } from "../runtime/FrontendErrors.js"
import { clientOrigin } from "./ClientAddress.js"
import { consume, diagnosticsReports } from "./RateLimits.js"
import { badRequest, jsonBodyRefused, notFound } from "./Errors.js"
import { ServerState } from "./ServerState.js"

// POST /api/client/host/diagnostics (docs/frontend.md "Diagnostics"): a render error of an extension
// component, sent by the bridge's error boundary. Decoded once here, rate-limited per client address,
// user and extension (http/RateLimits.ts: a component failing in every row must not flood the store), kept as the newest few per
// extension (runtime/FrontendErrors.ts), answered 202.

const decodeReportJson = Schema.decodeUnknown(parseJsonWithinDepth())
// The report's schema is the one the endpoint declares (api/Payload.ts).
const decodeReport = Schema.decodeUnknown(declaredPayload("client", "diagnostics"))

export const diagnostics = Effect.gen(function*() {
  // Signed in, and the CSRF check of the session cookie passed (http/contracts/Security.ts SignedIn).
  const { live, request, user } = yield* SignedInUser
  // Bounded before the report's schema sees it: its refusal formats the value (docs/decisions.md
  // "JSON from outside nests at most 64 levels").
  const json = yield* Effect.flatMap(request.text, decodeReportJson).pipe(
    Effect.mapError((error) => jsonBodyRefused("{extensionId, message, stack?, componentStack?}", error))
  )
  const report = yield* decodeReport(json, { onExcessProperty: "ignore" }).pipe(
    Effect.mapError((error) => badRequest(`invalid diagnostics report: ${error.message}`))
  )
  // A missing anchor is the panel's markup, not an extension's fault: kept under the bridge's own row.
  if (report.kind === "anchor" && report.extensionId !== anchorReportId) {
    return yield* badRequest(`an anchor report's extensionId must be ${anchorReportId}`)
  }
  const extension = report.kind === "anchor" ? undefined : live.generation.extensions.get(report.extensionId)
  if (report.kind !== "anchor" && extension === undefined) return yield* notFound(`no enabled extension ${report.extensionId}`)
  const client = yield* clientOrigin
  yield* consume(
    `diagnostics|${client.address}|${user.id}|${report.extensionId}`,
    diagnosticsReports,
    `too many error reports for ${report.extensionId}: at most ${diagnosticsReports} a minute per client and user`
  )
  yield* (yield* ServerState).diagnosticsWrites.withPermits(1)(recordFrontendError(report, { version: extension?.record.version ?? live.panelInfo.kind, user: user.username }))
  return respondNow(DiagnosticsAccepted, { data: { accepted: true } }, { status: 202 })
})

