import { FileSystem, Path } from "@effect/platform"
import { Data, DateTime, Duration, Effect, Either, Option, Schema } from "effect"
import { join } from "node:path"
import { ArtifactStore, type ArtifactStoreService } from "../archive/ArtifactStore.js"
import { cachedTreeHashes, TreeHashing } from "../archive/TreeCache.js"
import { HostConfig } from "../config/HostConfig.js"
import type { DesiredExtension, DesiredState } from "../domain/DesiredState.js"
import { type Actor, type ExtensionSource, manifestOf } from "../domain/Installed.js"
import { type ActualExtension, type Candidate, configuredValues, planActions } from "../domain/Plan.js"
import { basisChanges, Plan, type PlanAction, type PlanSource, summarize } from "../domain/PlanFormat.js"
import { type PreflightReport, preflightItem, summarizePreflight, unmetOn } from "../domain/Preflight.js"
import { type Problem } from "../domain/Problems.js"
import type { RuntimeVersions } from "../domain/Rules.js"
import { Lifecycle, type OperationOptions, type OperationResult } from "../lifecycle/Lifecycle.js"
import { Progress } from "../lifecycle/Events.js"
import { ModuleLoader } from "../lifecycle/ModuleLoader.js"
import { Panel } from "../panel/Panel.js"
import { Registry } from "../registry/Registry.js"
import { bootForCli, criticalFailures, extensionHealth } from "../runtime/Backend.js"
import { SourceSpec } from "../lifecycle/Source.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { CoreKeys, CoreRows, type SensitiveKeys } from "../store/CoreRows.js"
import { fingerprintOf, planBasis } from "./Fingerprint.js"
import { SettingsRepo } from "../store/SettingsRepo.js"
import {
  readActual,
  type Detail,
  readArchiveCandidate,
  readKeptArchiveCandidate,
  readDesiredFile,
  readPathCandidate,
  readRegistryCandidate,
  readStoredCandidate,
  SourceUnavailable
} from "./Inputs.js"
import { passingRegistryVersions } from "./Preflight.js"
import { writeFileAtomic } from "../system/AtomicFile.js"
import { uuid } from "../system/Ids.js"

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
  /**
   * Run the critical health checks an install or update brings before going on (default true;
   * `--no-health-gates` turns it off). See docs/operations.md#health-gates.
   */
  readonly healthGates?: boolean
}

/** How long one extension's health checks may take (as `status --health`). */
export const healthGateTimeout = Duration.seconds(5)

const reconcileActor: Actor = { type: "reconcile" }

const sourceSpec = (
  source: PlanSource | undefined,
  id: string,
  artifacts: ArtifactStoreService
): Effect.Effect<SourceSpec, SourceUnavailable> => {
  switch (source?.type) {
    case "path":
      return Effect.succeed(SourceSpec.Directory({ path: source.path }))
    case "archive":
      // The bytes the plan read, kept in the artifact store; the file itself only if the store lost them.
      return Effect.map(
        source.sha256 === null ? Effect.succeed(false) : Effect.orElseSucceed(artifacts.has(source.sha256), () => false),
        (kept) =>
          kept && source.sha256 !== null
            ? SourceSpec.Artifact({ sha256: source.sha256, origin: { type: "archive", ref: source.path }, expected: undefined })
            : SourceSpec.Archive({ path: source.path })
      )
    case "registry":
      // The bytes the plan verified, from the artifact store: never a second download that could differ.
      return Effect.succeed(
        source.sha256 === undefined
          ? SourceSpec.Registry({ id: source.id, range: source.version })
          : SourceSpec.Artifact({
            sha256: source.sha256,
            origin: { type: "registry", ref: source.url ?? `${source.id}@${source.version}` },
            expected: { id: source.id, version: source.version }
          })
      )
    default:
      return Effect.fail(new SourceUnavailable({ id, detail: "the plan names no source to install from" }))
  }
}

