import { Effect } from "effect"
import { basisChanges, type Plan } from "../domain/PlanFormat.js"
import type { RuntimeVersions } from "../domain/Rules.js"
import { Lifecycle } from "../lifecycle/Lifecycle.js"
import { Applier, type ApplyOptions, reconcileActor } from "./Applier.js"
import { StalePlan } from "./Errors.js"
import { fingerprintOf } from "./Fingerprint.js"
import { Planner, type PlanRequest } from "./Planner.js"

// desired state → plan → apply (docs/architecture.md "One reconcile"). The front doors' one service:
// planning is read-only (Planner), applying holds the operation lock for the whole run and drives each
// action as one all-or-nothing lifecycle operation (Applier, with its HealthGate); saved plans are
// PlanFile's. This module only puts them in order under the lock.

export type { ApplyFailed, ApplyOptions, ApplyResult } from "./Applier.js"
export { applyReport } from "./Applier.js"
export { HealthGateFailed, PlanFileInvalid, PlanInvalid, SettingsUnavailable, StalePlan } from "./Errors.js"
export type { ActionFailure, ApplyFailure, LifecycleFailure } from "./Errors.js"
export { healthGateTimeout } from "./HealthGate.js"
export { loadPlan, savePlan } from "./PlanFile.js"
export type { PlanRequest } from "./Planner.js"

export class Reconciler extends Effect.Service<Reconciler>()("host/Reconciler", {
  effect: Effect.gen(function*() {
    const lifecycle = yield* Lifecycle
    const planner = yield* Planner
    const applier = yield* Applier

    const underLock = <A, E, R>(operation: string, options: ApplyOptions, effect: Effect.Effect<A, E, R>) =>
      lifecycle.withLock(operation, { actor: options.actor ?? reconcileActor, lockTimeout: options.lockTimeout ?? 0 }, effect)

    const announce = (thePlan: Plan, options: ApplyOptions) => options.onPlan === undefined ? Effect.void : options.onPlan(thePlan)

    /** Plans and applies the desired-state file in one run under the lock. */
    const reconcile = (request: PlanRequest, options: ApplyOptions) =>
      underLock(
        "reconcile",
        options,
        Effect.gen(function*() {
          const thePlan = yield* planner.plan(request)
          yield* announce(thePlan, options)
          const result = yield* applier.apply(thePlan, options)
          return { plan: thePlan, result }
        })
      ).pipe(Effect.withSpan("Reconciler.reconcile"))

    /** Applies exactly a saved plan, refusing it if the panel or its sources changed since it was made. */
    const applyPlan = (thePlan: Plan, options: ApplyOptions) =>
      underLock(
        `reconcile ${thePlan.id}`,
        options,
        Effect.gen(function*() {
          const basis = yield* planner.currentBasis(thePlan, options.env)
          if (fingerprintOf(basis) !== thePlan.fingerprint) {
            const changes = basisChanges(thePlan.basis, basis)
            return yield* new StalePlan({ planId: thePlan.id, changes: changes.length > 0 ? changes : ["the fingerprint differs"] })
          }
          yield* announce(thePlan, options)
          return yield* applier.apply(thePlan, options)
        })
      ).pipe(Effect.withSpan("Reconciler.applyPlan"))

    return {
      /** Plans from the desired-state file without changing anything (and without the lock). */
      plan: (request: PlanRequest) => planner.plan(request).pipe(Effect.withSpan("Reconciler.plan")),
      reconcile,
      applyPlan,
      /** The upgrade preflight: each desired extension checked against other panel and framework versions. */
      preflight: (request: PlanRequest, versions: RuntimeVersions) =>
        planner.preflight(request, versions).pipe(Effect.withSpan("Reconciler.preflight"))
    } as const
  }),
  dependencies: [Planner.Default, Applier.Default]
}) {}
