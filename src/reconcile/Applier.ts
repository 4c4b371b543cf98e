import { Effect, Either, Option } from "effect"
import { ArtifactStore, type ArtifactStoreService } from "../archive/ArtifactStore.js"
import type { Actor } from "../domain/Installed.js"
import { configuredValues } from "../domain/Plan.js"
import type { ApplyReport, Plan, PlanAction, PlanSource } from "../domain/PlanFormat.js"
import { Lifecycle, type OperationOptions, type OperationResult } from "../lifecycle/Lifecycle.js"
import { SourceSpec } from "../lifecycle/Source.js"
import { CoreKeys, CoreRows } from "../store/CoreRows.js"
import type { StoreError } from "../store/StoreError.js"
import { type ActionFailure, type ApplyFailure, type HealthGateFailed, SettingsUnavailable } from "./Errors.js"
import { type Gate, HealthGate } from "./HealthGate.js"
import { SourceUnavailable } from "./Inputs.js"
import { rememberSensitive } from "./SensitiveKeys.js"

// The changing half of a reconcile (docs/architecture.md "One reconcile", step 4): each action of a plan
// as one all-or-nothing lifecycle operation, in order, with the health gate of each extension's install or
// update before anything that depends on it; the first failure stops the run, and the result says what was
// and was not applied.
// The caller holds the operation lock for the whole run.

/** The action that stopped an apply, and why (the failure keeps its type; its message is what is shown). */
export interface ApplyFailed {
  readonly action: PlanAction
  readonly error: ApplyFailure
}

export interface ApplyResult {
  readonly applied: ReadonlyArray<PlanAction>
  readonly failed: ApplyFailed | null
  readonly notApplied: ReadonlyArray<PlanAction>
}

export interface ApplyOptions extends Pick<OperationOptions, "lockTimeout"> {
  readonly env: Readonly<Record<string, string | undefined>>
  /** Called with the plan before its first action runs (to show it before the work starts). */
  readonly onPlan?: (plan: Plan) => Effect.Effect<void>
  /**
   * Who the activity rows name (default `{type: "reconcile"}`) and what else their context carries
   * besides the plan id (a signed webhook: its delivery id, docs/gitops.md).
   */
  readonly actor?: Actor
  readonly context?: Readonly<Record<string, unknown>>
  /**
   * Run the critical health checks an install or update brings before going on (default true;
   * `--no-health-gates` turns it off). See docs/operations.md#health-gates.
   */
  readonly healthGates?: boolean
}

export const reconcileActor: Actor = { type: "reconcile" }

/** An apply result as it is written beside the plan (`--json`, the admin API): failures by their message. */
export const applyReport = (result: ApplyResult): ApplyReport => ({
  applied: result.applied,
  failed: result.failed === null ? null : { action: result.failed.action, error: result.failed.error.message },
  not_applied: result.notApplied
})

/** What one action runs with: who, the activity context (with the plan id), the environment of `${VAR}`s. */
interface ActionOptions {
  readonly actor: Actor
  readonly context: Readonly<Record<string, unknown>>
  readonly env: ApplyOptions["env"]
}

const isGated = (action: PlanAction) => action.type === "install" || action.type === "update" || action.type === "repair"

/**
 * A run stopped by the gate of `gate.action`: its step and the steps of that extension after it were taken
 * back, so they are not applied, nor is anything from `next` on; the other extensions' steps stay applied.
 */
const stoppedByGate = (
  order: ReadonlyArray<PlanAction>,
  next: number,
  applied: ReadonlyArray<PlanAction>,
  gate: Gate,
  error: HealthGateFailed
): ApplyResult => {
  const position = applied.indexOf(gate.action)
  const takenBack = (action: PlanAction, at: number) => at >= position && action.id === gate.action.id
  return {
    applied: applied.filter((action, at) => !takenBack(action, at)),
    failed: { action: gate.action, error },
    notApplied: [...applied.filter((action, at) => at > position && takenBack(action, at)), ...order.slice(next)]
  }
}

/**
 * The order the steps run in, from the plan's dependency relation rather than its order alone: a step runs
 * after the earlier steps of its own extension and after every step of the extensions it depends on (its
 * `depends_on`); among steps free to run, the plan's order decides. A plan from the planner is already in
 * such an order and runs as written; a saved plan edited by hand still cannot run a dependent before its
 * dependency is done and gated. A circle (only a hand-made plan can hold one) falls back to the plan's order.
 */
