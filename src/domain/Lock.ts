import { Schema } from "effect"

// The operation lock (docs/architecture.md "Store"): one row owned by `host/core` in host_settings
// (its key is declared with the other framework rows in store/CoreRows.ts).

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

/** How long a lock lives without renewal, by default (config `lock_lease_seconds`). */
export const leaseMillis = 30_000

/** How often the holder renews a lease of `lease` ms: every sixth of it (5 s for the default 30 s). */
export const leaseRenewMillis = (lease: number = leaseMillis): number => Math.max(500, Math.floor(lease / 6))

/** Whether the lock's lease ended before `now` (epoch ms; a lock without a lease never lapses by time). */
export const leaseLapsed = (lock: OperationLock, now: number): boolean =>
  lock.lease_expires_at !== undefined && Date.parse(lock.lease_expires_at) < now