/**
 * What a plan's source is stamped with in its basis. A registry download kept in the artifact store is
 * stamped with its sha256: a saved plan applies only those bytes (a registry that now serves others
 * makes the plan stale, docs/plan-format.md).
 */
/**
 * Planning reads every installed tree and every folder source: their hashes are remembered between runs
 * under storage/host/cache (archive/TreeCache), so a panel in sync is planned from one stat per entry.
 */
const withTreeCache = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | HostConfig> =>
  Effect.scoped(
    Effect.flatMap(HostConfig, ({ paths }) =>
      Effect.provideServiceEffect(effect, TreeHashing, cachedTreeHashes(join(paths.storage, "cache", "trees.json"))))
  )

const stampOf = (candidate: Candidate) =>
  candidate.source.type === "registry" && candidate.source.sha256 !== undefined
    ? `archive sha256 ${candidate.source.sha256}`
    : candidate.digest ?? `version ${candidate.version}`

/** A candidate read whole by the light reading (an archive, or a registry download): no second reading. */
const readInFull = (candidate: Candidate) =>
  candidate.source.type === "archive" || (candidate.source.type === "registry" && candidate.source.sha256 !== undefined)

export class Reconciler extends Effect.Service<Reconciler>()("host/Reconciler", {
  effect: Effect.gen(function*() {
    const lifecycle = yield* Lifecycle
    const coreRows = yield* CoreRows
    const extensionsRepo = yield* ExtensionsRepo
    const artifacts = yield* ArtifactStore
    const platform = yield* Effect.context<
      FileSystem.FileSystem | Path.Path | HostConfig | ExtensionsRepo | SettingsRepo | CoreRows | Panel | ModuleLoader | ArtifactStore | Registry
    >()

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
        const read = (
          entry: (typeof present)[number]
        ): Effect.Effect<Candidate, SourceUnavailable, FileSystem.FileSystem | Path.Path | HostConfig | ArtifactStore | Registry> =>
          entry.source._tag === "Path"
            ? readPathCandidate(entry.id, entry.source.path, detail, actual.get(entry.id))
            : entry.source._tag === "Archive"
            ? readKeptArchiveCandidate(entry.id, entry.source.archive, entry.source.sha256)
            : readRegistryCandidate(entry.id, entry.version, actual.get(entry.id), detail)
        // Folders are read synchronously, so they go one after another; archives and registry downloads
        // wait on I/O and are read a few at a time.
        const outcomes = yield* Effect.forEach(
          present,
          (entry) => Effect.either(read(entry)),
          { concurrency: present.every((entry) => entry.source._tag === "Path") ? 1 : 8 }
        )
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
        // Archives and registry downloads were read whole already: one download per plan.
        const toRead = new Set([...changing].filter((id) => {
          const candidate = light.candidates.get(id)
          return candidate === undefined || !readInFull(candidate)
        }))
        const full = yield* readCandidates(state, actual, "full", toRead)
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

    /** Plans from the desired-state file without changing anything (and without the lock). */
    const plan = (request: PlanRequest) =>
      Effect.gen(function*() {
        const desired = yield* readDesiredFile(request.file)
        return yield* makePlan(request, desired.file, desired.state, yield* readActual("light"))
      }).pipe(withTreeCache, Effect.withSpan("Reconciler.plan"), Effect.provide(platform))

    // ---- health gates (docs/operations.md#health-gates) ------------------------------------------

    /** The critical checks an installed extension declares (none: no gate). */
    const criticalChecks = (id: string) =>
      Effect.map(extensionsRepo.find(id), Option.match({
        onNone: () => ({ enabled: false, critical: [] as ReadonlyArray<string> }),
        onSome: (record) => ({
          enabled: record.enabled,
          critical: (manifestOf(record)?.document.health?.checks ?? [])
            .filter((check) => check.severity === "critical")
            .map((check) => check.id)
        })
      }))

    /** Boots the enabled extensions and runs `id`'s health checks: the failing critical ones, described. */
    const gateFailures = (id: string) =>
      Effect.gen(function*() {
        const generation = yield* bootForCli
        const loaded = generation.extensions.get(id)
        if (loaded === undefined) {
          return [`it did not boot: ${generation.quarantined.get(id) ?? "it is not running"}`]
        }
        const health = yield* extensionHealth(loaded, healthGateTimeout)
        const failing = new Set(criticalFailures([health]))
        return health.checks
          .filter((check) => failing.has(`${id} ${check.id}`))
          .map((check) => `critical check ${check.id} (${check.label}) is ${check.status}${check.message === null ? "" : `: ${check.message}`}`)
      }).pipe(Effect.catchAll((error) => Effect.succeed([`its health checks could not run: ${error.message}`])))

    interface Snapshot {
      readonly copy: string
      readonly source: ExtensionSource
    }

    /** The previous tree of an extension about to be updated, kept until its gate passes. */
    const snapshotOf = (id: string) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const { paths } = yield* HostConfig
        const installed = path.join(paths.extensions, ...id.split("/"))
        if (!(yield* fs.exists(installed))) return Option.none<Snapshot>()
        const record = yield* extensionsRepo.find(id)
        if (Option.isNone(record)) return Option.none<Snapshot>()
        const copy = path.join(paths.staging, `health-gate-${yield* uuid}`)
        yield* fs.makeDirectory(paths.staging, { recursive: true })
        yield* fs.copy(installed, copy)
        return Option.some<Snapshot>({ copy, source: record.value.source })
      })

    /** Drops the previous trees a crashed run may have left (held under the lock). */
    const dropSnapshots = Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const { paths } = yield* HostConfig
      if (!(yield* fs.exists(paths.staging))) return
      for (const name of yield* fs.readDirectory(paths.staging)) {
        if (name.startsWith("health-gate-")) yield* fs.remove(path.join(paths.staging, name), { recursive: true, force: true })
      }
    }).pipe(Effect.ignore)

    interface Gate {
      readonly action: PlanAction
      readonly snapshot: Option.Option<Snapshot>
      readonly previous: string | null
      readonly migrations: ReadonlyArray<string>
    }

    /**
     * Runs the gate of the extension whose actions just ended. A failing critical check takes the step
     * back (an update to the previous tree and migrations, an install removed); the message says how.
     */
    const runGate = (gate: Gate, context: Record<string, unknown>, actor: Actor) =>
      Effect.gen(function*() {
        const { action } = gate
        const declared = yield* criticalChecks(action.id)
        if (!declared.enabled || declared.critical.length === 0) return Option.none<string>()
        yield* Effect.flatMap(Effect.serviceOption(Progress), Option.match({
          onNone: () => Effect.void,
          onSome: (progress) => progress.step(`health gate: ${action.id} (${declared.critical.join(", ")})`)
        }))
        const failures = yield* gateFailures(action.id)
        if (failures.length === 0) return Option.none<string>()
        const gateContext = { ...context, reason: "health gate", health_gate: failures }
        const undo = action.type === "install" || gate.previous === null || Option.isNone(gate.snapshot)
          ? Effect.as(lifecycle.remove(action.id, { actor, context: gateContext, force: true }), "it was removed")
          : Effect.as(
            lifecycle.update(action.id, SourceSpec.Directory({ path: gate.snapshot.value.copy }), {
              actor,
              context: gateContext,
              force: true,
              revertMigrations: gate.migrations,
              recordSource: gate.snapshot.value.source
            }),
            `it was rolled back to ${gate.previous}`
          )
        const undone = yield* Effect.either(undo)
        const outcome = Either.isRight(undone) ? undone.right : `rolling it back failed too: ${undone.left.message}`
        return Option.some(`health gate failed: ${failures.join("; ")}; ${outcome}`)
      })

    /** Runs the actions in order; stops at the first failure and reports what was and was not applied. */
    const execute = (thePlan: Plan, { actor = reconcileActor, context: extra, env, healthGates = true }: ApplyOptions) =>
      Effect.gen(function*() {
        const applied: Array<PlanAction> = []
        const context = { ...extra, plan: thePlan.id }
        if (healthGates) yield* dropSnapshots
        let gate: Gate | undefined
        // The planner checked every dependency against the end state, so a step may pass through a state
        // where a dependent is briefly out of range (both sides of a major bump): `force` lets it.
        for (const [index, action] of thePlan.actions.entries()) {
          const options = { actor, context, force: true }
          const gated = healthGates && (action.type === "install" || action.type === "update" || action.type === "repair")
          const snapshot = gated && action.type !== "install"
            ? yield* Effect.orElseSucceed(snapshotOf(action.id), () => Option.none<Snapshot>())
            : Option.none<Snapshot>()
          const run: Effect.Effect<unknown, { readonly message: string }> = (() => {
            switch (action.type) {
              case "install":
                return Effect.flatMap(sourceSpec(action.source, action.id, artifacts), (spec) =>
                  lifecycle.add(spec, { actor, context, expectedId: action.id, disabled: action.enabled === false }))
              case "update":
              case "repair":
                return Effect.flatMap(sourceSpec(action.source, action.id, artifacts), (spec) =>
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
            yield* Option.match(snapshot, { onNone: () => Effect.void, onSome: (kept) => removeSnapshot(kept.copy) })
            return {
              applied,
              failed: { action, error: outcome.left.message },
              notApplied: thePlan.actions.slice(index + 1)
            } satisfies ApplyResult
          }
          if (gated) {
            const result = outcome.right as OperationResult
            gate = { action, snapshot, previous: result.fromVersion, migrations: result.migrations }
          }
          applied.push(action)
          // The gate runs once the extension's own steps (install, configure, enable) are done and before
          // anything after it (the plan puts dependencies first, so before its dependents).
          const next = thePlan.actions[index + 1]
          if (gate !== undefined && (next === undefined || next.id !== gate.action.id)) {
            const current: Gate = gate
            gate = undefined
            const failed = yield* runGate(current, context, actor).pipe(
              Effect.ensuring(Option.match(current.snapshot, { onNone: () => Effect.void, onSome: (kept) => removeSnapshot(kept.copy) }))
            )
            if (Option.isSome(failed)) {
              const position = applied.indexOf(current.action)
              return {
                applied: applied.filter((_, at) => at < position),
                failed: { action: current.action, error: failed.value },
                notApplied: [...applied.slice(position + 1), ...thePlan.actions.slice(index + 1)]
              } satisfies ApplyResult
            }
          }
        }
        return { applied, failed: null, notApplied: [] } satisfies ApplyResult
      })

    const removeSnapshot = (copy: string) =>
      Effect.flatMap(FileSystem.FileSystem, (fs) => fs.remove(copy, { recursive: true, force: true })).pipe(Effect.ignore)

    /** The upgrade preflight: each desired extension checked against other panel and framework versions. */
    const preflight = (request: PlanRequest, versions: RuntimeVersions) =>
      withTreeCache(Effect.gen(function*() {
        const desired = yield* readDesiredFile(request.file)
        const actual = yield* readActual("light")
        const { candidates, problems } = yield* readCandidates(desired.state, actual, "light")
        if (problems.length > 0) return yield* new PlanInvalid({ file: desired.file, problems })
        const present = desired.state.extensions.filter((entry): entry is Extract<DesiredExtension, { _tag: "Present" }> =>
          entry._tag === "Present")
        // The installed manifests' `requires`, as recorded at install.
        const recorded = new Map((yield* extensionsRepo.list).map((record) =>
          [record.extensionId, manifestOf(record)?.document.requires ?? {}] as const))
        const items = yield* Effect.forEach(present, (entry) =>
          Effect.gen(function*() {
            const candidate = candidates.get(entry.id)!
            const actualInstalled = actual.get(entry.id)
            const installed = actualInstalled === undefined
              ? undefined
              : { version: actualInstalled.version, requires: recorded.get(entry.id) ?? {} }
            // A candidate read from the installed record (in sync) has the installed requirements.
            const planned = {
              version: candidate.version,
              requires: candidate.requires ?? (candidate.version === installed?.version ? installed.requires : {})
            }
            const plannedFails = unmetOn(planned.requires, versions).length > 0
            const registry = entry.source._tag === "Registry"
            const passing = plannedFails
              ? yield* passingRegistryVersions(entry.id, entry.version, versions)
              : { any: undefined, inRange: undefined }
            return preflightItem({
              id: entry.id,
              installed,
              planned,
              passingInRange: registry ? passing.inRange : undefined,
              passingAny: passing.any
            }, versions)
          }))
        return {
          panel_version: versions.panel ?? null,
          host_version: versions.host,
          extensions: items,
          summary: summarizePreflight(items)
        } satisfies PreflightReport
      })).pipe(Effect.withSpan("Reconciler.preflight"), Effect.provide(platform))

    /** Keeps the `${ENV}`-sourced keys of a configure action in the sensitive_settings row. */
    const rememberSensitive = (action: PlanAction, phase: "mark" | "settle") =>
      Effect.gen(function*() {
        const stored = Option.getOrElse(yield* coreRows.get(CoreKeys.sensitiveKeys), (): SensitiveKeys => ({}))
        const changes = action.settings ?? []
        const secret = changes.filter((change) => change.sensitive).map((change) => change.key)
        const plain = new Set(changes.filter((change) => !change.sensitive).map((change) => change.key))
        const before = stored[action.id] ?? []
        const after = phase === "mark"
          ? [...new Set([...before, ...secret])]
          : [...new Set([...before.filter((key) => !plain.has(key)), ...secret])]
        if (after.length === before.length && after.every((key) => before.includes(key))) return
        yield* coreRows.put(CoreKeys.sensitiveKeys, { ...stored, [action.id]: after.sort() })
      })

    const rememberProtected = (ids: ReadonlyArray<string>) => coreRows.put(CoreKeys.protectedIds, ids)

    /** Plans and applies the desired-state file in one run under the lock. */
    const reconcile = (request: PlanRequest, options: ApplyOptions) =>
      lifecycle.withLock(
        "reconcile",
        { actor: options.actor ?? reconcileActor, lockTimeout: options.lockTimeout ?? 0 },
        Effect.gen(function*() {
          const desired = yield* readDesiredFile(request.file)
          const thePlan = yield* withTreeCache(
            Effect.flatMap(readActual("light"), (actual) => makePlan(request, desired.file, desired.state, actual))
          )
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
          const source = action.source
          // A download the plan kept is read from the artifact store; only when the store lost it is the
          // registry asked again, and then other bytes make the plan stale.
          const stored = source.type === "registry" && source.sha256 !== undefined && (yield* artifacts.has(source.sha256))
          const candidate: Effect.Effect<Candidate, SourceUnavailable, FileSystem.FileSystem | Path.Path | HostConfig | ArtifactStore | Registry> =
            source.type === "path"
              ? readPathCandidate(action.id, source.path, "light")
              : source.type === "archive"
              ? readArchiveCandidate(action.id, source.path, undefined)
              : stored && source.sha256 !== undefined
              ? readStoredCandidate(action.id, source.sha256, source)
              : readRegistryCandidate(action.id, source.version, undefined, "full")
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
          const basis = yield* withTreeCache(currentBasis(thePlan, options.env))
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

    return { plan, reconcile, applyPlan, preflight } as const
  })
}) {}

const protectedIds = (state: DesiredState): ReadonlyArray<string> =>
  state.extensions.filter((entry) => entry._tag === "Present" && entry.protect).map((entry) => entry.id)

/** Writes a plan file (`--out`). */
export const savePlan = Effect.fn("Reconciler.savePlan")(function*(thePlan: Plan, file: string) {
  const path = yield* Path.Path
  const absolute = path.resolve(file)
  const encoded = yield* Schema.encode(Plan)(thePlan)
  yield* writeFileAtomic(absolute, `${JSON.stringify(encoded, null, 2)}\n`)
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

