import { Effect, Either, Option } from "effect"
import semver from "semver"
import { manifestOf } from "../domain/Installed.js"
import type { ActualExtension, Candidate } from "../domain/Plan.js"
import { type PreflightReport, preflightItem, summarizePreflight, unmetOn, type VersionRequirements } from "../domain/Preflight.js"
import { availableVersions } from "../domain/Registry.js"
import type { RuntimeVersions } from "../domain/Rules.js"
import { Registry } from "../registry/Registry.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { type PresentEntry, presentEntries, readCandidates } from "./Candidates.js"
import { PlanInvalid } from "./Errors.js"
import { inspectRegistryVersion, readActual, readDesiredFile } from "./Inputs.js"

// The registry side of the upgrade preflight (docs/operations.md#upgrade-preflight): which offered
// version of an extension would still work on the target versions. The index does not carry every
// version's `requires`, so each version's archive is fetched (newest first, stopping as soon as the
// answer is known) and its manifest read in memory; nothing is written.

export interface PassingVersions {
  /** The newest offered version that passes. */
  readonly any: string | undefined
  /** The newest offered version within `range` that passes (any version when there is no range). */
  readonly inRange: string | undefined
}

const none: PassingVersions = { any: undefined, inRange: undefined }

/** The `requires` of one registry version, read from its archive; None when it cannot be read. */
const requirementsOf = (registry: Registry["Type"], id: string, version: string) =>
  Effect.gen(function*() {
    const resolved = yield* registry.resolve({ id, range: version })
    const { inspection } = yield* inspectRegistryVersion(registry, resolved)
    return Option.fromNullable(inspection.manifest.decoded?.document.requires ?? (inspection.manifest.decoded === undefined ? undefined : {}))
  }).pipe(
    Effect.catchAll((error) =>
      Effect.as(Effect.logWarning(`preflight: ${id} ${version} from the registry cannot be checked: ${error.message}`), Option.none()))
  )

export const passingRegistryVersions = (id: string, range: string | undefined, versions: RuntimeVersions) =>
  Effect.gen(function*() {
    const registry = yield* Registry
    if (registry.url === "") return none
    const index = yield* Effect.either(registry.index)
    if (Either.isLeft(index)) return none
    const entry = index.right.index.extensions.find((candidate) => candidate.id === id)
    if (entry === undefined) return none
    const inside = (version: string) => range === undefined || semver.satisfies(version, range, { includePrerelease: true })
    let any: string | undefined
    let inRange: string | undefined
    for (const version of availableVersions(entry)) {
      if (any !== undefined && inRange !== undefined) break
      // Once some version passes, only a passing version inside the range is still of interest.
      if (any !== undefined && !inside(version)) continue
      const requires = yield* requirementsOf(registry, id, version)
      if (Option.isNone(requires) || unmetOn(requires.value, versions).length > 0) continue
      any ??= version
      if (inside(version)) inRange ??= version
    }
    return { any, inRange } satisfies PassingVersions
  })

/** One desired extension against the target versions: installed, planned, and what would pass instead. */
const preflightOf = (
  entry: PresentEntry,
  candidate: Candidate,
  installedNow: VersionRequirements | undefined,
  versions: RuntimeVersions
) =>
  Effect.gen(function*() {
    // A candidate read from the installed record (in sync) has the installed requirements.
    const planned = {
      version: candidate.version,
      requires: candidate.requires ?? (candidate.version === installedNow?.version ? installedNow.requires : {})
    }
    const passing = unmetOn(planned.requires, versions).length > 0
      ? yield* passingRegistryVersions(entry.id, entry.version, versions)
      : none
    return preflightItem({
      id: entry.id,
      installed: installedNow,
      planned,
      passingInRange: entry.source._tag === "Registry" ? passing.inRange : undefined,
      passingAny: passing.any
    }, versions)
  })

/** The upgrade preflight: each desired extension checked against other panel and framework versions. */
export const preflightReport = (request: { readonly file: string }, versions: RuntimeVersions) =>
  Effect.gen(function*() {
    const desired = yield* readDesiredFile(request.file)
    const actual: ReadonlyMap<string, ActualExtension> = yield* readActual("light")
    const { candidates, problems } = yield* readCandidates(desired.state, actual, "light")
    if (problems.length > 0) return yield* new PlanInvalid({ file: desired.file, problems })
    // The installed manifests' `requires`, as recorded at install.
    const recorded = new Map((yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.list)).map((record) =>
      [record.extensionId, manifestOf(record)?.document.requires ?? {}] as const))
    const items = yield* Effect.forEach(presentEntries(desired.state), (entry) => {
      const installed = actual.get(entry.id)
      const installedNow = installed === undefined
        ? undefined
        : { version: installed.version, requires: recorded.get(entry.id) ?? {} }
      return preflightOf(entry, candidates.get(entry.id)!, installedNow, versions)
    })
    return {
      panel_version: versions.panel ?? null,
      host_version: versions.host,
      extensions: items,
      summary: summarizePreflight(items)
    } satisfies PreflightReport
  })
