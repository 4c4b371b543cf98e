import type { ActionType, CapabilityDiff, Plan, PlanAction, PlanSummary, SettingChange } from "../domain/PlanFormat.js"

// Every rendering of a plan in one place, outside the pure domain: the text the CLI and the admin page
// show, and the markdown of a pull request comment (docs/plan-format.md). The plan's wire schema is
// domain/PlanFormat.ts, the planner domain/Plan.ts, the fingerprint reconcile/Fingerprint.ts.

// ---- text ---------------------------------------------------------------------------------------

const sign: Record<ActionType, string> = {
  install: "+",
  update: "~",
  enable: "~",
  disable: "~",
  configure: "~",
  repair: "!",
  remove: "-"
}

export const formatAction = (action: PlanAction): string => {
  const detail = (() => {
    switch (action.type) {
      case "install":
        return ` ${action.to}${action.enabled === false ? " (disabled)" : ""}`
      case "update":
        return ` ${action.from} → ${action.to}`
      case "repair":
      case "remove":
        return ` ${action.from}`
      case "configure":
        return ` (${(action.settings ?? []).map((change) => change.key).join(", ")})`
      default:
        return ""
    }
  })()
  return `${sign[action.type]} ${action.type} ${action.id}${detail}: ${action.reason}`
}

export const formatSummary = (summary: PlanSummary): string =>
  summary.install + summary.update + summary.enable + summary.disable + summary.configure + summary.repair + summary.remove === 0
    ? "No changes. Panel matches desired state."
    : `Plan: ${summary.install} to install, ${summary.update} to update, ${summary.enable} to enable, ${summary.disable} to disable, ` +
      `${summary.configure} to configure, ${summary.repair} to repair, ${summary.remove} to remove.`

export const formatPlan = (plan: Pick<Plan, "actions" | "summary" | "warnings">): string =>
  [
    ...plan.warnings.map((warning) => `warning: ${warning}`),
    ...plan.actions.map(formatAction),
    ...(plan.actions.length > 0 ? [""] : []),
    formatSummary(plan.summary)
  ].join("\n")

// ---- markdown -----------------------------------------------------------------------------------

// The markdown rendering of a plan (`host reconcile --format markdown`, docs/plan-format.md): a pull
// request comment. It is made from the plan object only, which holds `${VAR}` templates and hashes,
// never a substituted secret, so the markdown cannot hold one either.

/** An extension that cannot be planned for the target panel (the upgrade preflight's `blocked`). */
export interface BlockedItem {
  readonly id: string
  readonly reason: string
}

/** What a markdown plan shows: the plan, any blocked items, and the apply outcome when it was applied. */
export interface MarkdownInput {
  readonly plan: Pick<Plan, "id" | "created_at" | "fingerprint" | "actions" | "summary" | "warnings"> & {
    readonly blocked?: ReadonlyArray<BlockedItem>
  }
  readonly apply?: {
    readonly applied: ReadonlyArray<PlanAction>
    /** The failure itself (an apply result) or its message (a report read back): only the message is shown. */
    readonly failed: { readonly action: PlanAction; readonly error: string | { readonly message: string } } | null
    readonly notApplied: ReadonlyArray<PlanAction>
  }
}


