import { Command, Options } from "@effect/cli"
import { Path } from "@effect/platform"
import { Clock, Console, Effect, Option } from "effect"
import { ArtifactStore } from "../../archive/ArtifactStore.js"
import { checkTree } from "../../archive/Tree.js"
import { HostConfig } from "../../config/HostConfig.js"
import { readCacheReport } from "../../registry/CacheFile.js"
import { ExtensionsRepo } from "../../store/ExtensionsRepo.js"
import { CoreKeys, CoreRows } from "../../store/CoreRows.js"
import { CliInvocation } from "../Invocation.js"
import { exitWith, formatPairs, formatTable, printJson } from "../Output.js"
import { bootForCli, criticalFailures, runHealthChecks } from "../../runtime/Backend.js"
import { storeLayer } from "../Runtime.js"
import { redactUrl } from "../../store/Dialect.js"
import { quarantineReason, readQuarantine } from "../../runtime/Quarantine.js"
import { extensionStatus, extensionTable, extensionView } from "../../runtime/ExtensionView.js"
import { readFrontendErrors } from "../../runtime/FrontendErrors.js"
import { anchorReportId } from "../../domain/FrontendErrors.js"

import { readEventStreamsReport, readReplicaReport } from "../../runtime/ReplicaFiles.js"
import { StateGeneration } from "../../store/StateGeneration.js"
import { isDeadHolder, processAlive } from "../../store/OperationLock.js"
import { leftoverStaging, leftoverUploads } from "../../lifecycle/Uploads.js"
import { formatBytes } from "../../domain/Bytes.js"
import { PanelInstall } from "../../panel/PanelInstall.js"
import { panelReport, panelReportPairs } from "./panelInstall.js"

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

const leftoverText = (found: { readonly uploads: ReadonlyArray<{ readonly path: string; readonly bytes: number }>; readonly staging: ReadonlyArray<{ readonly path: string; readonly bytes: number }> }) => {
  const all = [...found.uploads, ...found.staging]
  if (all.length === 0) return "none"
  return `${all.map((leftover) => `${leftover.path} (${formatBytes(leftover.bytes)})`).join(", ")}; the next host command removes them`
}

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

