import { Schema } from "effect"

// Failures of lifecycle operations. Every one leaves the panel as it was, and says so.

export const OperationName = Schema.Literal("add", "update", "remove", "enable", "disable", "configure")
export type OperationName = typeof OperationName.Type

/** An operation stopped at `step`; `reason` is the tag of the underlying failure. */
export class OperationFailed extends Schema.TaggedError<OperationFailed>()("OperationFailed", {
  operation: OperationName,
  extensionId: Schema.String,
  step: Schema.String,
  reason: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `${this.operation} ${this.extensionId} failed while ${this.step}: ${this.detail}; nothing was changed`
  }
}

/** A precondition does not hold (already installed, unmet requirement, dependency, dependents …). */
export class OperationRefused extends Schema.TaggedError<OperationRefused>()("OperationRefused", {
  operation: OperationName,
  extensionId: Schema.String,
  reason: Schema.Literal(
    "already-installed",
    "not-installed",
    "id-mismatch",
    "requirements",
    "dependencies",
    "dependents",
    "settings"
  ),
  detail: Schema.String,
  hint: Schema.optional(Schema.String),
  /** One entry per problem, when the refusal is about input (settings). */
  problems: Schema.optional(Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String })))
}) {
  override get message() {
    return `${this.operation} ${this.extensionId} refused: ${this.detail}${this.hint === undefined ? "" : `\nhint: ${this.hint}`}`
  }
}
