import { requirementChecks, type RuntimeVersions } from "../domain/Rules.js"
import type { RequiresReport } from "./Views.js"

/**
 * `requires` of a manifest or registry entry against this panel: the outcome of each range from the
 * one rule (domain/Rules.ts), and the sentences operations would report for it.
 */
export const requiresReport = (
  requires: Readonly<Record<string, string>> | undefined,
  versions: RuntimeVersions
): RequiresReport => {
  const checks = requirementChecks({ requires: requires ?? {} }, versions)
  const detailsOf = (outcome: "unmet" | "unknown") => checks.flatMap((check) => check.outcome === outcome ? [check.detail!] : [])
  const unmet = detailsOf("unmet")
  const ranges = Object.entries(requires ?? {}).map(([key, range]) => {
    const check = checks.find((candidate) => candidate.key === key)
    const actual = (versions as unknown as Readonly<Record<string, string | undefined>>)[key]
    return { key, range, actual: actual ?? null, ok: check?.outcome !== "unmet", detail: check?.detail ?? null }
  })
  return { ok: unmet.length === 0, unmet, warnings: detailsOf("unknown"), ranges }
}
