import { Schema } from "effect"
import { checkRequires, type RuntimeVersions } from "./Rules.js"

// The upgrade preflight's pure core (docs/operations.md#upgrade-preflight): for each desired extension,
// whether it still works on the panel and framework versions an operator is about to move to.
//
// - `ok`: what the plan leaves installed meets its `requires` on the target versions;
// - `update needed`: the installed version does not, but a version the desired state allows does
//   (the plan's own update, or a newer registry version within the desired range);
// - `blocked`: nothing the desired state allows does; `passing_version` names the newest registry
//   version that would pass, if there is one (outside the range: the desired state must change).

export const PreflightStatus = Schema.Literal("ok", "update needed", "blocked")
export type PreflightStatus = typeof PreflightStatus.Type

export const PreflightItem = Schema.Struct({
  id: Schema.String,
  status: PreflightStatus,
  /** The installed version, null when not installed. */
  installed: Schema.NullOr(Schema.String),
  /** The version the plan installs or keeps. */
  planned: Schema.String,
  /** `update needed`: the version to move to first. */
  target: Schema.NullOr(Schema.String),
  /** The unmet requirements that decided the status (empty for `ok`). */
  problems: Schema.Array(Schema.String),
  /** `blocked`: the newest registry version whose requirements pass on the target versions. */
  passing_version: Schema.NullOr(Schema.String)
})
export type PreflightItem = typeof PreflightItem.Type

export const PreflightReport = Schema.Struct({
  panel_version: Schema.NullOr(Schema.String),
  host_version: Schema.String,
  extensions: Schema.Array(PreflightItem),
  summary: Schema.Struct({ ok: Schema.Number, update_needed: Schema.Number, blocked: Schema.Number })
})
export type PreflightReport = typeof PreflightReport.Type

export interface VersionRequirements {
  readonly version: string
  readonly requires: Readonly<Record<string, string>>
}

export interface PreflightInput {
  readonly id: string
  readonly installed: VersionRequirements | undefined
  readonly planned: VersionRequirements
  /** The newest version the desired state allows that passes (registry sources), when the planned one does not. */
  readonly passingInRange: string | undefined
  /** The newest registry version that passes, whatever the range. */
  readonly passingAny: string | undefined
}

/** Which requirements of `requires` fail on `versions` (unknown versions do not fail here, as at install). */
export const unmetOn = (requires: Readonly<Record<string, string>>, versions: RuntimeVersions): ReadonlyArray<string> =>
  checkRequires({ requires }, versions).unmet

export const preflightItem = (input: PreflightInput, versions: RuntimeVersions): PreflightItem => {
  const plannedUnmet = unmetOn(input.planned.requires, versions)
  const installedUnmet = input.installed === undefined ? [] : unmetOn(input.installed.requires, versions)
  const base = { id: input.id, installed: input.installed?.version ?? null, planned: input.planned.version }
  if (plannedUnmet.length > 0) {
    if (input.passingInRange !== undefined && input.passingInRange !== input.planned.version) {
      return { ...base, status: "update needed", target: input.passingInRange, problems: plannedUnmet, passing_version: input.passingInRange }
    }
    return { ...base, status: "blocked", target: null, problems: plannedUnmet, passing_version: input.passingAny ?? null }
  }
  if (input.installed !== undefined && installedUnmet.length > 0) {
    return { ...base, status: "update needed", target: input.planned.version, problems: installedUnmet, passing_version: input.planned.version }
  }
  return { ...base, status: "ok", target: null, problems: [], passing_version: null }
}

export const summarizePreflight = (items: ReadonlyArray<PreflightItem>): PreflightReport["summary"] => ({
  ok: items.filter((item) => item.status === "ok").length,
  update_needed: items.filter((item) => item.status === "update needed").length,
  blocked: items.filter((item) => item.status === "blocked").length
})

/** Why an item is not ok, and for a blocked one which registry version would pass. */
const explanation = (item: PreflightItem): string => {
  const why = item.problems.length === 0 ? "" : `: ${item.problems.join("; ")}`
  const passing = item.status !== "blocked"
    ? ""
    : item.passing_version === null
    ? "; no registry version passes"
    : `; ${item.passing_version} would pass (change the desired version to allow it)`
  return `${why}${passing}`
}

/** The blocked items with their reasons, as a markdown plan calls them out (reconcile/PlanRender). */
export const blockedItems = (report: PreflightReport): ReadonlyArray<{ readonly id: string; readonly reason: string }> =>
  report.extensions
    .filter((item) => item.status === "blocked")
    .map((item) => ({ id: item.id, reason: `${item.planned}${explanation(item)}` }))

export const formatPreflight = (report: PreflightReport): string => {
  const width = Math.max(...report.extensions.map((item) => item.status.length), 2)
  const line = (item: PreflightItem) => {
    const versions = item.status === "update needed"
      ? `${item.installed ?? item.planned} → ${item.target}`
      : item.planned
    return `  ${item.status.padEnd(width)}  ${item.id} ${versions}${explanation(item)}`
  }
  const { summary } = report
  return [
    `Preflight for panel ${report.panel_version ?? "(unknown)"} and host ${report.host_version}:`,
    ...(report.extensions.length === 0 ? ["  (no extensions desired)"] : report.extensions.map(line)),
    `Preflight: ${summary.ok} ok, ${summary.update_needed} update needed, ${summary.blocked} blocked.`
  ].join("\n")
}