export const statusCommand = Command.make(
  "status",
  {
    json: Options.boolean("json").pipe(Options.withDescription("print one JSON document")),
    health: Options.boolean("health").pipe(
      Options.withDescription("run the extensions' health checks (exit 1 when a critical one is in error)")
    ),
    extensions: Options.boolean("extensions").pipe(Options.withDescription("include the installed extensions"))
  },
  ({ extensions: withExtensions, health, json }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const report = yield* Effect.gen(function*() {
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
          registry: { url: config.registry_url === "" ? null : config.registry_url, cache: yield* readCacheReport },
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
      }).pipe(Effect.provide(storeLayer(invocation, { sweepLeftovers: false })))
      const critical = report.health === undefined ? [] : criticalFailures(report.health)
      if (json) {
        yield* printJson(report)
        return critical.length > 0 ? yield* exitWith(1) : undefined
      }
      const cache = report.registry.cache
      const drift = report.drift
      const driftText = [
        drift.modified.length > 0 ? `modified: ${drift.modified.join(", ")}` : undefined,
        drift.missing.length > 0 ? `files missing: ${drift.missing.join(", ")}` : undefined,
        drift.unverifiable.length > 0 ? `unverifiable: ${drift.unverifiable.join(", ")}` : undefined,
        drift.linked.length > 0 ? `not checked, linked with host dev: ${drift.linked.join(", ")}` : undefined
      ].filter((part) => part !== undefined)
      yield* Console.log(formatPairs([
        ["Host", report.version],
        ["Root", report.root],
        ["Database", `${report.database.url} (ok)`],
        [
          "Extensions",
          `${report.extensions.total} installed, ${report.extensions.enabled} enabled, ${report.extensions.disabled} disabled${
            report.quarantined > 0 ? `, ${report.quarantined} quarantined` : ""
          }${report.corrupt > 0 ? `, ${report.corrupt} corrupt` : ""}`
        ],
        [
          "Registry",
          report.registry.url === null
            ? "not configured"
            : `${report.registry.url}, cache ${cache.status}${cache.age_seconds === null ? "" : ` (synced ${cache.age_seconds}s ago, ${cache.extensions} extensions)`}`
        ],
        [
          "Artifacts",
          `${report.artifacts.count} archive(s), ${formatBytes(report.artifacts.bytes)} in ${report.artifacts.path}`
        ],
        [
          "Lock",
          report.lock === null
            ? "free"
            : `held by ${report.lock.holder} (pid ${report.lock.pid} on ${report.lock.hostname}, ${report.lock.operation}, since ${report.lock.acquired_at}${
              report.lock.lease_expires_at === undefined ? "" : `, lease until ${report.lock.lease_expires_at}`
            }, id ${report.lock.id})`
        ],
        ["Drift", driftText.length === 0 ? `none (${drift.checked} checked)` : driftText.join("; ")],
        ["Leftovers", leftoverText(report.leftovers)],
        ...(report.replica === undefined ? [] : [[
          "Replica",
          `server pid ${report.replica.server_pid} (${report.replica.server_running ? "running" : `not running; as of ${report.replica.reported_at}`}), converged to state generation ${report.replica.converged_generation} of ${report.replica.state_generation}; ${
            report.replica.unavailable.length === 0
              ? "every enabled extension available"
              : `unavailable on this replica: ${report.replica.unavailable.map((entry) => `${entry.id} (${entry.reason})`).join("; ")}`
          }`
        ] as const]),
        ...(report.replica?.event_streams === undefined ? [] : [[
          "Event streams",
          `${report.replica.event_streams.open} open (at most ${report.replica.event_streams.cap}, ${report.replica.event_streams.per_user} per user)`
        ] as const])
      ]))
      if (report.panel.driver !== "embedded") {
        yield* Console.log(`\nPanel:\n${formatPairs(panelReportPairs(report.panel)).split("\n").map((line) => `  ${line}`).join("\n")}`)
      }
      const withErrors = Object.entries(report.frontendErrors)
      if (withErrors.length > 0) {
        const lines = withErrors.flatMap(([id, list]) => [
          `${id}:`,
          ...list.slice(0, 3).map((entry) =>
            `  ${entry.lastAt}  ${entry.message}${entry.count > 1 ? ` (×${entry.count})` : ""}${entry.slot === undefined ? "" : ` in ${entry.slot}`} (v${entry.version}, ${entry.user})`
          ),
          ...(list.length > 3 ? [`  … ${list.length - 3} more (host status --json)`] : [])
        ])
        yield* Console.log(`\nRecent frontend errors:\n${lines.join("\n")}`)
      }
      if (report.anchors.length > 0) {
        const lines = report.anchors.slice(0, 5).map((entry) => `  ${entry.lastAt}  ${entry.message}${entry.count > 1 ? ` (×${entry.count})` : ""}`)
        yield* Console.log(`\nSlot anchors missing on the panel's pages:\n${lines.join("\n")}${report.anchors.length > 5 ? `\n  … ${report.anchors.length - 5} more (host status --json)` : ""}`)
      }
      if (report.installed !== undefined && report.installed.length > 0) {
        const table = extensionTable(report.installed)
        yield* Console.log(`\n${formatTable(table.header, table.rows)}`)
        if (table.notes.length > 0) yield* Console.log(`\n${table.notes.join("\n")}`)
      }
      if (report.health !== undefined) {
        const rows = report.health.flatMap((extension) =>
          extension.checks.map((check) => [
            extension.extensionId,
            check.id,
            `${check.status}${check.declared ? "" : " (undeclared)"}`,
            check.severity ?? "",
            check.message ?? ""
          ])
        )
        yield* Console.log(rows.length === 0
          ? "\nHealth: no checks."
          : `\n${formatTable(["Extension", "Check", "Status", "Severity", "Message"], rows)}`)
        if (critical.length > 0) {
          yield* Console.error(`error: status: critical health checks failing: ${critical.join(", ")}`)
          return yield* exitWith(1)
        }
      }
    })
).pipe(Command.withDescription("Show the framework version, database, extensions, registry cache, artifacts, lock and drift"))
