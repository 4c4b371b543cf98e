import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { formatBytes } from "../../domain/Bytes.js"
import { criticalFailures } from "../../runtime/Backend.js"
import { extensionTable } from "../../usecases/ExtensionView.js"
import { statusReport } from "../../usecases/Status.js"
import { CliInvocation } from "../Invocation.js"
import { exitWith, formatPairs, formatTable, printJson } from "../Output.js"
import { storeLayer } from "../Runtime.js"
import { panelReportPairs } from "./panelInstall.js"

// `host status`: the report is the use case's (usecases/Status.ts); this renders it.

/** Leftovers of interrupted work (docs/operations.md "Uploads and leftovers"), in one line. */
const leftoverText = (found: { readonly uploads: ReadonlyArray<{ readonly path: string; readonly bytes: number }>; readonly staging: ReadonlyArray<{ readonly path: string; readonly bytes: number }> }) => {
  const all = [...found.uploads, ...found.staging]
  if (all.length === 0) return "none"
  return `${all.map((leftover) => `${leftover.path} (${formatBytes(leftover.bytes)})`).join(", ")}; the next host command removes them`
}

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
      const report = yield* statusReport({ extensions: withExtensions, health }).pipe(
        Effect.provide(storeLayer(invocation, { sweepLeftovers: false }))
      )
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
