import { FileSystem, Path } from "@effect/platform"
import { Data, Effect, Either, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { HostConfig } from "../config/HostConfig.js"
import type { DesiredExtension, DesiredState } from "../domain/DesiredState.js"
import { type Actor, coreExtensionId } from "../domain/Installed.js"
import {
  type ActualExtension,
  basisChanges,
  type Candidate,
  configuredValues,
  fingerprintOf,
  Plan,
  type PlanAction,
  planActions,
  planBasis,
  type PlanSource,
  summarize
} from "../domain/Plan.js"
import { type Problem } from "../domain/Problems.js"
import { Lifecycle, type OperationOptions } from "../lifecycle/Lifecycle.js"
import { SourceSpec } from "../lifecycle/Source.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { SettingsRepo } from "../store/SettingsRepo.js"
import {
  decodeSensitiveKeys,
  protectedSettingKey,
  readActual,
  type Detail,
  readArchiveCandidate,
  readDesiredFile,
  readPathCandidate,
  readRegistryCandidate,
  sensitiveSettingKey,
  SourceUnavailable
} from "./Inputs.js"

// desired state → plan → apply (docs/architecture.md "One reconcile"). Planning is read-only; applying holds the operation
// lock for the whole run and drives each action as one all-or-nothing lifecycle operation.

export class PlanInvalid extends Data.TaggedError("PlanInvalid")<{
  readonly file: string
  readonly problems: ReadonlyArray<{ readonly path: string; readonly message: string }>
}> {
  override get message() {
    return `the desired state in ${this.file} cannot be planned: ${this.problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`
  }
}

export class StalePlan extends Data.TaggedError("StalePlan")<{
  readonly planId: string
  readonly changes: ReadonlyArray<string>
}> {
  override get message() {
    return `plan ${this.planId} is stale, the panel changed since it was made: ${this.changes.join("; ")}; make a new plan`
  }
}

export class PlanFileInvalid extends Data.TaggedError("PlanFileInvalid")<{
  readonly file: string
  readonly detail: string
}> {
  override get message() {
    return `${this.file} is not a plan file: ${this.detail}`
  }
}

export interface PlanRequest {
  readonly file: string
  /** `--prune`: prune even if the file says `prune: false`. */
  readonly prune: boolean
  readonly allowDestroy: boolean
  readonly env: Readonly<Record<string, string | undefined>>
}

export interface ApplyResult {
  readonly applied: ReadonlyArray<PlanAction>
  readonly failed: { readonly action: PlanAction; readonly error: string } | null
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
}

const reconcileActor: Actor = { type: "reconcile" }

const sourceSpec = (source: PlanSource | undefined, id: string): Effect.Effect<SourceSpec, SourceUnavailable> => {
  switch (source?.type) {
    case "path":
      return Effect.succeed(SourceSpec.Directory({ path: source.path }))
    case "archive":
      return Effect.succeed(SourceSpec.Archive({ path: source.path }))
    case "registry":
      return Effect.succeed(SourceSpec.Registry({ id: source.id, range: source.version }))
    default:
      return Effect.fail(new SourceUnavailable({ id, detail: "the plan names no source to install from" }))
  }
}

const stampOf = (candidate: Candidate) => candidate.digest ?? `version ${candidate.version}`

export class Reconciler extends Effect.Service<Reconciler>()("host/Reconciler", {
  effect: Effect.gen(function*() {
    const lifecycle = yield* Lifecycle
    const settings = yield* SettingsRepo
    const platform = yield* Effect.context<FileSystem.FileSystem | Path.Path | HostConfig | ExtensionsRepo | SettingsRepo>()

    /** What each present entry's source provides; failures are collected, not thrown one by one. */
    const readCandidates = (
      state: DesiredState,
      actual: ReadonlyMap<string, ActualExtension>,
      detail: Detail,
      only?: ReadonlySet<string>
    ) =>
      Effect.gen(function*() {
        const present = state.extensions.filter((entry): entry is Extract<DesiredExtension, { _tag: "Present" }> =>
          entry._tag === "Present" && (only === undefined || only.has(entry.id)))
        const read = (entry: (typeof present)[number]): Effect.Effect<Candidate, SourceUnavailable, FileSystem.FileSystem | Path.Path | HostConfig> =>
          entry.source._tag === "Path"
            ? readPathCandidate(entry.id, entry.source.path, detail, actual.get(entry.id))
            : entry.source._tag === "Archive"
            ? readArchiveCandidate(entry.id, entry.source.archive, entry.source.sha256)
            : readRegistryCandidate(entry.id, entry.version, actual.get(entry.id), detail)
        const outcomes = yield* Effect.forEach(present, (entry) => Effect.either(read(entry)), { concurrency: 8 })
        const candidates = new Map<string, Candidate>()
        const problems: Array<Problem> = []
        outcomes.forEach((outcome, index) => {
          const entry = present[index]!
          if (Either.isLeft(outcome)) problems.push({ path: `extensions.${entry.id}.source`, message: outcome.left.message })
          else candidates.set(entry.id, outcome.right)
        })
        return { candidates, problems }
      })

    /**
     * Plans in two passes: a light reading of everything tells what is in sync, then a full reading of the
     * extensions that have actions gives their capability diffs (most of a large panel is in sync).
     */
    const makePlan = (request: PlanRequest, file: string, state: DesiredState, actual: ReadonlyMap<string, ActualExtension>) =>
      Effect.gen(function*() {
        const planOptions = { prune: request.prune || state.prune, allowDestroy: request.allowDestroy, env: request.env }
        const light = yield* readCandidates(state, actual, "light")
        if (light.problems.length > 0) return yield* new PlanInvalid({ file, problems: light.problems })
        const first = planActions(state, actual, light.candidates, planOptions)
        if (Either.isLeft(first)) return yield* new PlanInvalid({ file, problems: first.left })
        const changing = new Set(first.right.actions.map((action) => action.id))
        const full = yield* readCandidates(state, actual, "full", changing)
        if (full.problems.length > 0) return yield* new PlanInvalid({ file, problems: full.problems })
        const candidates = new Map([...light.candidates, ...full.candidates])
        const fullActual = new Map([...actual, ...(yield* readActual("full", changing))])
        const planned = planActions(state, fullActual, candidates, planOptions)
        if (Either.isLeft(planned)) return yield* new PlanInvalid({ file, problems: planned.left })
        const { actions, warnings } = planned.right
        const sourceStamps = new Map(
          actions.filter((action) => action.source !== undefined).map((action) => [action.id, stampOf(candidates.get(action.id)!)])
        )
        const settingValues = new Map<string, unknown>()
        for (const action of actions) {
          if (action.type !== "configure") continue
          const values = configuredValues(action, request.env)
          if (Either.isRight(values)) settingValues.set(action.id, values.right)
        }
        const basis = planBasis(actual, sourceStamps, settingValues)
        return {
          format: 1,
          id: `plan-${randomUUID()}`,
          created_at: new Date().toISOString(),
          fingerprint: fingerprintOf(basis),
          actions,
          summary: summarize(actions),
          warnings,
          protected: protectedIds(state),
          basis
        } satisfies Plan
      })

    /** Plans from the desired-state file without changing anything (and without the lock). */
    const plan = (request: PlanRequest) =>
      Effect.gen(function*() {
        const desired = yield* readDesiredFile(request.file)
        return yield* makePlan(request, desired.file, desired.state, yield* readActual("light"))
      }).pipe(Effect.withSpan("Reconciler.plan"), Effect.provide(platform))

    /** Runs the actions in order; stops at the first failure and reports what was and was not applied. */
    const execute = (thePlan: Plan, { actor = reconcileActor, context: extra, env }: ApplyOptions) =>
      Effect.gen(function*() {
        const applied: Array<PlanAction> = []
        const context = { ...extra, plan: thePlan.id }
        // The planner checked every dependency against the end state, so a step may pass through a state
        // where a dependent is briefly out of range (both sides of a major bump): `force` lets it.
        for (const [index, action] of thePlan.actions.entries()) {
          const options = { actor, context, force: true }
          const run: Effect.Effect<unknown, { readonly message: string }> = (() => {
            switch (action.type) {
              case "install":
                return Effect.flatMap(sourceSpec(action.source, action.id), (spec) =>
                  lifecycle.add(spec, { actor, context, expectedId: action.id, disabled: action.enabled === false }))
              case "update":
              case "repair":
                return Effect.flatMap(sourceSpec(action.source, action.id), (spec) =>
                  lifecycle.update(action.id, spec, { ...options, context: { ...context, reason: action.type } }))
              case "enable":
                return lifecycle.enable(action.id, options)
              case "disable":
                return lifecycle.disable(action.id, options)
              case "configure":
                return Either.match(configuredValues(action, env), {
                  onLeft: (message) => Effect.fail({ message }),
                  onRight: (values) =>
                    // Marked before the write and unmarked after it: a crash in between over-hides, never leaks.
                    Effect.zipRight(
                      rememberSensitive(action, "mark"),
                      Effect.zipLeft(lifecycle.configure(action.id, values, options), rememberSensitive(action, "settle"))
                    )
                })
              case "remove":
                return lifecycle.remove(action.id, options)
            }
          })()
          const outcome = yield* Effect.either(run)
          if (Either.isLeft(outcome)) {
            return {
              applied,
              failed: { action, error: outcome.left.message },
              notApplied: thePlan.actions.slice(index + 1)
            } satisfies ApplyResult
          }
          applied.push(action)
        }
        return { applied, failed: null, notApplied: [] } satisfies ApplyResult
      })

    /** Keeps the `${ENV}`-sourced keys of a configure action in the sensitive_settings row. */
    const rememberSensitive = (action: PlanAction, phase: "mark" | "settle") =>
      Effect.gen(function*() {
        const stored = decodeSensitiveKeys(Option.getOrUndefined(yield* settings.get(coreExtensionId, sensitiveSettingKey)))
        const changes = action.settings ?? []
        const secret = changes.filter((change) => change.sensitive).map((change) => change.key)
        const plain = new Set(changes.filter((change) => !change.sensitive).map((change) => change.key))
        const before = stored[action.id] ?? []
        const after = phase === "mark"
          ? [...new Set([...before, ...secret])]
          : [...new Set([...before.filter((key) => !plain.has(key)), ...secret])]
        if (after.length === before.length && after.every((key) => before.includes(key))) return
        yield* settings.put(coreExtensionId, sensitiveSettingKey, { ...stored, [action.id]: after.sort() })
      })

    const rememberProtected = (ids: ReadonlyArray<string>) => settings.put(coreExtensionId, protectedSettingKey, ids)

    /** Plans and applies the desired-state file in one run under the lock. */
    const reconcile = (request: PlanRequest, options: ApplyOptions) =>
      lifecycle.withLock(
        "reconcile",
        { actor: options.actor ?? reconcileActor, lockTimeout: options.lockTimeout ?? 0 },
        Effect.gen(function*() {
          const desired = yield* readDesiredFile(request.file)
          const thePlan = yield* makePlan(request, desired.file, desired.state, yield* readActual("light"))
          if (options.onPlan !== undefined) yield* options.onPlan(thePlan)
          const result = yield* execute(thePlan, options)
          if (result.failed === null) yield* rememberProtected(thePlan.protected)
          return { plan: thePlan, result }
        })
      ).pipe(Effect.withSpan("Reconciler.reconcile"), Effect.provide(platform))

    /** The basis of a saved plan recomputed from the panel now. */
    const currentBasis = (thePlan: Plan, env: ApplyOptions["env"]) =>
      Effect.gen(function*() {
        const actual = yield* readActual("light")
        const sourceStamps = new Map<string, string>()
        for (const action of thePlan.actions) {
          if (action.source === undefined) continue
          const candidate: Effect.Effect<Candidate, SourceUnavailable, FileSystem.FileSystem | Path.Path | HostConfig> = action.source.type === "path"
            ? readPathCandidate(action.id, action.source.path, "light")
            : action.source.type === "archive"
            ? readArchiveCandidate(action.id, action.source.path, undefined)
            : readRegistryCandidate(action.id, action.source.version, undefined, "full")
          const stamp = yield* Effect.either(Effect.map(candidate, stampOf))
          sourceStamps.set(action.id, Either.getOrElse(stamp, (error) => `unreadable (${error.message})`))
        }
        const settingValues = new Map<string, unknown>()
        for (const action of thePlan.actions) {
          if (action.type !== "configure") continue
          const values = configuredValues(action, env)
          settingValues.set(action.id, Either.getOrElse(values, (message) => `unavailable (${message})`))
        }
        return planBasis(actual, sourceStamps, settingValues)
      })

    /** Applies exactly a saved plan, refusing it if the panel or its sources changed since it was made. */
    const applyPlan = (thePlan: Plan, options: ApplyOptions) =>
      lifecycle.withLock(
        `reconcile ${thePlan.id}`,
        { actor: options.actor ?? reconcileActor, lockTimeout: options.lockTimeout ?? 0 },
        Effect.gen(function*() {
          const basis = yield* currentBasis(thePlan, options.env)
          if (fingerprintOf(basis) !== thePlan.fingerprint) {
            const changes = basisChanges(thePlan.basis, basis)
            return yield* new StalePlan({ planId: thePlan.id, changes: changes.length > 0 ? changes : ["the fingerprint differs"] })
          }
          if (options.onPlan !== undefined) yield* options.onPlan(thePlan)
          const result = yield* execute(thePlan, options)
          if (result.failed === null) yield* rememberProtected(thePlan.protected)
          return result
        })
      ).pipe(Effect.withSpan("Reconciler.applyPlan"), Effect.provide(platform))

    return { plan, reconcile, applyPlan } as const
  })
}) {}

const protectedIds = (state: DesiredState): ReadonlyArray<string> =>
  state.extensions.filter((entry) => entry._tag === "Present" && entry.protect).map((entry) => entry.id)

/** Writes a plan file (`--out`). */
export const savePlan = Effect.fn("Reconciler.savePlan")(function*(thePlan: Plan, file: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const absolute = path.resolve(file)
  yield* fs.makeDirectory(path.dirname(absolute), { recursive: true })
  const encoded = yield* Schema.encode(Plan)(thePlan)
  yield* fs.writeFileString(`${absolute}.tmp`, `${JSON.stringify(encoded, null, 2)}\n`)
  yield* fs.rename(`${absolute}.tmp`, absolute)
  return absolute
})

/** Reads a plan file (`--plan`). */
export const loadPlan = Effect.fn("Reconciler.loadPlan")(function*(file: string) {
  const fs = yield* FileSystem.FileSystem
  const text = yield* fs.readFileString(file).pipe(Effect.mapError((error) => new PlanFileInvalid({ file, detail: error.message })))
  return yield* Schema.decodeUnknown(Schema.parseJson(Plan))(text).pipe(
    Effect.mapError((error) => new PlanFileInvalid({ file, detail: error.message.split("\n").slice(0, 3).join(" ") }))
  )
})

