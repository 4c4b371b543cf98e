import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { formatBytes } from "../../domain/Bytes.js"
import { criticalFailures } from "../../runtime/Backend.js"
import { extensionTable } from "../../usecases/ExtensionView.js"
import { statusReport, type StatusReport } from "../../usecases/Status.js"
import { CliInvocation } from "../Invocation.js"
import { exitWith, formatPairs, formatTable, printJson } from "../Output.js"
import { operationsLayer } from "../Runtime.js"
import { panelReportPairs } from "./panelInstall.js"

// `host status`: the report is the use case's (usecases/Status.ts); this renders it.

/** Leftovers of interrupted work (docs/operations.md "Uploads and leftovers"), in one line. */
const leftoverText = (found: { readonly uploads: ReadonlyArray<{ readonly path: string; readonly bytes: number }>; readonly staging: ReadonlyArray<{ readonly path: string; readonly bytes: number }> }) => {
  const all = [...found.uploads, ...found.staging]
  if (all.length === 0) return "none"
  return `${all.map((leftover) => `${leftover.path} (${formatBytes(leftover.bytes)})`).join(", ")}; the next host command removes them`
}

type Pair = readonly [string, string]

const extensionsText = ({ corrupt, extensions, quarantined }: StatusReport) =>
  `${extensions.total} installed, ${extensions.enabled} enabled, ${extensions.disabled} disabled${
    quarantined > 0 ? `, ${quarantined} quarantined` : ""
  }${corrupt > 0 ? `, ${corrupt} corrupt` : ""}`

const registryText = ({ registry }: StatusReport) => {
  const cache = registry.cache
  return registry.url === null
    ? "not configured"
    : `${registry.url}, cache ${cache.status}${cache.age_seconds === null ? "" : ` (synced ${cache.age_seconds}s ago, ${cache.extensions} extensions)`}`
}

const lockText = ({ lock }: StatusReport) =>
  lock === null
    ? "free"
    : `held by ${lock.holder} (pid ${lock.pid} on ${lock.hostname}, ${lock.operation}, since ${lock.acquired_at}${
      lock.lease_expires_at === undefined ? "" : `, lease until ${lock.lease_expires_at}`
    }, id ${lock.id})`

/** Each kind of drift on its own, or how many trees were checked when none drifted. */
const driftText = ({ drift }: StatusReport) => {
  const parts = [
    drift.modified.length > 0 ? `modified: ${drift.modified.join(", ")}` : undefined,
    drift.missing.length > 0 ? `files missing: ${drift.missing.join(", ")}` : undefined,
    drift.unverifiable.length > 0 ? `unverifiable: ${drift.unverifiable.join(", ")}` : undefined,
    drift.linked.length > 0 ? `not checked, linked with host dev: ${drift.linked.join(", ")}` : undefined
  ].filter((part) => part !== undefined)
  return parts.length === 0 ? `none (${drift.checked} checked)` : parts.join("; ")
}

/** What the server on this root last reported, when one ran here: its replica and its event streams. */
const replicaPairs = ({ replica }: StatusReport): ReadonlyArray<Pair> => [
  ...(replica === undefined ? [] : [[
    "Replica",
    `server pid ${replica.server_pid} (${replica.server_running ? "running" : `not running; as of ${replica.reported_at}`}), converged to state generation ${replica.converged_generation} of ${replica.state_generation}; ${
      replica.unavailable.length === 0
        ? "every enabled extension available"
        : `unavailable on this replica: ${replica.unavailable.map((entry) => `${entry.id} (${entry.reason})`).join("; ")}`
    }`
  ] as const]),
  ...(replica?.event_streams === undefined ? [] : [[
    "Event streams",
    `${replica.event_streams.open} open (at most ${replica.event_streams.cap}, ${replica.event_streams.per_user} per user)`
  ] as const])
]

