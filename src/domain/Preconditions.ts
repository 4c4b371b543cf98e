import { Either } from "effect"
import semver from "semver"
import type { ManifestDocument } from "./Manifest.js"
import {
  checkRequires,
  dependencyProblems,
  dependentsOutOfRange,
  enabledDependents,
  type InstalledState,
  type RuntimeVersions
} from "./Rules.js"

// What each operation checks before it changes anything (docs/architecture.md "One install", step 3),
// as pure functions of what is installed and what was asked: the CLI, the admin API and the reconciler
// get the same refusal, in the same words, from the same rule. The lifecycle turns a refusal into
// OperationRefused and a pass into the operation.

export type RefusalReason = "already-installed" | "not-installed" | "not-newer" | "requirements" | "dependencies" | "dependents"

/** Why an operation will not run. */
export interface Refusal {
  readonly reason: RefusalReason
  readonly detail: string
  readonly hint?: string
}

/** What an install or update may go on with: whether it ends enabled, and what it should warn about. */
export interface InstallPass {
  readonly enabled: boolean
  readonly warnings: ReadonlyArray<string>
}

export interface InstallRequest {
  readonly operation: "add" | "update"
  /** The staged manifest. */
  readonly document: Pick<ManifestDocument, "id" | "version" | "requires" | "dependencies">
  /** The source as the user named it (for hints). */
  readonly source: string
  /** The installed record of the same id, if any. */
  readonly existing: { readonly version: string; readonly enabled: boolean } | undefined
  readonly force: boolean
  /** Install (or keep) it disabled. */
  readonly disabled: boolean
  readonly versions: RuntimeVersions
  readonly installed: ReadonlyMap<string, InstalledState>
}

/**
 * `add` and `update`: an add of an installed id, an update of one that is not installed, an update that
 * is not newer (without force), unmet `requires`, dependencies that do not hold for an enabled result,
 * and enabled dependents that need another version (without force) are refused, in that order.
 */
export const installPreconditions = (request: InstallRequest): Either.Either<InstallPass, Refusal> => {
  const { document, existing, force, operation } = request
  const { id, version } = document
  if (operation === "add" && existing !== undefined && !force) {
    return Either.left({
      reason: "already-installed",
      detail: `already installed (v${existing.version}); use host update or --force`,
      hint: `use host update ${id} --source ${request.source} or host add --force`
    })
  }
  if (operation === "update" && existing === undefined) {
    return Either.left({ reason: "not-installed", detail: "it is not installed", hint: `use host add ${request.source}` })
  }
  // An update moves forward; the same version again or an older one is asked for with --force.
  if (
    operation === "update" && existing !== undefined && !force &&
    semver.valid(version) !== null && semver.valid(existing.version) !== null && semver.lte(version, existing.version)
  ) {
    return Either.left({
      reason: "not-newer",
      detail: version === existing.version
        ? `already at v${version}; use --force to reinstall it`
        : `v${version} is older than the installed v${existing.version}; use --force to downgrade`
    })
  }
  const requirements = checkRequires(document, request.versions)
  if (requirements.unmet.length > 0) return Either.left({ reason: "requirements", detail: requirements.unmet.join("; ") })
  const enabled = request.disabled ? false : existing === undefined ? true : existing.enabled
  if (enabled) {
    const problems = dependencyProblems(document, request.installed)
    if (problems.length > 0) {
      return Either.left({
        reason: "dependencies",
        detail: problems.join("; "),
        hint: "install and enable its dependencies first, or add it with --disabled"
      })
    }
  }
  const brokenDependents = dependentsOutOfRange(id, version, request.installed)
  if (brokenDependents.length > 0 && !force) {
    return Either.left({
      reason: "dependents",
      detail: `enabled extensions need another version of it: ${brokenDependents.join(", ")}`,
      hint: "use --force to install it anyway"
    })
  }
  return Either.right({
    enabled,
    warnings: [
      ...requirements.warnings,
      ...(brokenDependents.length > 0 ? [`dependents that need another version: ${brokenDependents.join(", ")}`] : [])
    ]
  })
}

/** `enable`: the stored manifest must be readable (`corrupt` says why it is not) and its dependencies hold. */
export const enablePreconditions = (
  document: Pick<ManifestDocument, "dependencies"> | undefined,
  corrupt: string | undefined,
  installed: ReadonlyMap<string, InstalledState>
): Either.Either<{ readonly warnings: ReadonlyArray<string> }, Refusal> => {
  const problems = document === undefined ? [corrupt ?? "its stored manifest cannot be read"] : dependencyProblems(document, installed)
  return problems.length > 0 ? Either.left({ reason: "dependencies", detail: problems.join("; ") }) : Either.right({ warnings: [] })
}

/** `disable` and `remove` of `id`: refused while enabled extensions depend on it, unless forced. */
export const withdrawPreconditions = (
  operation: "disable" | "remove",
  id: string,
  installed: ReadonlyMap<string, InstalledState>,
  force: boolean
): Either.Either<{ readonly warnings: ReadonlyArray<string> }, Refusal> => {
  const dependents = enabledDependents(id, installed)
  if (dependents.length === 0) return Either.right({ warnings: [] })
  if (!force) {
    return Either.left({
      reason: "dependents",
      detail: `enabled extensions depend on it: ${dependents.join(", ")}`,
      hint: operation === "remove" ? "remove or disable them first, or use --force" : "disable them first, or use --force"
    })
  }
  return Either.right({ warnings: [`enabled dependents will lose it: ${dependents.join(", ")}`] })
}
