import { Schema } from "effect"

// The operation lock (docs/architecture.md "Store"): one row owned by `host/core` in host_settings.

export const lockSettingKey = "lock"

export const OperationLock = Schema.Struct({
  id: Schema.String,
  holder: Schema.String,
  pid: Schema.Number,
  hostname: Schema.String,
  operation: Schema.String,
  acquired_at: Schema.String,
  /**
   * When the holding process started (Linux: clock ticks after boot, from /proc). A pid is reused — a
   * container restarted keeps its hostname and its pid 1 — so a live pid with another start time is a
   * different process, and the lock's holder is gone.
   */
  process_started: Schema.optional(Schema.String),
  /**
   * When the holder's lease ends unless renewed (ISO-8601 UTC). The holder renews it every
   * `leaseRenewMillis`; a lease that lapsed means the holder is gone wherever it ran (docs/operations.md).
   * Locks written before leases existed have none.
   */
  lease_expires_at: Schema.optional(Schema.String)
})
export type OperationLock = typeof OperationLock.Type

/** How long a lock lives without renewal. */
export const leaseMillis = 30_000

/** How often the holder renews its lease. */
export const leaseRenewMillis = 5_000

/** Whether the lock's lease ended before `now` (a lock without a lease never lapses by time). */
export const leaseLapsed = (lock: OperationLock, now: number = Date.now()): boolean =>
  lock.lease_expires_at !== undefined && Date.parse(lock.lease_expires_at) < now
