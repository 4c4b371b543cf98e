import { Effect } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import type { Actor } from "../domain/Installed.js"
import { applyReport, Reconciler } from "../reconcile/Reconciler.js"
import { swapRuntime } from "./Operations.js"

// `POST /admin/host/api/reconcile` and the CI webhook (docs/gitops.md): plan the desired-state file of
// config/host.yaml and, unless it is a dry run, apply it and swap the runtime.

export interface ReconcileRequest {
  readonly dryRun: boolean
  readonly prune: boolean
  readonly allowDestroy: boolean
  readonly env: Readonly<Record<string, string | undefined>>
  /** A signed webhook delivery: the activity names it as its actor, with the delivery id in the context. */
  readonly delivery?: string | undefined
}

/** Activity of a signed webhook names it as an API caller; the context adds the delivery id. */
export const webhookActor = { type: "api", user: "webhook" } satisfies Actor

export const reconcileDesiredState = (request: ReconcileRequest) =>
  Effect.gen(function*() {
    const { paths } = yield* HostConfig
    const reconciler = yield* Reconciler
    const planRequest = { file: paths.desiredState, prune: request.prune, allowDestroy: request.allowDestroy, env: request.env }
    if (request.dryRun) return { _tag: "Planned", plan: yield* reconciler.plan(planRequest) } as const
    const { plan, result } = yield* reconciler.reconcile(planRequest, {
      env: request.env,
      ...(request.delivery !== undefined ? { actor: webhookActor, context: { delivery: request.delivery } } : {})
    })
    yield* swapRuntime
    return {
      _tag: "Applied",
      plan,
      apply: applyReport(result),
      complete: result.failed === null
    } as const
  })
