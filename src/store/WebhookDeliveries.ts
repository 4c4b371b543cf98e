import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import { coreExtensionId } from "../domain/Installed.js"
import { isUniqueViolation, storeError } from "./StoreError.js"

// Signed webhook deliveries answered in the last 24 hours (docs/gitops.md): one `host/core` row per
// delivery in host_settings (`webhook_delivery:<id>`), so a repeat is refused across restarts and
// replicas. Claiming is an INSERT that the UNIQUE(extension_id, key) constraint lets only one request win,
// the same way the operation lock is taken.

export const deliveryKeyPrefix = "webhook_delivery:"

/** How long a delivery id is remembered. */
export const deliveryWindow = Duration.hours(24)

export class WebhookDeliveries extends Effect.Service<WebhookDeliveries>()("host/WebhookDeliveries", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const key = sql("key")

    /** Forgets the deliveries older than the window. */
    const prune = (now: Date) => {
      const cutoff = new Date(now.getTime() - Duration.toMillis(deliveryWindow)).toISOString()
      return sql`DELETE FROM host_settings WHERE extension_id = ${coreExtensionId} AND ${key} LIKE ${`${deliveryKeyPrefix}%`}
                 AND created_at < ${cutoff}`.pipe(Effect.asVoid, Effect.mapError(storeError("forgetting old webhook deliveries")))
    }

    /**
     * Records `delivery` as answered; false when it already was within the window (a repeat). Entries
     * older than the window are pruned first, so an old id may come again.
     */
    const claim = (delivery: string, now: Date = new Date()) =>
      Effect.zipRight(
        prune(now),
        sql`INSERT INTO host_settings ${
          sql.insert({
            extension_id: coreExtensionId,
            key: `${deliveryKeyPrefix}${delivery}`,
            value: JSON.stringify({ delivery, received_at: now.toISOString() }),
            created_at: now.toISOString(),
            updated_at: now.toISOString()
          })
        }`.pipe(
          Effect.as(true),
          Effect.catchIf(isUniqueViolation, () => Effect.succeed(false)),
          Effect.mapError(storeError(`recording webhook delivery ${delivery}`))
        )
      ).pipe(Effect.withSpan("WebhookDeliveries.claim"))

    /** Forgets one delivery (its request changed nothing, so the sender may deliver it again). */
    const release = (delivery: string) =>
      sql`DELETE FROM host_settings WHERE extension_id = ${coreExtensionId} AND ${key} = ${`${deliveryKeyPrefix}${delivery}`}`.pipe(
        Effect.asVoid,
        Effect.mapError(storeError(`forgetting webhook delivery ${delivery}`)),
        Effect.withSpan("WebhookDeliveries.release")
      )

    return { claim, release } as const
  })
}) {}
