import { Schema } from "effect"
import type { LifecycleFailure } from "../lifecycle/Errors.js"
import type { StoreError } from "../store/StoreError.js"
import type { SourceUnavailable } from "./Inputs.js"

// Failures of reconcile/ (docs/architecture.md "One reconcile"). The ones a run fails with as a whole
// (the desired state cannot be planned, a saved plan is stale or not a plan) and the ones an apply
// reports per action are Schema classes: they cross HTTP and the CLI's `--json`, so each has one
// declared shape. Every message is the sentence the CLI and the API have always printed.

const Problem = Schema.Struct({ path: Schema.String, message: Schema.String })

/** The desired state cannot be turned into a plan (a source cannot be read, a rule of the planner fails). */
export class PlanInvalid extends Schema.TaggedError<PlanInvalid>()("PlanInvalid", {
  file: Schema.String,
  problems: Schema.Array(Problem)
}) {
  override get message() {
    return `the desired state in ${this.file} cannot be planned: ${this.problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`
  }
}

/** A saved plan was made against a panel (or sources) that changed since. */
export class StalePlan extends Schema.TaggedError<StalePlan>()("StalePlan", {
  planId: Schema.String,
  changes: Schema.Array(Schema.String)
}) {
  override get message() {
    return `plan ${this.planId} is stale, the panel changed since it was made: ${this.changes.join("; ")}; make a new plan`
  }
}

/** A file given as a plan cannot be read, or is not a plan. */
export class PlanFileInvalid extends Schema.TaggedError<PlanFileInvalid>()("PlanFileInvalid", {
  file: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `${this.file} is not a plan file: ${this.detail}`
  }
}

/** A configure action's `${VAR}` setting has no value in the environment of the apply. */
export class SettingsUnavailable extends Schema.TaggedError<SettingsUnavailable>()("SettingsUnavailable", {
  extensionId: Schema.String,
  /** Which setting and why, as `domain/Plan.ts configuredValues` says it. */
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

/**
 * A critical health check an install or update brought failed (docs/operations.md#health-gates), and the
 * step was taken back — or taking it back failed too; `outcome` says which.
 */
export class HealthGateFailed extends Schema.TaggedError<HealthGateFailed>()("HealthGateFailed", {
  extensionId: Schema.String,
  /** One line per failing critical check (or why the checks could not run). */
  failures: Schema.Array(Schema.String),
  /** `it was removed`, `it was rolled back to <version>` or `rolling it back failed too: <why>`. */
  outcome: Schema.String
}) {
  override get message() {
    return `health gate failed: ${this.failures.join("; ")}; ${this.outcome}`
  }
}

/** How a lifecycle operation fails: it stopped at a step, it was refused, or the lock was held (lifecycle/Errors.ts). */
export type { LifecycleFailure }

/**
 * How one action of a plan fails: its lifecycle operation failed, the plan's source for it cannot be
 * used, its settings cannot be filled in, or remembering which settings are sensitive failed.
 */
export type ActionFailure = LifecycleFailure | SourceUnavailable | SettingsUnavailable | StoreError

/** Why an apply stopped: an action failed, or the health gate after an extension's actions did. */
export type ApplyFailure = ActionFailure | HealthGateFailed
