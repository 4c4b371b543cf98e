import { Schema } from "effect"

// The plan as it is written and read (docs/plan-format.md): the wire schema of `reconcile --dry-run
// --json` and `--plan <file>`, and what can be read from a plan without planning. The planner is
// domain/Plan.ts; the fingerprint of a plan's basis is reconcile/Fingerprint.ts.

// ---- capabilities ------------------------------------------------------------------------------

/** What an extension version brings to the panel, as lists of stable strings. */
export interface Capabilities {
  readonly permissions: ReadonlyArray<string>
  /** `<group> <route file>` */
  readonly routes: ReadonlyArray<string>
  readonly slots: ReadonlyArray<string>
  readonly migrations: ReadonlyArray<string>
  /** `<task id> (<cron>)` */
  readonly schedules: ReadonlyArray<string>
  /** `<key>: <type>` */
  readonly settings: ReadonlyArray<string>
}

export const capabilityKinds = ["permissions", "routes", "slots", "migrations", "schedules", "settings"] as const

export const CapabilityDiff = Schema.Struct(
  Object.fromEntries(capabilityKinds.map((kind) => [kind, Schema.Struct({ added: Schema.Array(Schema.String), removed: Schema.Array(Schema.String) })])) as {
    readonly [K in (typeof capabilityKinds)[number]]: Schema.Struct<{ added: Schema.Array$<typeof Schema.String>; removed: Schema.Array$<typeof Schema.String> }>
  }
)
export type CapabilityDiff = typeof CapabilityDiff.Type

// ---- the plan ------------------------------------------------------------------------------------

export const ActionType = Schema.Literal("install", "update", "enable", "disable", "configure", "repair", "remove")
export type ActionType = typeof ActionType.Type

/** Where an install, update or repair takes its files from (absolute paths; registry by id and version). */
export const PlanSource = Schema.Union(
  Schema.Struct({ type: Schema.Literal("path"), path: Schema.String }),
  Schema.Struct({ type: Schema.Literal("archive"), path: Schema.String, sha256: Schema.NullOr(Schema.String) }),
  Schema.Struct({
    type: Schema.Literal("registry"),
    id: Schema.String,
    version: Schema.String,
    /**
     * The sha256 of the archive the plan downloaded and verified, kept in the artifact store: the apply
     * installs these bytes (docs/operations.md "Artifacts"). Absent when the plan did not download it.
     */
    sha256: Schema.optional(Schema.String),
    /** Where those bytes came from (recorded as the installed source). */
    url: Schema.optional(Schema.String),
    /** The configured registry it resolves in (docs/registry.md "Several registries"). */
    registry: Schema.optional(Schema.String)
  })
)
export type PlanSource = typeof PlanSource.Type

/** One changed setting; `to` is the template (`${VAR}` kept) so plans never hold secrets. */
export const SettingChange = Schema.Struct({
  key: Schema.String,
  from: Schema.Unknown,
  to: Schema.Unknown,
  sensitive: Schema.Boolean
})
export type SettingChange = typeof SettingChange.Type

export const PlanAction = Schema.Struct({
  type: ActionType,
  id: Schema.String,
  from: Schema.optional(Schema.NullOr(Schema.String)),
  to: Schema.optional(Schema.NullOr(Schema.String)),
  reason: Schema.String,
  capabilities: CapabilityDiff,
  source: Schema.optional(PlanSource),
  /** install: whether it is installed enabled. */
  enabled: Schema.optional(Schema.Boolean),
  settings: Schema.optional(Schema.Array(SettingChange)),
  /**
   * The extensions changed by this plan that this action's extension depends on once it is applied, directly
   * or through others: the apply runs their steps and health gates before this one (docs/plan-format.md).
   * Absent when there are none.
   */
  depends_on: Schema.optional(Schema.Array(Schema.String)),
  /**
   * The step passes through a state the lifecycle refuses without `force` (an update that is not newer, a
   * dependent briefly out of range, a dependency withdrawn before its dependent changes), which the end state
   * resolves. Absent: the step runs without force (docs/plan-format.md).
   */
  force: Schema.optional(Schema.Literal(true))
})
export type PlanAction = typeof PlanAction.Type

export const PlanSummary = Schema.Struct(
  Object.fromEntries(ActionType.literals.map((type) => [type, Schema.Number])) as { readonly [K in ActionType]: typeof Schema.Number }
)
export type PlanSummary = typeof PlanSummary.Type

/** What the plan was made against, per item, so a stale plan can say what changed. */
export const PlanBasis = Schema.Record({ key: Schema.String, value: Schema.String })
export type PlanBasis = typeof PlanBasis.Type

export const Plan = Schema.Struct({
  format: Schema.Literal(1),
  id: Schema.String,
  created_at: Schema.String,
  fingerprint: Schema.String,
  actions: Schema.Array(PlanAction),
  summary: PlanSummary,
  warnings: Schema.Array(Schema.String),
  /** The ids the desired state marks `protect: true`, remembered when the plan is applied in full. */
  protected: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  basis: PlanBasis
})
export type Plan = typeof Plan.Type

/**
 * How an apply ended, as `reconcile --json` and `POST /admin/host/reconcile` write it beside the plan
 * (docs/plan-format.md): the actions applied, the one that stopped the run with its failure's message,
 * and those not reached.
 */
export const ApplyReport = Schema.Struct({
  applied: Schema.Array(PlanAction),
  failed: Schema.NullOr(Schema.Struct({ action: PlanAction, error: Schema.String })),
  not_applied: Schema.Array(PlanAction)
})
export type ApplyReport = typeof ApplyReport.Type

export const summarize = (actions: ReadonlyArray<PlanAction>): PlanSummary =>
  Object.fromEntries(ActionType.literals.map((type) => [type, actions.filter((action) => action.type === type).length])) as unknown as PlanSummary

// ---- staleness -------------------------------------------------------------------------------

/** What changed between the basis a plan was made against and the current one, one line each. */
export const basisChanges = (planned: PlanBasis, current: PlanBasis): ReadonlyArray<string> => {
  const keys = [...new Set([...Object.keys(planned), ...Object.keys(current)])].sort()
  return keys.flatMap((key) => {
    const before = planned[key]
    const after = current[key]
    if (before === after) return []
    if (before === undefined) return [`${key}: now ${after}`]
    if (after === undefined) return [`${key}: was ${before}, now gone`]
    return [`${key}: was ${before}, now ${after}`]
  })
}
