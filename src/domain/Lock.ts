import { Schema } from "effect"

// The operation lock (DESIGN.md §10): one row owned by `host/core` in host_settings.

export const lockSettingKey = "lock"

export const OperationLock = Schema.Struct({
  id: Schema.String,
  holder: Schema.String,
  pid: Schema.Number,
  hostname: Schema.String,
  operation: Schema.String,
  acquired_at: Schema.String
})
export type OperationLock = typeof OperationLock.Type
