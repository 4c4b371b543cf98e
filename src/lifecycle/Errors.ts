import { Data } from "effect"

// Failures of lifecycle operations. Every one leaves the panel as it was, and says so.

export type OperationName = "add" | "update" | "remove" | "enable" | "disable" | "configure"

/** An operation stopped at `step`; `reason` is the tag of the underlying failure. */
export class OperationFailed extends Data.TaggedError("OperationFailed")<{
  readonly operation: OperationName
  readonly extensionId: string
  readonly step: string
  readonly reason: string
  readonly detail: string
}> {
  override get message() {
    return `${this.operation} ${this.extensionId} failed while ${this.step}: ${this.detail}; nothing was changed`
  }
}

/** A precondition does not hold (already installed, unmet requirement, dependency, dependents …). */
export class OperationRefused extends Data.TaggedError("OperationRefused")<{
  readonly operation: OperationName
  readonly extensionId: string
  readonly reason:
    | "already-installed"
    | "not-installed"
    | "not-newer"
    | "id-mismatch"
    | "requirements"
    | "dependencies"
    | "dependents"
    | "settings"
  readonly detail: string
  readonly hint?: string
  /** One entry per problem, when the refusal is about input (settings). */
  readonly problems?: ReadonlyArray<{ readonly path: string; readonly message: string }>
}> {
  override get message() {
    return `${this.operation} ${this.extensionId} refused: ${this.detail}${this.hint === undefined ? "" : `\nhint: ${this.hint}`}`
  }
}
