import { DateTime, Effect, Either } from "effect"
import { ArtifactStore } from "../archive/ArtifactStore.js"
import type { DesiredState } from "../domain/DesiredState.js"
import { type ActualExtension, type Candidate, configuredValues, planActions, type PlanOptions } from "../domain/Plan.js"
import { type Plan, type PlanAction, summarize } from "../domain/PlanFormat.js"
import type { Problem } from "../domain/Problems.js"
import type { RuntimeVersions } from "../domain/Rules.js"
import { uuid } from "../system/Ids.js"
import { type PlanningContext, readCandidates, withTreeCache } from "./Candidates.js"
import { PlanInvalid } from "./Errors.js"
import { fingerprintOf, planBasis } from "./Fingerprint.js"
import {
  readActual,
  readArchiveCandidate,
  readDesiredFile,
  readPathCandidate,
  readRegistryCandidate,
  readStoredCandidate,
  type SourceUnavailable
} from "./Inputs.js"
import { preflightReport } from "./Preflight.js"

// The read-only half of a reconcile (docs/architecture.md "One reconcile"): desired state × what is
// installed × what each source provides → a plan with its fingerprint; and the basis of a saved plan
// recomputed from the panel now, so the applier can refuse a stale one. Nothing here takes the lock.

/** What one plan is asked for. */
export interface PlanRequest {
  readonly file: string
  /** `--prune`: prune even if the file says `prune: false`. */
  readonly prune: boolean
  readonly allowDestroy: boolean
  readonly env: Readonly<Record<string, string | undefined>>
}

/**
 * What a plan's source is stamped with in its basis. A registry download kept in the artifact store is
 * stamped with its sha256: a saved plan applies only those bytes (a registry that now serves others
 * makes the plan stale, docs/plan-format.md).
 */
const stampOf = (candidate: Candidate) =>
  candidate.source.type === "registry" && candidate.source.sha256 !== undefined
    ? `archive sha256 ${candidate.source.sha256}`
    : candidate.digest ?? `version ${candidate.version}`

/** A candidate read whole by the light reading (an archive, or a registry download): no second reading. */
const readInFull = (candidate: Candidate) =>
  candidate.source.type === "archive" || (candidate.source.type === "registry" && candidate.source.sha256 !== undefined)

const protectedIds = (state: DesiredState): ReadonlyArray<string> =>
  state.extensions.filter((entry) => entry._tag === "Present" && entry.protect).map((entry) => entry.id)

/** The planner's answer, or the desired state's problems as PlanInvalid. */
const planOrFail = (
  file: string,
  state: DesiredState,
  actual: ReadonlyMap<string, ActualExtension>,
  candidates: ReadonlyMap<string, Candidate>,
  options: PlanOptions
) =>
  Effect.suspend(() =>
    Either.match(planActions(state, actual, candidates, options), {
      onLeft: (problems) => Effect.fail(new PlanInvalid({ file, problems })),
      onRight: Effect.succeed
    })
  ).pipe(Effect.withSpan("Reconcile.planActions"))

const candidatesOrFail = (file: string, read: { readonly problems: ReadonlyArray<Problem> }) =>
  read.problems.length > 0 ? Effect.fail(new PlanInvalid({ file, problems: read.problems })) : Effect.void

/**
 * Plans in two passes: a light reading of everything tells what is in sync, then a full reading of the
 * extensions that have actions gives their capability diffs (most of a large panel is in sync).
 */
const planInTwoPasses = (
  file: string,
  state: DesiredState,
  actual: ReadonlyMap<string, ActualExtension>,
  options: PlanOptions
) =>
  Effect.gen(function*() {
    const light = yield* readCandidates(state, actual, "light")
    yield* candidatesOrFail(file, light)
    const first = yield* planOrFail(file, state, actual, light.candidates, options)
    const changing = new Set(first.actions.map((action) => action.id))
    // Archives and registry downloads were read whole already: one download per plan.
    const toRead = new Set([...changing].filter((id) => {
      const candidate = light.candidates.get(id)
      return candidate === undefined || !readInFull(candidate)
    }))
    const full = yield* readCandidates(state, actual, "full", toRead)
    yield* candidatesOrFail(file, full)
    const candidates = new Map([...light.candidates, ...full.candidates])
    const fullActual = new Map([...actual, ...(yield* readActual("full", changing))])
    const planned = yield* planOrFail(file, state, fullActual, candidates, options)
    return { ...planned, candidates }
  })

