import type { FileSystem, Path } from "@effect/platform"
import { Effect, Either } from "effect"
import { join } from "node:path"
import type { ArtifactStore } from "../archive/ArtifactStore.js"
import { cachedTreeHashes, TreeHashing } from "../archive/TreeCache.js"
import { HostConfig } from "../config/HostConfig.js"
import type { DesiredExtension, DesiredState } from "../domain/DesiredState.js"
import type { ActualExtension, Candidate } from "../domain/Plan.js"
import type { Problem } from "../domain/Problems.js"
import type { ModuleLoader } from "../kernel/ModuleLoader.js"
import type { Panel } from "../panel/Panel.js"
import type { Registry } from "../registry/Registry.js"
import type { CoreRows } from "../store/CoreRows.js"
import type { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import type { SettingsRepo } from "../store/SettingsRepo.js"
import {
  type Detail,
  readKeptArchiveCandidate,
  readPathCandidate,
  readRegistryCandidate,
  type SourceUnavailable
} from "./Inputs.js"

// What the desired sources provide, read for the planner and the upgrade preflight alike
// (docs/architecture.md "One reconcile", step 2).

/** What planning reads: the installed records and trees, the sources, the registry and the artifacts. */
export type PlanningContext =
  | FileSystem.FileSystem
  | Path.Path
  | HostConfig
  | ExtensionsRepo
  | SettingsRepo
  | CoreRows
  | Panel
  | ModuleLoader
  | ArtifactStore
  | Registry

export type PresentEntry = Extract<DesiredExtension, { _tag: "Present" }>

/** The entries the desired state wants installed (all, or those named in `only`). */
export const presentEntries = (state: DesiredState, only?: ReadonlySet<string>): ReadonlyArray<PresentEntry> =>
  state.extensions.filter((entry): entry is PresentEntry => entry._tag === "Present" && (only === undefined || only.has(entry.id)))

/**
 * Planning reads every installed tree and every folder source: their hashes are remembered between runs
 * under storage/host/cache (archive/TreeCache), so a panel in sync is planned from one stat per entry.
 */
export const withTreeCache = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | HostConfig> =>
  Effect.scoped(
    Effect.flatMap(HostConfig, ({ paths }) =>
      Effect.provideServiceEffect(effect, TreeHashing, cachedTreeHashes(join(paths.storage, "cache", "trees.json"))))
  )

const readCandidate = (
  entry: PresentEntry,
  actual: ReadonlyMap<string, ActualExtension>,
  detail: Detail
): Effect.Effect<Candidate, SourceUnavailable, PlanningContext> =>
  entry.source._tag === "Path"
    ? readPathCandidate(entry.id, entry.source.path, detail, actual.get(entry.id))
    : entry.source._tag === "Archive"
    ? readKeptArchiveCandidate(entry.id, entry.source.archive, entry.source.sha256)
    : readRegistryCandidate(entry.id, entry.version, actual.get(entry.id), detail, entry.source.registry)

/** What each present entry's source provides; failures are collected, not thrown one by one. */
export const readCandidates = (
  state: DesiredState,
  actual: ReadonlyMap<string, ActualExtension>,
  detail: Detail,
  only?: ReadonlySet<string>
) =>
  Effect.gen(function*() {
    const present = presentEntries(state, only)
    // Folders are read synchronously, so they go one after another; archives and registry downloads
    // wait on I/O and are read a few at a time.
    const outcomes = yield* Effect.forEach(
      present,
      (entry) => Effect.either(readCandidate(entry, actual, detail)),
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
  }).pipe(Effect.withSpan("Reconcile.readCandidates", { attributes: { detail } }))
