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
  process_started: Schema.optional(Schema.String)
})
export type OperationLock = typeof OperationLock.Type
