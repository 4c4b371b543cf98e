import { Schema } from "effect"

// health.checks declarations (manifest) and the normalisation of results reported by HasHealthChecks.

export const HealthSeverity = Schema.Literal("critical", "warning", "info")
export type HealthSeverity = typeof HealthSeverity.Type

export const HealthCheckDeclaration = Schema.Struct({
  id: Schema.NonEmptyString,
  label: Schema.NonEmptyString,
  description: Schema.optional(Schema.String),
  severity: Schema.optional(HealthSeverity)
})
export type HealthCheckDeclaration = typeof HealthCheckDeclaration.Type

export type HealthStatus = "ok" | "warning" | "error" | "unknown"

const synonyms: Record<string, HealthStatus> = {
  ok: "ok", pass: "ok", passed: "ok", passing: "ok", healthy: "ok", success: "ok", up: "ok", green: "ok",
  warning: "warning", warn: "warning", degraded: "warning", yellow: "warning",
  error: "error", fail: "error", failed: "error", failure: "error", critical: "error", down: "error",
  unhealthy: "error", red: "error",
  unknown: "unknown"
}

/** Maps a reported status (any case, common synonyms) to one of the four statuses; anything else is `unknown`. */
export const normalizeHealthStatus = (status: unknown): HealthStatus =>
  typeof status === "string" ? synonyms[status.trim().toLowerCase()] ?? "unknown" : "unknown"
