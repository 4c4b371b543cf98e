import { Either } from "effect"
import semver from "semver"
import type { DesiredExtension, DesiredState } from "./DesiredState.js"
import { envReferences, substituteEnv, unlistedWarning } from "./DesiredState.js"
import type { ExtensionLayout, Manifest } from "./Manifest.js"
import {
  type Capabilities,
  type CapabilityDiff,
  capabilityKinds,
  type PlanAction,
  type PlanSource,
  type SettingChange
} from "./PlanFormat.js"
import { problem, type Problem } from "./Problems.js"
import { dependencyOrder, dependentsOutOfRange, enabledDependents, type InstalledState } from "./Rules.js"
import { type SettingField, validateSettingValues } from "./Settings.js"
import { bundleSlotReferences } from "./Slots.js"

// The reconciler's pure core (docs/plan-format.md): desired × actual → ordered actions. No I/O here: the
// caller reads the desired file, the tables, the installed files and the sources, and applies the plan.

// ---- capabilities ------------------------------------------------------------------------------

/** The capabilities of a decoded manifest with its resolved layout, bundle text and migration names. */
export const capabilitiesOf = (
  manifest: Manifest,
  layout: ExtensionLayout,
  bundle: string | undefined,
  migrations: ReadonlyArray<string>
): Capabilities => {
  const declaredSlots = manifest.document.frontend?.slots
  const manifestSlots = declaredSlots !== null && typeof declaredSlots === "object" && !Array.isArray(declaredSlots)
    ? Object.keys(declaredSlots)
    : []
  return {
    permissions: [...manifest.permissions].sort(),
    routes: Object.entries(layout.routes).map(([group, file]) => `${group} ${file}`).sort(),
    slots: [...new Set([...manifestSlots, ...(bundle === undefined ? [] : bundleSlotReferences(bundle))])].sort(),
    migrations: [...migrations].sort(),
    schedules: manifest.schedules.map((task) => `${task.id} (${task.cron})`).sort(),
    settings: manifest.settings.map((field) => `${field.key}: ${field.type}`).sort()
  }
}

export const noCapabilities: Capabilities = { permissions: [], routes: [], slots: [], migrations: [], schedules: [], settings: [] }

export const diffCapabilities = (before: Capabilities, after: Capabilities): CapabilityDiff => {
  const diff = (kind: (typeof capabilityKinds)[number]) => {
    const old = new Set(before[kind])
    const next = new Set(after[kind])
    return { added: [...next].filter((item) => !old.has(item)).sort(), removed: [...old].filter((item) => !next.has(item)).sort() }
  }
  return Object.fromEntries(capabilityKinds.map((kind) => [kind, diff(kind)])) as unknown as CapabilityDiff
}

// ---- inputs ------------------------------------------------------------------------------------------

export type Integrity = "intact" | "modified" | "missing" | "unverifiable"

export interface ActualExtension {
  readonly id: string
  readonly version: string
  readonly enabled: boolean
  readonly dependencies: Readonly<Record<string, string>>
  readonly settings: Readonly<Record<string, unknown>>
  readonly fields: ReadonlyArray<SettingField>
  readonly capabilities: Capabilities
  readonly integrity: Integrity
  /** sha256 of the installed checksums.json, comparable with a candidate's `digest`. */
  readonly digest: string | null
  readonly protected: boolean
  /** Settings whose stored value came from `${ENV}`: plans never show it. */
  readonly sensitiveKeys: ReadonlyArray<string>
  /** The installed manifest's `requires` (the upgrade preflight checks it against other versions). */
  readonly requires?: Readonly<Record<string, string>>
}

/** What a desired source provides right now. */
export interface Candidate {
  readonly id: string
  readonly version: string
  readonly dependencies: Readonly<Record<string, string>>
  readonly fields: ReadonlyArray<SettingField>
  readonly capabilities: Capabilities
  /** sha256 of the tree's checksums.json; null when unknown without downloading (registry). */
  readonly digest: string | null
  readonly source: PlanSource
  /** The source manifest's `requires` (the upgrade preflight checks it against other versions). */
  readonly requires?: Readonly<Record<string, string>>
}

export interface PlanOptions {
  readonly prune: boolean
  readonly allowDestroy: boolean
  readonly env: Readonly<Record<string, string | undefined>>
}

