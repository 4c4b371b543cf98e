import { Effect } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import type { Plan } from "../domain/PlanFormat.js"
import { type ApplyOptions, applyReport, Reconciler } from "../reconcile/Reconciler.js"
import { actorOf, contextOf, type FrontDoor, lockWaitSeconds } from "./FrontDoor.js"

// The one reconcile every front door runs (docs/architecture.md "One reconcile"): `host reconcile`,
// `POST /admin/host/api/reconcile` and the CI webhook (docs/gitops.md). The door decides nothing but
// itself: the actor, the activity context and the lock wait come from ./FrontDoor.ts. The server swaps
// its runtime after an apply (http/admin/Reconcile.ts); a CLI process has none to swap.

export interface ReconcileRequest {
  readonly door: FrontDoor
  /** The desired-state file (default: desired_state of config/host.yaml). */
  readonly file?: string | undefined
  readonly prune: boolean
  readonly allowDestroy: boolean
  readonly env: Readonly<Record<string, string | undefined>>
  /** Run the critical health checks an install or update brings (default true, docs/operations.md#health-gates). */
  readonly healthGates?: boolean | undefined
  /** Called with the plan before its first action runs. */
  readonly onPlan?: ((plan: Plan) => Effect.Effect<void>) | undefined
}

/** What the Reconciler applies with, for this door. */
const applyOptionsOf = (request: Omit<ReconcileRequest, "file" | "prune" | "allowDestroy">): ApplyOptions => ({
  env: request.env,
  actor: actorOf(request.door, "reconcile"),
  context: contextOf(request.door),
  lockTimeout: lockWaitSeconds(request.door),
  ...(request.healthGates === undefined ? {} : { healthGates: request.healthGates }),
  ...(request.onPlan === undefined ? {} : { onPlan: request.onPlan })
})

const planRequestOf = (request: ReconcileRequest) =>
  Effect.map(HostConfig, ({ paths }) => ({
    file: request.file ?? paths.desiredState,
    prune: request.prune,
    allowDestroy: request.allowDestroy,
    env: request.env
  }))

/** Plans the desired-state file and applies it under the lock, in one run. */
export const applyDesiredState = (request: ReconcileRequest) =>
  Effect.gen(function*() {
    const reconciler = yield* Reconciler
    return yield* reconciler.reconcile(yield* planRequestOf(request), applyOptionsOf(request))
  })

/** Applies exactly a saved plan (refused when stale). */
export const applySavedPlan = (plan: Plan, request: Omit<ReconcileRequest, "file" | "prune" | "allowDestroy">) =>
  Effect.flatMap(Reconciler, (reconciler) => reconciler.applyPlan(plan, applyOptionsOf(request)))

/** The plan only (a dry run): nothing changes and no lock is taken. */
export const planDesiredState = (request: ReconcileRequest) =>
  Effect.flatMap(Reconciler, (reconciler) => Effect.flatMap(planRequestOf(request), reconciler.plan))

/** The admin API's and the webhook's answer: the plan, or the plan applied with its report. */
export const reconcileDesiredState = (request: ReconcileRequest & { readonly dryRun: boolean }) =>
  Effect.gen(function*() {
    if (request.dryRun) return { _tag: "Planned", plan: yield* planDesiredState(request) } as const
    const { plan, result } = yield* applyDesiredState(request)
    return { _tag: "Applied", plan, result, apply: applyReport(result), complete: result.failed === null } as const
  })
