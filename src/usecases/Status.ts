import { Path } from "@effect/platform"
import { Clock, Effect, Option } from "effect"
import { ArtifactStore } from "../archive/ArtifactStore.js"
import { checkTree } from "../archive/Tree.js"
import { configuredRegistries, HostConfig } from "../config/HostConfig.js"
import { anchorReportId } from "../domain/FrontendErrors.js"
import { leftoverStaging, leftoverUploads } from "../lifecycle/Uploads.js"
import { PanelInstall } from "../panel/PanelInstall.js"
import { readCacheReport } from "../registry/CacheFile.js"
import { bootForCli, runHealthChecks } from "../runtime/Backend.js"
import { extensionStatus, extensionView } from "./ExtensionView.js"
import { readFrontendErrors } from "../runtime/FrontendErrors.js"
import { quarantineReason, readQuarantine } from "../runtime/Quarantine.js"
import { readEventStreamsReport, readReplicaReport } from "../runtime/ReplicaFiles.js"
import { CoreKeys, CoreRows } from "../store/CoreRows.js"
import { redactUrl } from "../store/Dialect.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { isDeadHolder, processAlive } from "../store/OperationLock.js"
import { StateGeneration } from "../store/StateGeneration.js"
import { panelReport } from "./PanelReport.js"

// `host status`'s read model: the framework, its database, extensions, registry cache, artifacts, lock,
// drift, leftovers, what the server on this root reported, and the real panel when there is one.

/**
 * What interrupted work left behind (docs/operations.md "Uploads and leftovers"): uploads of processes
 * that are gone and staging entries no journal entry names (while no live process holds the lock).
 * `status` reports them; the next other command's recovery removes them.
 */
const leftovers = (lockFree: boolean) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const { paths } = yield* HostConfig
    const relative = (list: ReadonlyArray<{ readonly path: string; readonly bytes: number }>) =>
      list.map((leftover) => ({ path: path.relative(paths.root, leftover.path), bytes: leftover.bytes }))
    return {
      uploads: relative(yield* leftoverUploads),
      staging: lockFree ? relative(yield* leftoverStaging) : []
    }
  })

/** Installed extensions whose files no longer match what was installed. */
const fileDrift = Effect.gen(function*() {
  const path = yield* Path.Path
  const { paths } = yield* HostConfig
  const installed = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.list)
  // A dev link is the author's working folder: it changes on every save, so it has no drift to report.
  const extensions = installed.filter((extension) => extension.source.type !== "dev-link")
  const results = yield* Effect.forEach(extensions, (extension) =>
    Effect.map(
      checkTree(path.join(paths.extensions, ...extension.extensionId.split("/"))),
      (integrity) => ({ id: extension.extensionId, integrity })
    ), { concurrency: 4 })
  return {
    checked: results.length,
    modified: results.filter((r) => r.integrity._tag === "Modified").map((r) => r.id),
    missing: results.filter((r) => r.integrity._tag === "Missing").map((r) => r.id),
    unverifiable: results.filter((r) => r.integrity._tag === "Unverifiable").map((r) => r.id),
    linked: installed.filter((extension) => extension.source.type === "dev-link").map((extension) => extension.extensionId)
  }
})

const readLock = Effect.flatMap(CoreRows, (rows) => rows.get(CoreKeys.operationLock)).pipe(Effect.map(Option.getOrNull))

/** What `host status` reports; `extensions` adds the installed extensions, `health` runs their health checks. */
export const statusReport = (options: { readonly extensions: boolean; readonly health: boolean }) =>
  Effect.gen(function*() {
    const { extensions: withExtensions, health } = options
    const { config, paths } = yield* HostConfig
    const installed = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.list)
    const quarantine = yield* readQuarantine
    // Render errors the bridge reported for installed extensions (docs/frontend.md "Diagnostics").
    const recorded = yield* readFrontendErrors
    const frontendErrors = Object.fromEntries(
      installed.flatMap((e) => {
        const list = recorded.get(e.extensionId)
        return list === undefined ? [] : [[e.extensionId, list] as const]
      })
    )
    // Slot anchors the bridge did not find on a real panel's pages (docs/panels.md "Slot maps").
    const anchors = recorded.get(anchorReportId) ?? []
    const lock = yield* readLock
    // What the server on this root last reported (docs/operations.md "Running replicas"), when one ran here.
    const replicaReport = yield* readReplicaReport
    // The server's open live-update streams (docs/http.md "Live updates: caps"): 0 when it is not running.
    const streamsReport = yield* readEventStreamsReport
    const streamsOpen = Option.match(streamsReport, {
      onNone: () => undefined,
      onSome: (streams) => ({ open: processAlive(streams.pid) ? streams.open : 0, cap: streams.cap, per_user: streams.per_user })
    })
    const replica = Option.isNone(replicaReport) ? {} : {
      replica: {
        server_pid: replicaReport.value.pid,
        server_running: processAlive(replicaReport.value.pid),
        reported_at: replicaReport.value.updated_at,
        state_generation: yield* Effect.flatMap(StateGeneration, (generation) => generation.current),
        converged_generation: replicaReport.value.state_generation,
        unavailable: replicaReport.value.unavailable,
        ...(streamsOpen === undefined ? {} : { event_streams: streamsOpen })
      }
    }
    return {
      version: config.version,
      root: paths.root,
      database: { url: redactUrl(config.database), ok: true },
      extensions: {
        total: installed.length,
        enabled: installed.filter((e) => e.enabled).length,
        disabled: installed.filter((e) => !e.enabled).length
      },
      // The first registry (docs/registry.md "Several registries"); registry:status lists them all.
      registry: { url: configuredRegistries(config)[0]?.url ?? null, cache: yield* readCacheReport },
      // The archives installs keep (docs/operations.md "Artifacts").
      artifacts: yield* Effect.flatMap(ArtifactStore, (store) => store.size),
      lock,
      // Leases aside: only a holder running on this host stages into this root.
      leftovers: yield* leftovers(lock === null || isDeadHolder(lock, yield* Clock.currentTimeMillis, false)),
      drift: yield* fileDrift,
      quarantined: installed.filter((e) => extensionStatus(e, quarantineReason(quarantine, e)).status === "quarantined").length,
      corrupt: installed.filter((e) => extensionStatus(e, undefined).status === "corrupt").length,
      frontendErrors,
      anchors,
      ...replica,
      // The real panel Host is installed into, when there is one (docs/panels.md).
      panel: yield* panelReport().pipe(Effect.provide(PanelInstall.Default)),
      ...(withExtensions ? { installed: installed.map((e) => extensionView(e, quarantine)) } : {}),
      ...(health ? { health: yield* Effect.flatMap(bootForCli, (generation) => runHealthChecks(generation)) } : {})
    }
  })

export type StatusReport = Effect.Effect.Success<ReturnType<typeof statusReport>>
