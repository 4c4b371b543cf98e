import semver from "semver"
import type { ManifestDocument } from "./Manifest.js"

// Install-time rules as pure functions: `requires` ranges and dependencies between extensions.

/** The versions `requires` ranges are checked against, one per requirement key. */
export interface RuntimeVersions {
  readonly host: string
  readonly panel: string | undefined
  readonly php: string | undefined
  readonly "node": string
}

export interface RuleOutcome {
  readonly unmet: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
}

const coerce = (version: string) => semver.valid(version) ?? semver.coerce(version)?.version ?? undefined

/** One `requires` range against the version in use: met, unmet (refuses) or unknown (warns). */
export interface RequirementCheck {
  readonly key: keyof RuntimeVersions
  readonly range: string
  readonly actual: string | undefined
  readonly outcome: "met" | "unmet" | "unknown"
  /** The sentence an unmet or unknown outcome is reported with; undefined when met. */
  readonly detail: string | undefined
}

/**
 * Each `requires.{host,panel,php,node}` range with its outcome, as data: the admin's requirement table
 * reads these fields, and `checkRequires` renders the same checks as the sentences operations report.
 */
export const requirementChecks = (
  document: Pick<ManifestDocument, "requires">,
  versions: RuntimeVersions
): ReadonlyArray<RequirementCheck> =>
  (["host", "panel", "php", "node"] as const).flatMap((key): ReadonlyArray<RequirementCheck> => {
    const range = document.requires?.[key]
    if (range === undefined) return []
    const actual = versions[key]
    const version = actual === undefined ? undefined : coerce(actual)
    if (version === undefined) {
      return [{ key, range, actual, outcome: "unknown", detail: `requires.${key} "${range}" cannot be checked: the ${key} version is unknown` }]
    }
    if (!semver.satisfies(version, range, { includePrerelease: true })) {
      return [{ key, range, actual, outcome: "unmet", detail: `requires.${key} "${range}" is not met by ${key} ${actual}` }]
    }
    return [{ key, range, actual, outcome: "met", detail: undefined }]
  })

/** `requires.{host,panel,php,node}` against the versions in use: an unmet range refuses, an unknown version warns. */
export const checkRequires = (document: Pick<ManifestDocument, "requires">, versions: RuntimeVersions): RuleOutcome => {
  const checks = requirementChecks(document, versions)
  return {
    unmet: checks.flatMap((check) => check.outcome === "unmet" ? [check.detail!] : []),
    warnings: checks.flatMap((check) => check.outcome === "unknown" ? [check.detail!] : [])
  }
}

export interface InstalledState {
  readonly version: string
  readonly enabled: boolean
  readonly dependencies: Readonly<Record<string, string>>
}

/**
 * Why the dependencies of `document` do not hold among `installed`: missing, disabled, out of range, or
 * — given the ids the runtime could not load — quarantined. The one dependency check: an operation
 * refuses with these words, the runtime quarantines with them, the admin's preview shows them.
 */
export const dependencyProblems = (
  document: Pick<ManifestDocument, "dependencies">,
  installed: ReadonlyMap<string, Pick<InstalledState, "version" | "enabled">>,
  quarantined: ReadonlySet<string> | ReadonlyMap<string, unknown> = new Set()
): ReadonlyArray<string> =>
  Object.entries(document.dependencies ?? {}).flatMap(([id, range]) => {
    const dependency = installed.get(id)
    if (dependency === undefined) return [`dependency ${id} (${range}) is not installed`]
    if (!dependency.enabled) return [`dependency ${id} is disabled`]
    if (!semver.satisfies(dependency.version, range, { includePrerelease: true })) {
      return [`dependency ${id} is at ${dependency.version}, which does not satisfy ${range}`]
    }
    if (quarantined.has(id)) return [`dependency ${id} is quarantined`]
    return []
  })

/** Enabled extensions that declare a dependency on `id`. */
export const enabledDependents = (id: string, installed: ReadonlyMap<string, InstalledState>): ReadonlyArray<string> =>
  [...installed.entries()]
    .filter(([other, state]) => other !== id && state.enabled && id in state.dependencies)
    .map(([other]) => other)
    .sort()

/** Enabled extensions whose dependency range on `id` does not accept `version`. */
export const dependentsOutOfRange = (
  id: string,
  version: string,
  installed: ReadonlyMap<string, InstalledState>
): ReadonlyArray<string> =>
  enabledDependents(id, installed).filter((dependent) => {
    const range = installed.get(dependent)!.dependencies[id]!
    return !semver.satisfies(version, range, { includePrerelease: true })
  })

/**
 * Orders ids so that every dependency comes before its dependents (ids not in `dependencies` keep
 * their relative order). Returns the ids caught in a cycle separately.
 */
export const dependencyOrder = (
  ids: ReadonlyArray<string>,
  dependenciesOf: (id: string) => ReadonlyArray<string>
): { readonly order: ReadonlyArray<string>; readonly cycle: ReadonlyArray<string> } => {
  const members = new Set(ids)
  const order: Array<string> = []
  const state = new Map<string, "visiting" | "done">()
  const cycle = new Set<string>()
  const visit = (id: string, path: ReadonlyArray<string>) => {
    const seen = state.get(id)
    if (seen === "done") return
    if (seen === "visiting") {
      path.slice(path.indexOf(id)).forEach((member) => cycle.add(member))
      return
    }
    state.set(id, "visiting")
    for (const dependency of dependenciesOf(id)) if (members.has(dependency)) visit(dependency, [...path, id])
    state.set(id, "done")
    order.push(id)
  }
  for (const id of ids) visit(id, [])
  return { order: order.filter((id) => !cycle.has(id)), cycle: [...cycle].sort() }
}
