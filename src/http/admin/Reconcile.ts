import { Effect } from "effect"
import { WebhookDeliveries } from "../../store/WebhookDeliveries.js"
import { swapRuntime } from "../../usecases/Operations.js"
import { reconcileDesiredState } from "../../usecases/Reconcile.js"
import { ServerSettings } from "../Context.js"
import { HttpFailure } from "../Errors.js"
import * as Webhook from "../Webhook.js"
import { respond } from "../api/Respond.js"
import { ReconcileBody } from "../contracts/Admin.js"
import { ReconcileCaller } from "../contracts/Security.js"
import { decodeJson } from "./Decode.js"

// `POST /admin/host/api/reconcile` and `POST /admin/host/reconcile` (CI webhooks, docs/gitops.md).

/**
 * Plans the desired-state file of `config/host.yaml` and applies it (`{"dry_run": true}`: plan only). The
 * body is the plan, with `apply` when applied; 200 when everything applied, 409 when another operation
 * holds the lock or a signed delivery was already answered, 422 when the plan cannot be made or the apply
 * stopped (the body then says what was and was not applied).
 */
// The admin API's reconcile and the webhook declare one request (contracts/Admin.ts `reconcile`).
const decodeReconcileRequest = decodeJson(["webhook", "reconcile"], "{dry_run?, prune?, allow_destroy?}")

export const reconcile = Effect.gen(function*() {
  // A signed delivery or an admin (http/contracts/Security.ts AdminOrSigned), with the body it read.
  const { bodyText, door: caller } = yield* ReconcileCaller
  const options = yield* decodeReconcileRequest(bodyText)
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