/** The values each configure action writes, where the environment has them all. */
const settingValuesOf = (
  actions: ReadonlyArray<PlanAction>,
  env: PlanRequest["env"],
  unavailable: (message: string) => unknown | undefined
) => {
  const values = new Map<string, unknown>()
  for (const action of actions) {
    if (action.type !== "configure") continue
    const outcome = configuredValues(action, env)
    const value = Either.isRight(outcome) ? outcome.right : unavailable(outcome.left)
    if (value !== undefined) values.set(action.id, value)
  }
  return values
}

/** The plan of `state` against `actual` (the light reading of what is installed). */
export const makePlan = (request: PlanRequest, file: string, state: DesiredState, actual: ReadonlyMap<string, ActualExtension>) =>
  Effect.gen(function*() {
    const options = { prune: request.prune || state.prune, allowDestroy: request.allowDestroy, env: request.env }
    const { actions, candidates, warnings } = yield* planInTwoPasses(file, state, actual, options)
    const sourceStamps = new Map(
      actions.filter((action) => action.source !== undefined).map((action) => [action.id, stampOf(candidates.get(action.id)!)])
    )
    // A configure whose `${VAR}` is missing fails when applied; its basis entry is left out of the plan.
    const basis = planBasis(actual, sourceStamps, settingValuesOf(actions, request.env, () => undefined))
    return {
      format: 1,
      id: `plan-${yield* uuid}`,
      created_at: DateTime.formatIso(yield* DateTime.now),
      fingerprint: fingerprintOf(basis),
      actions,
      summary: summarize(actions),
      warnings,
      protected: protectedIds(state),
      basis
    } satisfies Plan
  })

/** What an action's source provides now, for a saved plan's basis (read as the apply would read it). */
const currentCandidate = (action: PlanAction & { readonly source: NonNullable<PlanAction["source"]> }) =>
  Effect.gen(function*() {
    const source = action.source
    // A download the plan kept is read from the artifact store; only when the store lost it is the
    // registry asked again, and then other bytes make the plan stale.
    const stored = source.type === "registry" && source.sha256 !== undefined &&
      (yield* Effect.flatMap(ArtifactStore, (artifacts) => artifacts.has(source.sha256!)))
    const candidate: Effect.Effect<Candidate, SourceUnavailable, PlanningContext> = source.type === "path"
      ? readPathCandidate(action.id, source.path, "light")
      : source.type === "archive"
      ? readArchiveCandidate(action.id, source.path, undefined)
      : stored && source.sha256 !== undefined
      ? readStoredCandidate(action.id, source.sha256, source)
      : readRegistryCandidate(action.id, source.version, undefined, "full", source.registry)
    return yield* candidate
  })

/** The basis of a saved plan recomputed from the panel now. */
export const currentBasis = (thePlan: Plan, env: PlanRequest["env"]) =>
  Effect.gen(function*() {
    const actual = yield* readActual("light")
    const sourceStamps = new Map<string, string>()
    for (const action of thePlan.actions) {
      if (action.source === undefined) continue
      const stamp = yield* Effect.either(Effect.map(currentCandidate({ ...action, source: action.source }), stampOf))
      sourceStamps.set(action.id, Either.getOrElse(stamp, (error) => `unreadable (${error.message})`))
    }
    const settingValues = settingValuesOf(thePlan.actions, env, (message) => `unavailable (${message})`)
    return planBasis(actual, sourceStamps, settingValues)
  })

/**
 * Planning as a service: its methods read through the services the layer was built with, so callers
 * need none of them.
 */
export class Planner extends Effect.Service<Planner>()("host/reconcile/Planner", {
  effect: Effect.gen(function*() {
    const context = yield* Effect.context<PlanningContext>()

    /** Plans from the desired-state file without changing anything (and without the lock). */
    const plan = (request: PlanRequest) =>
      Effect.gen(function*() {
        const desired = yield* readDesiredFile(request.file)
        return yield* withTreeCache(Effect.flatMap(readActual("light"), (actual) => makePlan(request, desired.file, desired.state, actual)))
      }).pipe(Effect.provide(context))

    return {
      plan,
      currentBasis: (thePlan: Plan, env: PlanRequest["env"]) => withTreeCache(currentBasis(thePlan, env)).pipe(Effect.provide(context)),
      /** The upgrade preflight: each desired extension checked against other panel and framework versions. */
      preflight: (request: PlanRequest, versions: RuntimeVersions) =>
        withTreeCache(preflightReport(request, versions)).pipe(Effect.provide(context))
    } as const
  })
}) {}
