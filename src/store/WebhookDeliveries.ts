import { DateTime, Duration, Effect, Option } from "effect"
import { CoreKeys, CoreRows, member } from "./CoreRows.js"

// Signed webhook deliveries answered in the last 24 hours (docs/gitops.md): one `host/core` row per
// delivery in host_settings (`webhook_delivery:<id>`), so a repeat is refused across restarts and
// replicas. Claiming is an INSERT that the UNIQUE(extension_id, key) constraint lets only one request win,
// the same way the operation lock is taken.

/** How long a delivery id is remembered. */
export const deliveryWindow = Duration.hours(24)

export class WebhookDeliveries extends Effect.Service<WebhookDeliveries>()("host/WebhookDeliveries", {
  effect: Effect.gen(function*() {
    const rows = yield* CoreRows

    /** Forgets the deliveries older than the window. */
    const prune = (now: Date) =>
      rows.removeFamily(CoreKeys.webhookDeliveries, { createdBefore: new Date(now.getTime() - Duration.toMillis(deliveryWindow)) })

    /**
     * Records `delivery` as answered; false when it already was within the window (a repeat). Entries
     * older than the window are pruned first, so an old id may come again.
     */
    const claim = (delivery: string) =>
      Effect.flatMap(Effect.map(DateTime.now, DateTime.toDateUtc), (now) => Effect.zipRight(
        prune(now),
        rows.insertNew(member(CoreKeys.webhookDeliveries, delivery), { delivery, received_at: now.toISOString() }, now).pipe(
          Effect.map(Option.isSome)
        )
      )).pipe(Effect.withSpan("WebhookDeliveries.claim"))

    /** Forgets one delivery (its request changed nothing, so the sender may deliver it again). */
    const release = (delivery: string) =>
      rows.remove(member(CoreKeys.webhookDeliveries, delivery)).pipe(Effect.withSpan("WebhookDeliveries.release"))

    return { claim, release } as const
  })
}) {}
