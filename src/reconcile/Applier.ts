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
// as one all-or-nothing lifecycle operation, in order, with the health gate after each extension's
// install or update; the first failure stops the run, and the result says what was and was not applied.
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

/** A run stopped by the gate of `action`: it and what came after it in the plan are not applied. */
const stoppedByGate = (
  thePlan: Plan,
  index: number,
  applied: ReadonlyArray<PlanAction>,
  action: PlanAction,
  error: HealthGateFailed
): ApplyResult => {
  const position = applied.indexOf(action)
  return {
    applied: applied.filter((_, at) => at < position),
    failed: { action, error },
    notApplied: [...applied.slice(position + 1), ...thePlan.actions.slice(index + 1)]
  }
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
  // The planner checked every dependency against the end state, so a step may pass through a state
  // where a dependent is briefly out of range (both sides of a major bump): `force` lets it.
  const forced = { actor, context, force: true }
  switch (action.type) {
    case "install":
      return Effect.flatMap(sourceSpec(action.source, action.id, artifacts), (spec) =>
        lifecycle.add(spec, { actor, context, expectedId: action.id, disabled: action.enabled === false }))
    case "update":
    case "repair":
      return Effect.flatMap(sourceSpec(action.source, action.id, artifacts), (spec) =>
        lifecycle.update(action.id, spec, { ...forced, context: { ...context, reason: action.type } }))
    case "enable":
      return lifecycle.enable(action.id, forced)
    case "disable":
      return lifecycle.disable(action.id, forced)
    case "configure":
      return configure(steps, action, options)
    case "remove":
      return lifecycle.remove(action.id, forced)
  }
}

export class Applier extends Effect.Service<Applier>()("host/reconcile/Applier", {
  effect: Effect.gen(function*() {
    const lifecycle = yield* Lifecycle
    const artifacts = yield* ArtifactStore
    const healthGate = yield* HealthGate
    const coreRows = yield* CoreRows
    const steps: Steps = { lifecycle, artifacts, coreRows }

    /**
     * Runs the actions in order; stops at the first failure and reports what was and was not applied.
     * Each step is a function of what came before (the actions applied, the gate still pending): no state
     * is kept between steps but what is passed on.
     */
    const execute = (thePlan: Plan, { actor = reconcileActor, context: extra, env, healthGates = true }: ApplyOptions) => {
      const context = { ...extra, plan: thePlan.id }
      const step = (index: number, applied: ReadonlyArray<PlanAction>, pending: Option.Option<Gate>): Effect.Effect<ApplyResult, StoreError> => {
        const action = thePlan.actions[index]
        if (action === undefined) return Effect.succeed({ applied, failed: null, notApplied: [] })
        return Effect.gen(function*() {
          const gated = healthGates && isGated(action)
          const snapshot = gated && action.type !== "install" ? yield* healthGate.snapshot(action.id) : Option.none()
          const outcome = yield* Effect.either(runAction(steps, action, { actor, context, env }))
          if (Either.isLeft(outcome)) {
            yield* healthGate.discard(snapshot)
            return { applied, failed: { action, error: outcome.left }, notApplied: thePlan.actions.slice(index + 1) } satisfies ApplyResult
          }
          const gate = gated
            ? Option.some<Gate>({ action, snapshot, previous: outcome.right.fromVersion, migrations: outcome.right.migrations })
            : pending
          const done = [...applied, action]
          // The gate runs once the extension's own steps (install, configure, enable) are done and before
          // anything after it (the plan puts dependencies first, so before its dependents).
          const next = thePlan.actions[index + 1]
          if (Option.isNone(gate) || (next !== undefined && next.id === gate.value.action.id)) return yield* step(index + 1, done, gate)
          const failed = yield* healthGate.run(gate.value, context, actor).pipe(Effect.ensuring(healthGate.discard(gate.value.snapshot)))
          if (Option.isSome(failed)) return stoppedByGate(thePlan, index, done, gate.value.action, failed.value)
          return yield* step(index + 1, done, Option.none())
        })
      }
      return Effect.zipRight(healthGates ? healthGate.dropSnapshots : Effect.void, Effect.suspend(() => step(0, [], Option.none())))
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