/** Text as markdown that renders as itself (no HTML, no table breaks, no emphasis). */
const escapeText = (text: string): string =>
  text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/([\\`*[\]|])/g, "\\$1")
    .replace(/\r?\n/g, " ")

/** A code span that holds any text (backticks inside get a longer fence). */
const code = (text: string): string => {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((match) => match[0].length))
  const fence = "`".repeat(longest + 1)
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : ""
  return `${fence}${pad}${text.replace(/\r?\n/g, " ")}${pad}${fence}`
}

/** HTML text (inside `<summary>`). */
const escapeHtml = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/** A fenced block that no line of `body` can close early. */
const fenced = (language: string, body: ReadonlyArray<string>): string => {
  const longest = Math.max(2, ...body.flatMap((line) => [...line.matchAll(/`+/g)].map((match) => match[0].length)))
  const fence = "`".repeat(longest + 1)
  return [`${fence}${language}`, ...body, fence].join("\n")
}

const versionCell = (action: PlanAction): string => {
  switch (action.type) {
    case "install":
      return `— → ${action.to ?? "?"}${action.enabled === false ? " (disabled)" : ""}`
    case "update":
      return `${action.from ?? "?"} → ${action.to ?? "?"}`
    case "repair":
      return `${action.from ?? "?"} (reinstalled)`
    case "remove":
      return `${action.from ?? "?"} → —`
    case "enable":
      return "disabled → enabled"
    case "disable":
      return "enabled → disabled"
    case "configure":
      return `settings: ${(action.settings ?? []).map((change) => change.key).join(", ")}`
  }
}

/** The one-line name of an action, as in the text plan but without its reason. */
const actionTitle = (action: PlanAction): string => {
  const version = action.type === "install"
    ? ` ${action.to ?? ""}`
    : action.type === "update"
    ? ` ${action.from ?? ""} → ${action.to ?? ""}`
    : action.type === "repair" || action.type === "remove"
    ? ` ${action.from ?? ""}`
    : ""
  return `${sign[action.type]} ${action.type} ${action.id}${version}`
}

const capabilityKinds = ["permissions", "routes", "slots", "migrations", "schedules", "settings"] as const

const capabilityLines = (diff: CapabilityDiff): ReadonlyArray<string> =>
  capabilityKinds.flatMap((kind) => {
    const { added, removed } = diff[kind]
    if (added.length === 0 && removed.length === 0) return []
    return [`# ${kind}`, ...removed.map((item) => `- ${item}`), ...added.map((item) => `+ ${item}`)]
  })

const settingValue = (value: unknown): string => (value === null || value === undefined ? "(unset)" : JSON.stringify(value))

/** Settings as a diff; a sensitive one shows its `${VAR}` template and where it comes from. */
const settingLines = (changes: ReadonlyArray<SettingChange>): ReadonlyArray<string> =>
  changes.length === 0 ? [] : [
    "# setting values",
    ...changes.flatMap((change) => [
      ...(change.from === null || change.from === undefined ? [] : [`- ${change.key}: ${settingValue(change.from)}`]),
      `+ ${change.key}: ${settingValue(change.to)}${change.sensitive ? " (sensitive: substituted from the environment when applied)" : ""}`
    ])
  ]

const countChanges = (diff: CapabilityDiff) => {
  let added = 0
  let removed = 0
  for (const kind of capabilityKinds) {
    added += diff[kind].added.length
    removed += diff[kind].removed.length
  }
  return { added, removed }
}

const detailsOf = (action: PlanAction): string | undefined => {
  const lines = [...capabilityLines(action.capabilities), ...settingLines(action.settings ?? [])]
  if (lines.length === 0) return undefined
  const { added, removed } = countChanges(action.capabilities)
  const parts = [
    ...(added > 0 ? [`${added} added`] : []),
    ...(removed > 0 ? [`${removed} removed`] : []),
    ...((action.settings ?? []).length > 0 ? [`${(action.settings ?? []).length} setting value(s)`] : [])
  ]
  // A registry source chosen among several is named (docs/registry.md "Several registries").
  const source = action.source?.type === "registry" && action.source.registry !== undefined
    ? [`Source: ${code(`registry:${action.source.registry} ${action.source.id}@${action.source.version}`)}`, ""]
    : []
  return [
    `<details><summary><code>${escapeHtml(actionTitle(action))}</code>: ${parts.join(", ")}</summary>`,
    "",
    ...source,
    fenced("diff", lines),
    "",
    "</details>"
  ].join("\n")
}

const callout = (kind: "CAUTION" | "WARNING", title: string, items: ReadonlyArray<string>): string =>
  [`> [!${kind}]`, `> **${title}**`, ">", ...items.map((item) => `> - ${item}`)].join("\n")

const actionItem = (action: PlanAction) => `- ${code(actionTitle(action))}: ${escapeText(action.reason)}`

const applySection = (apply: NonNullable<MarkdownInput["apply"]>): string => {
  if (apply.failed === null) {
    return apply.applied.length === 0
      ? "### Applied: nothing to do"
      : [`### Apply complete: ${apply.applied.length} action(s) applied`, "", ...apply.applied.map(actionItem)].join("\n")
  }
  const notApplied = [apply.failed.action, ...apply.notApplied]
  return [
    `### Apply stopped: ${code(actionTitle(apply.failed.action))} failed`,
    "",
    callout("CAUTION", "The apply stopped; fix the cause and reconcile again (it continues from the panel's current state).", [
      escapeText(typeof apply.failed.error === "string" ? apply.failed.error : apply.failed.error.message)
    ]),
    "",
    `**Applied (${apply.applied.length})**`,
    "",
    ...(apply.applied.length === 0 ? ["- nothing"] : apply.applied.map(actionItem)),
    "",
    `**Not applied (${notApplied.length})**`,
    "",
    ...notApplied.map(actionItem)
  ].join("\n")
}

/** The plan (and its apply outcome) as a pull request comment; ends with a newline. */
export const formatPlanMarkdown = ({ apply, plan }: MarkdownInput): string => {
  const blocked = plan.blocked ?? []
  const sections: Array<string> = [`## ${escapeText(formatSummary(plan.summary))}`]
  if (blocked.length > 0) {
    sections.push(callout(
      "CAUTION",
      `Blocked: ${blocked.length} extension(s) cannot run on the target panel; this plan must not be applied.`,
      blocked.map((item) => `${code(item.id)}: ${escapeText(item.reason)}`)
    ))
  }
  if (plan.warnings.length > 0) {
    sections.push(callout("WARNING", `${plan.warnings.length} warning(s)`, plan.warnings.map(escapeText)))
  }
  if (plan.actions.length > 0) {
    sections.push([
      "| | action | extension | version | reason |",
      "|:-:|---|---|---|---|",
      ...plan.actions.map((action) =>
        `| ${code(sign[action.type])} | ${action.type} | ${code(action.id)} | ${escapeText(versionCell(action))} | ${escapeText(action.reason)} |`
      )
    ].join("\n"))
    const details = plan.actions.map(detailsOf).filter((block): block is string => block !== undefined)
    if (details.length > 0) sections.push(["#### Capability changes", "", details.join("\n\n")].join("\n"))
  }
  if (apply !== undefined) sections.push(applySection(apply))
  sections.push(
    `<sub>Plan <code>${escapeHtml(plan.id)}</code> · fingerprint <code>${escapeHtml(plan.fingerprint.slice(0, 12))}</code> · ` +
      `made ${escapeHtml(plan.created_at)} by <code>host reconcile</code></sub>`
  )
  return `${sections.join("\n\n")}\n`
}

/**
 * What `--format markdown` prints when no plan could be made or applied (an invalid desired state, a stale
 * plan, the lock held): the comment then says why instead of being empty. Problems are listed one per line.
 */
export const formatFailureMarkdown = (
  message: string,
  problems: ReadonlyArray<{ readonly path: string; readonly message: string }> = []
): string =>
  `${
    [
      "## Reconcile failed",
      callout(
        "CAUTION",
        problems.length > 0 ? "The desired state cannot be planned; nothing was applied." : "Nothing was applied.",
        problems.length > 0 ? problems.map((found) => `${code(found.path)}: ${escapeText(found.message)}`) : [escapeText(message)]
      )
    ].join("\n\n")
  }\n`