export interface PlannedActions {
  readonly actions: ReadonlyArray<PlanAction>
  readonly warnings: ReadonlyArray<string>
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** `message` with a substituted `${ENV}` value put back as its template, so no problem quotes a secret. */
const withoutSecret = (message: string, value: unknown, template: unknown): string => {
  const quoted = message.split(JSON.stringify(value)).join(JSON.stringify(template))
  const raw = String(value)
  return raw.length >= 4 ? quoted.split(raw).join(String(template)) : quoted
}

const settingChanges = (
  entry: Extract<DesiredExtension, { _tag: "Present" }>,
  fields: ReadonlyArray<SettingField>,
  stored: Readonly<Record<string, unknown>>,
  sensitiveKeys: ReadonlyArray<string>,
  env: PlanOptions["env"],
  problems: Array<Problem>
): ReadonlyArray<SettingChange> => {
  if (entry.settings === undefined) return []
  const templates = entry.settings
  const path = `extensions.${entry.id}.settings`
  const substituted = substituteEnv(templates, env)
  if (Either.isLeft(substituted)) {
    problems.push(problem(path, substituted.left))
    return []
  }
  const values = substituted.right as Record<string, unknown>
  const validated = validateSettingValues(fields, values, path)
  if (Either.isLeft(validated)) {
    for (const found of validated.left) {
      const key = found.path.slice(path.length + 1)
      problems.push(
        envReferences(templates[key]).length > 0 ? { ...found, message: withoutSecret(found.message, values[key], templates[key]) } : found
      )
    }
    return []
  }
  const byKey = new Map(fields.map((field) => [field.key, field]))
  return Object.entries(validated.right)
    .filter(([key, value]) => !sameValue(stored[key], value))
    .map(([key]) => {
      const template = templates[key]
      const sensitive = envReferences(template).length > 0 || byKey.get(key)?.input === "password"
      // A stored value that came from ${ENV} stays hidden even when the new one is a plain literal.
      const hideStored = sensitive || sensitiveKeys.includes(key)
      return {
        key,
        from: hideStored ? (key in stored ? "(sensitive)" : null) : stored[key] ?? null,
        to: sensitive ? template : validated.right[key],
        sensitive
      }
    })
}

/** What the panel holds once the plan is applied, per extension, to check dependencies against the end state. */
interface EndState {
  readonly version: string
  readonly enabled: boolean
  readonly dependencies: Readonly<Record<string, string>>
}

/** A plan being drawn up: actions per extension, what is taken away, the end state, and what is wrong. */
interface Draft {
  readonly problems: Array<Problem>
  readonly warnings: Array<string>
  readonly perExtension: Map<string, Array<PlanAction>>
  readonly removals: Array<PlanAction>
  readonly disables: Array<PlanAction>
  readonly final: Map<string, EndState>
}

const push = (draft: Draft, action: PlanAction) => {
  const list = draft.perExtension.get(action.id) ?? []
  list.push(action)
  draft.perExtension.set(action.id, list)
}

type PresentEntry = Extract<DesiredExtension, { _tag: "Present" }>

/** An entry marked absent: removed if installed (unless protected). */
const planAbsent = (draft: Draft, id: string, installed: ActualExtension | undefined, options: PlanOptions) => {
  if (installed === undefined) return
  planRemoval(draft, id, installed, options, { verb: "removing", reason: "marked absent in the desired state" })
}

/** A removal, or the problem that the extension is protected (docs/plan-format.md). */
const planRemoval = (
  draft: Draft,
  id: string,
  installed: ActualExtension,
  options: PlanOptions,
  why: { readonly verb: string; readonly reason: string }
) => {
  if (installed.protected && !options.allowDestroy) {
    draft.problems.push(problem(`extensions.${id}`, `${id} is protected; ${why.verb} it needs --allow-destroy`))
    return
  }
  draft.removals.push({
    type: "remove",
    id,
    from: installed.version,
    to: null,
    reason: why.reason,
    capabilities: diffCapabilities(installed.capabilities, noCapabilities)
  })
}

/** The candidate of a present entry, if it is the extension and version the entry asks for. */
const acceptedCandidate = (draft: Draft, entry: PresentEntry, candidate: Candidate | undefined): Candidate | undefined => {
  if (candidate === undefined) {
    draft.problems.push(problem(`extensions.${entry.id}`, `no source could be read for ${entry.id}`))
    return undefined
  }
  if (candidate.id !== entry.id) {
    draft.problems.push(problem(`extensions.${entry.id}.source`, `the source holds ${candidate.id}, not ${entry.id}`))
    return undefined
  }
  if (entry.version !== undefined && !semver.satisfies(candidate.version, entry.version, { includePrerelease: true })) {
    draft.problems.push(problem(`extensions.${entry.id}.version`, `the source provides ${candidate.version}, which does not satisfy ${entry.version}`))
    return undefined
  }
  return candidate
}

/** A present entry not installed yet: install (and configure). */
const planInstall = (draft: Draft, entry: PresentEntry, candidate: Candidate, options: PlanOptions) => {
  push(draft, {
    type: "install",
    id: entry.id,
    from: null,
    to: candidate.version,
    reason: "not installed",
    capabilities: diffCapabilities(noCapabilities, candidate.capabilities),
    source: candidate.source,
    enabled: entry.enabled
  })
  const changes = settingChanges(entry, candidate.fields, {}, [], options.env, draft.problems)
  if (changes.length > 0) push(draft, configureAction(entry.id, changes))
  draft.final.set(entry.id, { version: candidate.version, enabled: entry.enabled, dependencies: candidate.dependencies })
}

/** An installed extension's files: updated when the source differs, repaired when they were changed; whether it updates. */
const planFiles = (draft: Draft, entry: PresentEntry, installed: ActualExtension, candidate: Candidate): boolean => {
  const inRange = entry.version === undefined || semver.satisfies(installed.version, entry.version, { includePrerelease: true })
  const contentDiffers = candidate.digest !== null && installed.digest !== null && candidate.digest !== installed.digest
  const versionDiffers = entry.source._tag === "Registry" ? !inRange : installed.version !== candidate.version
  if (versionDiffers || contentDiffers) {
    push(draft, {
      type: "update",
      id: entry.id,
      from: installed.version,
      to: candidate.version,
      reason: versionDiffers
        ? entry.source._tag === "Registry" ? `installed ${installed.version} does not satisfy ${entry.version}` : `the source provides ${candidate.version}`
        : "the source's files differ from the installed ones (same version)",
      capabilities: diffCapabilities(installed.capabilities, candidate.capabilities),
      source: candidate.source
    })
  } else if (installed.integrity === "modified" || installed.integrity === "missing") {
    push(draft, {
      type: "repair",
      id: entry.id,
      from: installed.version,
      to: installed.version,
      reason: installed.integrity === "missing" ? "the installed files are missing" : "the installed files differ from checksums.json",
      capabilities: diffCapabilities(installed.capabilities, installed.capabilities),
      source: candidate.source
    })
  }
  return versionDiffers || contentDiffers
}

/** A present entry already installed: its files, settings and enabled state, each where it differs. */
const planInstalled = (draft: Draft, entry: PresentEntry, installed: ActualExtension, candidate: Candidate, options: PlanOptions) => {
  const updating = planFiles(draft, entry, installed, candidate)
  draft.final.set(entry.id, {
    version: updating ? candidate.version : installed.version,
    enabled: entry.enabled,
    dependencies: updating ? candidate.dependencies : installed.dependencies
  })
  const changes = settingChanges(entry, updating ? candidate.fields : installed.fields, installed.settings, installed.sensitiveKeys, options.env, draft.problems)
  if (changes.length > 0) push(draft, configureAction(entry.id, changes))
  if (entry.enabled && !installed.enabled) {
    push(draft, {
      type: "enable",
      id: entry.id,
      reason: "disabled, desired enabled",
      capabilities: diffCapabilities(noCapabilities, updating ? candidate.capabilities : installed.capabilities)
    })
  }
  if (!entry.enabled && installed.enabled) {
    draft.disables.push({
      type: "disable",
      id: entry.id,
      reason: "enabled, desired disabled",
      capabilities: diffCapabilities(installed.capabilities, noCapabilities)
    })
  }
}

/** Installed but not listed: a warning, or a removal with prune (unless protected). */
const planUnlisted = (draft: Draft, id: string, installed: ActualExtension, options: PlanOptions) => {
  if (!options.prune) {
    draft.warnings.push(unlistedWarning(id))
    draft.final.set(id, { version: installed.version, enabled: installed.enabled, dependencies: installed.dependencies })
    return
  }
  planRemoval(draft, id, installed, options, { verb: "pruning", reason: "not in the desired state (prune)" })
}

/** Every enabled extension's dependencies, checked against the end state. */
const checkDependencies = (draft: Draft) => {
  for (const [id, state] of draft.final) {
    if (!state.enabled) continue
    for (const [dependency, range] of Object.entries(state.dependencies)) {
      const provided = draft.final.get(dependency)
      const why = provided === undefined
        ? "which the desired state does not keep installed"
        : !provided.enabled
        ? "which the desired state leaves disabled"
        : semver.satisfies(provided.version, range, { includePrerelease: true })
        ? undefined
        : `which would be at ${provided.version}`
      if (why !== undefined) draft.problems.push(problem(`extensions.${id}`, `${id} depends on ${dependency} ${range}, ${why}`))
    }
  }
}

/** Dependencies first for what is added; dependents first for what is taken away. */
const orderActions = (
  draft: Draft,
  actual: ReadonlyMap<string, ActualExtension>,
  candidates: ReadonlyMap<string, Candidate>
): ReadonlyArray<PlanAction> => {
  const dependenciesAfter = (id: string) => Object.keys(candidates.get(id)?.dependencies ?? actual.get(id)?.dependencies ?? {})
  const forward = dependencyOrder([...draft.perExtension.keys()].sort(), dependenciesAfter)
  if (forward.cycle.length > 0) draft.problems.push(problem("extensions", `dependency cycle between ${forward.cycle.join(", ")}`))
  const dependenciesBefore = (id: string) => Object.keys(actual.get(id)?.dependencies ?? {})
  const takenAway = new Map([...draft.disables, ...draft.removals].map((action) => [action.id, action]))
  const backward = dependencyOrder([...takenAway.keys()].sort().reverse(), dependenciesBefore)
  return [
    ...[...backward.order, ...backward.cycle].reverse().map((id) => takenAway.get(id)!),
    ...forward.order.flatMap((id) => draft.perExtension.get(id)!)
  ]
}

/** The extensions `id` depends on in the end state, directly or through others (in the order first reached). */
const dependenciesThrough = (id: string, final: ReadonlyMap<string, EndState>): ReadonlyArray<string> => {
  const reached = new Set<string>()
  const visit = (current: string) => {
    for (const dependency of Object.keys(final.get(current)?.dependencies ?? {})) {
      if (dependency === id || reached.has(dependency)) continue
      reached.add(dependency)
      visit(dependency)
    }
  }
  visit(id)
  return [...reached]
}

/**
 * Whether the lifecycle would refuse `action` without force in the state the plan has reached before it
 * (domain/Preconditions.ts): an update or repair that is not newer, an update that leaves an enabled
 * dependent briefly out of range, a disable or removal while an enabled extension still depends on it.
 * The planner checked the end state (checkDependencies), so these are states the plan only passes through.
 */
const refusedWithoutForce = (action: PlanAction, state: ReadonlyMap<string, InstalledState>): boolean => {
  switch (action.type) {
    case "remove":
    case "disable":
      return enabledDependents(action.id, state).length > 0
    case "update":
    case "repair": {
      const from = state.get(action.id)?.version
      const to = action.to
      if (from === undefined || to === undefined || to === null) return false
      const notNewer = semver.valid(to) !== null && semver.valid(from) !== null && semver.lte(to, from)
      return notNewer || dependentsOutOfRange(action.id, to, state).length > 0
    }
    default:
      return false
  }
}

/** The installed state once `action` is applied. */
const afterAction = (
  state: Map<string, InstalledState>,
  action: PlanAction,
  candidates: ReadonlyMap<string, Candidate>
): void => {
  const current = state.get(action.id)
  switch (action.type) {
    case "remove":
      state.delete(action.id)
      return
    case "disable":
    case "enable":
      if (current !== undefined) state.set(action.id, { ...current, enabled: action.type === "enable" })
      return
    case "install":
    case "update":
      state.set(action.id, {
        version: action.to ?? current?.version ?? "",
        enabled: action.type === "install" ? action.enabled !== false : current?.enabled ?? false,
        dependencies: candidates.get(action.id)?.dependencies ?? current?.dependencies ?? {}
      })
      return
    default:
      return
  }
}

/**
 * The ordered actions with what the apply needs beyond their order: the extensions of this plan each
 * forward step depends on (its health gate waits for theirs), and `force` on exactly the steps that pass
 * through a state the lifecycle would refuse (docs/plan-format.md).
 */
const withApplyRelations = (
  ordered: ReadonlyArray<PlanAction>,
  actual: ReadonlyMap<string, ActualExtension>,
  candidates: ReadonlyMap<string, Candidate>,
  final: ReadonlyMap<string, EndState>
): ReadonlyArray<PlanAction> => {
  const changed = new Set(ordered.map((action) => action.id))
  const state = new Map<string, InstalledState>(
    [...actual].map(([id, installed]) => [id, { version: installed.version, enabled: installed.enabled, dependencies: installed.dependencies }])
  )
  return ordered.map((action) => {
    const force = refusedWithoutForce(action, state)
    afterAction(state, action, candidates)
    const dependsOn = action.type === "remove" || action.type === "disable"
      ? []
      : dependenciesThrough(action.id, final).filter((id) => changed.has(id))
    return {
      ...action,
      ...(dependsOn.length > 0 ? { depends_on: dependsOn } : {}),
      ...(force ? { force: true as const } : {})
    }
  })
}

/**
 * Plans the actions that take `actual` to `desired`. Problems (a source that does not satisfy its range,
 * an invalid setting, a protected removal, a dependency cycle) fail the whole plan.
 */
export const planActions = (
  desired: DesiredState,
  actual: ReadonlyMap<string, ActualExtension>,
  candidates: ReadonlyMap<string, Candidate>,
  options: PlanOptions
): Either.Either<PlannedActions, ReadonlyArray<Problem>> => {
  const draft: Draft = { problems: [], warnings: [], perExtension: new Map(), removals: [], disables: [], final: new Map() }
  for (const entry of desired.extensions) {
    const installed = actual.get(entry.id)
    if (entry._tag === "Absent") {
      planAbsent(draft, entry.id, installed, options)
      continue
    }
    const candidate = acceptedCandidate(draft, entry, candidates.get(entry.id))
    if (candidate === undefined) continue
    if (installed === undefined) planInstall(draft, entry, candidate, options)
    else planInstalled(draft, entry, installed, candidate, options)
  }
  const listed = new Set(desired.extensions.map((entry) => entry.id))
  // Only the unlisted are sorted: with every installed extension listed (a panel in sync) there is
  // nothing to order, and localeCompare over hundreds of ids was a tenth of planning.
  const unlisted = [...actual.entries()].filter(([id]) => !listed.has(id))
  for (const [id, installed] of unlisted.sort(([a], [b]) => a.localeCompare(b))) planUnlisted(draft, id, installed, options)
  checkDependencies(draft)
  const ordered = orderActions(draft, actual, candidates)
  return draft.problems.length > 0
    ? Either.left(draft.problems)
    : Either.right({ actions: withApplyRelations(ordered, actual, candidates, draft.final), warnings: draft.warnings })
}

const configureAction = (id: string, changes: ReadonlyArray<SettingChange>): PlanAction => ({
  type: "configure",
  id,
  reason: `settings differ: ${changes.map((change) => change.key).join(", ")}`,
  capabilities: diffCapabilities(noCapabilities, noCapabilities),
  settings: changes
})

/** The values a configure action writes: templates substituted from `env`. */
export const configuredValues = (
  action: PlanAction,
  env: PlanOptions["env"]
): Either.Either<Record<string, unknown>, string> => {
  const values: Record<string, unknown> = {}
  for (const change of action.settings ?? []) {
    const value = change.sensitive ? substituteEnv(change.to, env) : Either.right(change.to)
    if (Either.isLeft(value)) return Either.left(`${action.id} setting ${change.key}: ${value.left}`)
    values[change.key] = value.right
  }
  return Either.right(values)
}

