// `host doctor`'s report (docs/operations.md "host doctor"): per extension, one verdict per check of the
// load failures and misalignments an admin meets ("the extension does not show up", "routes 404"), each
// with what was seen and what to do. Pure: lifecycle/Doctor.ts gathers the facts, the CLI and the admin
// API print this same shape.

export type Verdict = "ok" | "warning" | "fail"

export interface DoctorCheck {
  /** Stable id (`id`, `routes`, `bundle`, …), for scripts reading --json. */
  readonly id: string
  readonly verdict: Verdict
  /** What was seen: paths, ids, reasons. */
  readonly evidence: string
  /** What to do about it; empty when there is nothing to do. */
  readonly fix: string
}

export interface DoctorSection {
  /** An extension id, or `host` for the framework's own checks (the panel include and routing). */
  readonly subject: string
  readonly version: string | null
  readonly checks: ReadonlyArray<DoctorCheck>
}

export interface DoctorReport {
  readonly sections: ReadonlyArray<DoctorSection>
  readonly summary: { readonly ok: number; readonly warning: number; readonly fail: number }
  /** False when any check fails (`host doctor` exits 1). */
  readonly healthy: boolean
}

export const ok = (id: string, evidence: string): DoctorCheck => ({ id, verdict: "ok", evidence, fix: "" })
export const warning = (id: string, evidence: string, fix: string): DoctorCheck => ({ id, verdict: "warning", evidence, fix })
export const fail = (id: string, evidence: string, fix: string): DoctorCheck => ({ id, verdict: "fail", evidence, fix })

export const doctorReport = (sections: ReadonlyArray<DoctorSection>): DoctorReport => {
  const all = sections.flatMap((section) => section.checks)
  const count = (verdict: Verdict) => all.filter((check) => check.verdict === verdict).length
  const summary = { ok: count("ok"), warning: count("warning"), fail: count("fail") }
  return { sections, summary, healthy: summary.fail === 0 }
}

const marks: Readonly<Record<Verdict, string>> = { ok: "ok  ", warning: "warn", fail: "FAIL" }

/** The text `host doctor` prints: a block per extension, a line per check, the fix under what failed. */
export const formatDoctorReport = (report: DoctorReport): string => {
  const width = Math.max(0, ...report.sections.flatMap((section) => section.checks.map((check) => check.id.length)))
  const blocks = report.sections.map((section) => {
    const failing = section.checks.filter((check) => check.verdict !== "ok").length
    const title = `${section.subject}${section.version === null ? "" : ` ${section.version}`}: ${
      failing === 0 ? "all checks pass" : `${failing} of ${section.checks.length} checks need attention`
    }`
    const lines = section.checks.flatMap((check) => [
      `  ${marks[check.verdict]}  ${check.id.padEnd(width)}  ${check.evidence}`,
      ...(check.fix === "" ? [] : [`        ${" ".repeat(width)}  fix: ${check.fix}`])
    ])
    return [title, ...lines].join("\n")
  })
  const { fail: failed, ok: passed, warning: warned } = report.summary
  const summary = report.sections.length === 0
    ? "No extensions installed; nothing to check."
    : `${passed} ok, ${warned} warning${warned === 1 ? "" : "s"}, ${failed} failing`
  return [...blocks, summary].join("\n\n")
}
