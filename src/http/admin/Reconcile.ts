import { HttpServerRequest } from "@effect/platform"
import { Clock, Effect, Either } from "effect"
import { HostConfig } from "../../config/HostConfig.js"
import { WebhookDeliveries } from "../../store/WebhookDeliveries.js"
import type { FrontDoor } from "../../usecases/FrontDoor.js"
import { swapRuntime } from "../../usecases/Operations.js"
import { reconcileDesiredState } from "../../usecases/Reconcile.js"
import { authenticate, header, ServerSettings } from "../Context.js"
import { HttpFailure, unauthorized } from "../Errors.js"
import * as Webhook from "../Webhook.js"
import { respond } from "../api/Respond.js"
import { ReconcileBody, ReconcileRequest } from "../contracts/Admin.js"
import { adminActor } from "./Caller.js"
import { decodeJson } from "./Decode.js"

// `POST /admin/host/api/reconcile` and `POST /admin/host/reconcile` (CI webhooks, docs/gitops.md).

/** Who asked for a reconcile: an admin (session or token), or a signed webhook delivery. */
type ReconcileCaller = Extract<FrontDoor, { readonly _tag: "Admin" | "Webhook" }>

/**
 * A request carrying X-Host-Signature-256 is a webhook: it must be signed with `webhook_secret` and carry
 * an unanswered X-Host-Delivery, and needs no session, token or CSRF token. Anything else is an admin's.
 */
const reconcileCaller = (body: Uint8Array) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const signature = header(request, Webhook.signatureHeader)
    if (signature === undefined) {
      const { auth } = yield* authenticate
      if (auth.user === undefined) {
        return yield* unauthorized(
          `sign the request (${Webhook.signatureHeader} with webhook_secret, docs/gitops.md), sign in, or send an admin API token`
        )
      }
      const actor = yield* adminActor
      return { _tag: "Admin", user: actor.user } satisfies ReconcileCaller
    }
    const { config } = yield* HostConfig
    if (config.webhook_secret === "") {
      return yield* new HttpFailure({
        status: 401,
        code: "WebhookNotConfigured",
        detail: "signed webhooks are refused: no webhook_secret is configured (config/host.yaml or HOST_WEBHOOK_SECRET)"
      })
    }
    // The delivery id is part of what is signed (docs/gitops.md), so it is read first.
    const delivery = header(request, Webhook.deliveryHeader)
    if (delivery === undefined || !Webhook.validDelivery(delivery)) {
      return yield* new HttpFailure({
        status: 400,
        code: "DeliveryMissing",
        detail: `a signed request needs ${Webhook.deliveryHeader}: a unique id of up to 100 visible characters (a UUID, the CI job id)`
      })
    }
    const nowSeconds = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    yield* Either.match(
      Webhook.verifySignature({
        secret: config.webhook_secret,
        body,
        header: signature,
        delivery,
        nowSeconds,
        legacyAllowed: config.webhook_legacy_signatures
      }),
      {
        onLeft: (refusal) => Effect.fail(new HttpFailure({ status: 401, code: refusal.code, detail: refusal.detail })),
        onRight: () => Effect.void
      }
    )
    return { _tag: "Webhook", delivery } satisfies ReconcileCaller
  })

/**
 * Plans the desired-state file of `config/host.yaml` and applies it (`{"dry_run": true}`: plan only). The
 * body is the plan, with `apply` when applied; 200 when everything applied, 409 when another operation
 * holds the lock or a signed delivery was already answered, 422 when the plan cannot be made or the apply
 * stopped (the body then says what was and was not applied).
 */
export const reconcile = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  // The signature covers the exact bytes received, so the body is read once, as bytes.
  const body = new Uint8Array(yield* request.arrayBuffer)
  const caller = yield* reconcileCaller(body)
  const options = yield* decodeJson(ReconcileRequest, "{dry_run?, prune?, allow_destroy?}")(new TextDecoder().decode(body))
  const { env } = yield* ServerSettings
  const run = reconcileDesiredState({
    dryRun: options.dry_run,
    prune: options.prune,
    allowDestroy: options.allow_destroy,
    env,
    door: caller
  }).pipe(
    // The server's runtime swaps after an apply, so the next request sees it.
    Effect.tap((outcome) => Effect.when(swapRuntime, () => outcome._tag === "Applied")),
    Effect.flatMap((outcome) =>
      outcome._tag === "Planned"
        ? respond(ReconcileBody, { data: outcome.plan })
        : respond(ReconcileBody, { data: { ...outcome.plan, apply: outcome.apply } }, { status: outcome.complete ? 200 : 422 })
    )
  )
  if (caller._tag === "Admin") return yield* run
  // A delivery is answered once; one that failed before changing anything (lock held, plan invalid) is
  // forgotten again, so the sender's retry of it is not refused.
  const deliveries = yield* WebhookDeliveries
  if (!(yield* deliveries.claim(caller.delivery))) {
    return yield* new HttpFailure({
      status: 409,
      code: "DeliveryRepeated",
      detail: `delivery ${caller.delivery} was already answered in the last 24 hours; send a new ${Webhook.deliveryHeader} to reconcile again`
    })
  }
  return yield* run.pipe(Effect.tapError(() => deliveries.release(caller.delivery).pipe(Effect.ignore)))
})