export const executionOrder = (actions: ReadonlyArray<PlanAction>): ReadonlyArray<PlanAction> => {
  const stepsOf = new Map<string, Array<number>>()
  actions.forEach((action, index) => stepsOf.set(action.id, [...(stepsOf.get(action.id) ?? []), index]))
  const after = actions.map((action, index) => [
    ...(stepsOf.get(action.id) ?? []).filter((other) => other < index),
    ...(action.depends_on ?? []).flatMap((id) => id === action.id ? [] : stepsOf.get(id) ?? [])
  ])
  const done = new Set<number>()
  const order: Array<PlanAction> = []
  while (order.length < actions.length) {
    const free = actions.findIndex((_, index) => !done.has(index) && after[index]!.every((other) => done.has(other)))
    const next = free >= 0 ? free : actions.findIndex((_, index) => !done.has(index))
    done.add(next)
    order.push(actions[next]!)
  }
  return order
}

/** The lifecycle source of an install, update or repair. */
const sourceSpec = (
  source: PlanSource | undefined,
  id: string,
  artifacts: ArtifactStoreService
): Effect.Effect<SourceSpec, SourceUnavailable> => {
  switch (source?.type) {
    case "path":
      return Effect.succeed(SourceSpec.Directory({ path: source.path }))
    case "archive": {
      // The bytes the plan read, kept in the artifact store; the file itself only if the store lost them.
      const sha256 = source.sha256
      return Effect.map(
        sha256 === null ? Effect.succeed(false) : Effect.orElseSucceed(artifacts.has(sha256), () => false),
        (kept) =>
          kept && sha256 !== null
            ? SourceSpec.Artifact({ sha256, origin: { type: "archive", ref: source.path }, expected: undefined })
            : SourceSpec.Archive({ path: source.path })
      )
    }
    case "registry":
      // The bytes the plan verified, from the artifact store: never a second download that could differ.
      return Effect.succeed(
        source.sha256 === undefined
          ? SourceSpec.Registry({ id: source.id, range: source.version, registry: source.registry })
          : SourceSpec.Artifact({
            sha256: source.sha256,
            origin: { type: "registry", ref: source.url ?? `${source.id}@${source.version}`, registry: source.registry },
            expected: { id: source.id, version: source.version }
          })
      )
    default:
      return Effect.fail(new SourceUnavailable({ id, detail: "the plan names no source to install from" }))
  }
}

/** The services an action runs through. */
interface Steps {
  readonly lifecycle: Lifecycle
  readonly artifacts: ArtifactStoreService
  readonly coreRows: CoreRows
}

/** A configure action: its `${VAR}`s filled in, its sensitive keys remembered around the write. */
const configure = ({ coreRows, lifecycle }: Steps, action: PlanAction, { actor, context, env }: ActionOptions) =>
  Either.match(configuredValues(action, env), {
    onLeft: (detail) => Effect.fail(new SettingsUnavailable({ extensionId: action.id, detail })),
    onRight: (values) =>
      // Marked before the write and unmarked after it: a crash in between over-hides, never leaks.
      Effect.zipRight(
        rememberSensitive(action, "mark"),
        Effect.zipLeft(lifecycle.configure(action.id, values, { actor, context }), rememberSensitive(action, "settle"))
      ).pipe(Effect.provideService(CoreRows, coreRows))
  })

/** One action as its lifecycle operation. */
const runAction = (steps: Steps, action: PlanAction, options: ActionOptions): Effect.Effect<OperationResult, ActionFailure> => {
  const { artifacts, lifecycle } = steps
  const { actor, context } = options
  // Force only where the plan asks for it: a step that passes through a state the lifecycle refuses and the
  // end state resolves (an update that is not newer, a dependent briefly out of range; docs/plan-format.md).
  const withForce = { actor, context, force: action.force === true }
  switch (action.type) {
    case "install":
      return Effect.flatMap(sourceSpec(action.source, action.id, artifacts), (spec) =>
        lifecycle.add(spec, { actor, context, expectedId: action.id, disabled: action.enabled === false }))
    case "update":
    case "repair":
      return Effect.flatMap(sourceSpec(action.source, action.id, artifacts), (spec) =>
        lifecycle.update(action.id, spec, { ...withForce, context: { ...context, reason: action.type } }))
    case "enable":
      return lifecycle.enable(action.id, { actor, context })
    case "disable":
      return lifecycle.disable(action.id, withForce)
    case "configure":
      return configure(steps, action, options)
    case "remove":
      return lifecycle.remove(action.id, withForce)
  }
}

/** The index of each extension's last step in `order`: its gate runs once that step is done. */
const lastStepOf = (order: ReadonlyArray<PlanAction>): ReadonlyMap<string, number> => new Map(order.map((action, index) => [action.id, index]))