/** The first block of the report, one labelled line each. */
const summaryPairs = (report: StatusReport): ReadonlyArray<Pair> => [
  ["Host", report.version],
  ["Root", report.root],
  ["Database", `${report.database.url} (ok)`],
  ["Extensions", extensionsText(report)],
  ["Registry", registryText(report)],
  ["Artifacts", `${report.artifacts.count} archive(s), ${formatBytes(report.artifacts.bytes)} in ${report.artifacts.path}`],
  ["Lock", lockText(report)],
  ["Drift", driftText(report)],
  ["Leftovers", leftoverText(report.leftovers)],
  ...replicaPairs(report)
]

// The sections below each start with a blank line; undefined when there is nothing to show.

const panelSection = ({ panel }: StatusReport) =>
  panel.driver === "embedded"
    ? undefined
    : `\nPanel:\n${formatPairs(panelReportPairs(panel)).split("\n").map((line) => `  ${line}`).join("\n")}`

/** The three latest render errors of each extension, and how many more the JSON holds. */
const frontendErrorsSection = ({ frontendErrors }: StatusReport) => {
  const withErrors = Object.entries(frontendErrors)
  if (withErrors.length === 0) return undefined
  const lines = withErrors.flatMap(([id, list]) => [
    `${id}:`,
    ...list.slice(0, 3).map((entry) =>
      `  ${entry.lastAt}  ${entry.message}${entry.count > 1 ? ` (×${entry.count})` : ""}${entry.slot === undefined ? "" : ` in ${entry.slot}`} (v${entry.version}, ${entry.user})`
    ),
    ...(list.length > 3 ? [`  … ${list.length - 3} more (host status --json)`] : [])
  ])
  return `\nRecent frontend errors:\n${lines.join("\n")}`
}

const anchorsSection = ({ anchors }: StatusReport) => {
  if (anchors.length === 0) return undefined
  const lines = anchors.slice(0, 5).map((entry) => `  ${entry.lastAt}  ${entry.message}${entry.count > 1 ? ` (×${entry.count})` : ""}`)
  return `\nSlot anchors missing on the panel's pages:\n${lines.join("\n")}${anchors.length > 5 ? `\n  … ${anchors.length - 5} more (host status --json)` : ""}`
}

/** With `--extensions`: the table of installed extensions, then its notes (two sections). */
const installedSections = ({ installed }: StatusReport): ReadonlyArray<string> => {
  if (installed === undefined || installed.length === 0) return []
  const table = extensionTable(installed)
  return [`\n${formatTable(table.header, table.rows)}`, ...(table.notes.length > 0 ? [`\n${table.notes.join("\n")}`] : [])]
}

/** With `--health`: every check of every extension, or that there are none. */
const healthSection = ({ health }: StatusReport) => {
  if (health === undefined) return undefined
  const rows = health.flatMap((extension) =>
    extension.checks.map((check) => [
      extension.extensionId,
      check.id,
      `${check.status}${check.declared ? "" : " (undeclared)"}`,
      check.severity ?? "",
      check.message ?? ""
    ])
  )
  return rows.length === 0
    ? "\nHealth: no checks."
    : `\n${formatTable(["Extension", "Check", "Status", "Severity", "Message"], rows)}`
}

/** The report as text; a failing critical health check is said on stderr and exits 1. */
const printText = (report: StatusReport, critical: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    yield* Console.log(formatPairs(summaryPairs(report)))
    const sections = [panelSection(report), frontendErrorsSection(report), anchorsSection(report), ...installedSections(report), healthSection(report)]
    for (const section of sections) if (section !== undefined) yield* Console.log(section)
    if (critical.length > 0) {
      yield* Console.error(`error: status: critical health checks failing: ${critical.join(", ")}`)
      return yield* exitWith(1)
    }
  })

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
        Effect.provide(operationsLayer(invocation, { sweepLeftovers: false }))
      )
      // Only a run with --health has checks, so only it can fail on one.
      const critical = report.health === undefined ? [] : criticalFailures(report.health)
      if (json) {
        yield* printJson(report)
        return critical.length > 0 ? yield* exitWith(1) : undefined
      }
      return yield* printText(report, critical)
    })
).pipe(Command.withDescription("Show the framework version, database, extensions, registry cache, artifacts, lock and drift"))