export class Applier extends Effect.Service<Applier>()("host/reconcile/Applier", {
  effect: Effect.gen(function*() {
    const lifecycle = yield* Lifecycle
    const artifacts = yield* ArtifactStore
    const healthGate = yield* HealthGate
    const coreRows = yield* CoreRows
    const steps: Steps = { lifecycle, artifacts, coreRows }

    /**
     * Runs the actions in their execution order (the plan's, unless its dependency relation says
     * otherwise); stops at the first failure and reports what was and was not applied. A gated step's
     * health gate runs once its extension's last step is done, so before any step that depends on it: the
     * relation, not the adjacency of the actions, decides (docs/plan-format.md). Each step is a function of
     * what came before (the actions applied, the gates pending): no state is kept between steps but what is
     * passed on.
     */
    const execute = (thePlan: Plan, { actor = reconcileActor, context: extra, env, healthGates = true }: ApplyOptions) => {
      const context = { ...extra, plan: thePlan.id }
      const order = executionOrder(thePlan.actions)
      const lastStep = lastStepOf(order)
      type Reached = { readonly applied: ReadonlyArray<PlanAction>; readonly pending: ReadonlyArray<Gate> }
      /** Runs the pending gates `due` picks, in order; the first failing one stops the run before `next`. */
      const runGates = (
        next: number,
        { applied, pending }: Reached,
        due: (gate: Gate) => boolean
      ): Effect.Effect<Either.Either<Reached, ApplyResult>, StoreError> =>
        Effect.gen(function*() {
          const left: Array<Gate> = []
          for (const gate of pending) {
            if (!due(gate)) {
              left.push(gate)
              continue
            }
            const failed = yield* healthGate.run(gate, context, actor).pipe(Effect.ensuring(healthGate.discard(gate.snapshot)))
            if (Option.isSome(failed)) {
              // The gates that will not run now keep no tree aside.
              const unrun = [...left, ...pending.slice(pending.indexOf(gate) + 1)]
              yield* Effect.forEach(unrun, (other) => healthGate.discard(other.snapshot))
              return Either.left<ApplyResult>(stoppedByGate(order, next, applied, gate, failed.value))
            }
          }
          return Either.right<Reached>({ applied, pending: left })
        })
      const step = (index: number, reached: Reached): Effect.Effect<ApplyResult, StoreError> => {
        const action = order[index]
        if (action === undefined) {
          return Effect.map(runGates(index, reached, () => true), Either.match({
            onLeft: (stopped) => stopped,
            onRight: ({ applied }): ApplyResult => ({ applied, failed: null, notApplied: [] })
          }))
        }
        return Effect.gen(function*() {
          const gated = healthGates && isGated(action)
          // A second gated step of one extension (a hand-made plan) runs after the first one's gate.
          const before = yield* runGates(index, reached, (gate) => gated && gate.action.id === action.id)
          if (Either.isLeft(before)) return before.left
          const { applied, pending } = before.right
          const snapshot = gated && action.type !== "install" ? yield* healthGate.snapshot(action.id) : Option.none()
          const outcome = yield* Effect.either(runAction(steps, action, { actor, context, env }))
          if (Either.isLeft(outcome)) {
            yield* Effect.forEach([snapshot, ...pending.map((gate) => gate.snapshot)], (kept) => healthGate.discard(kept))
            return { applied, failed: { action, error: outcome.left }, notApplied: order.slice(index + 1) } satisfies ApplyResult
          }
          const done: Reached = {
            applied: [...applied, action],
            pending: gated
              ? [...pending, { action, snapshot, previous: outcome.right.fromVersion, migrations: outcome.right.migrations }]
              : pending
          }
          // Its extension's own steps (install, configure, enable) are all done: its gate runs now, before
          // anything that depends on it (the execution order puts those later).
          if (lastStep.get(action.id) !== index) return yield* step(index + 1, done)
          const after = yield* runGates(index + 1, done, (gate) => gate.action.id === action.id)
          return Either.isLeft(after) ? after.left : yield* step(index + 1, after.right)
        })
      }
      return Effect.zipRight(
        healthGates ? healthGate.dropSnapshots : Effect.void,
        Effect.suspend(() => step(0, { applied: [], pending: [] }))
      )
    }

    /**
     * Applies a plan (the caller holds the lock); a plan applied in full has its protected ids
     * remembered, so a later prune or removal of one needs `--allow-destroy`.
     */
    const apply = (thePlan: Plan, options: ApplyOptions): Effect.Effect<ApplyResult, StoreError> =>
      Effect.tap(execute(thePlan, options), (result) =>
        result.failed === null ? coreRows.put(CoreKeys.protectedIds, thePlan.protected) : Effect.void)

    return { apply } as const
  }),
  dependencies: [HealthGate.Default]
}) {}
