import { Effect } from "effect"
import { corruptReason, type InstalledExtension } from "../domain/Installed.js"
import { type QuarantineMap, quarantineReason, readQuarantine } from "../runtime/Quarantine.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"

// How an installed extension shows in `host list`, `host status --extensions` and the admin answers.
// `host list --json` is the cold-start path (docs/architecture.md "Startup"): its use case lives here,
// beside the view it returns, and imports nothing the command did not load before.

export type ExtensionStatus = "enabled" | "disabled" | "quarantined" | "corrupt"

/**
 * How an installed extension stands, and why it is not loaded: a stored manifest that no longer decodes
 * makes it `corrupt` whether it is enabled or not (nothing can load it); an enabled one the runtime
 * quarantined is `quarantined` with the runtime's reason. `host list`, `host status` and the admin API
 * all answer with this.
 */
export const extensionStatus = (
  extension: InstalledExtension,
  quarantine: string | undefined
): { readonly status: ExtensionStatus; readonly reason: string | undefined } => {
  const corrupt = corruptReason(extension)
  if (corrupt !== undefined) return { status: "corrupt", reason: corrupt }
  if (quarantine !== undefined && extension.enabled) return { status: "quarantined", reason: quarantine }
  return { status: extension.enabled ? "enabled" : "disabled", reason: undefined }
}

/** What every view of an installed extension starts with: who it is, its status and why it is not loaded. */
export const extensionSummary = (extension: InstalledExtension, quarantine: string | undefined) => {
  const { reason, status } = extensionStatus(extension, quarantine)
  return { id: extension.extensionId, name: extension.name, version: extension.version, enabled: extension.enabled, status, reason }
}

/**
 * One installed extension as `list --json`, `status --extensions` and the admin page show it. An enabled extension that
 * the running server quarantined (recorded in host_settings) shows as `quarantined`, one whose stored manifest
 * is corrupt as `corrupt`, each with the reason.
 */
export const extensionView = (extension: InstalledExtension, quarantine: QuarantineMap = {}) => {
  const { reason, ...summary } = extensionSummary(extension, quarantineReason(quarantine, extension))
  return {
    ...summary,
    ...(reason !== undefined ? { quarantine: reason } : {}),
    // A dev link was never packed or signed: "linked" says what it is (docs/authoring.md, "Dev loop").
    signature: extension.source.type === "dev-link" ? "linked" : extension.signature.status,
    source: extension.source,
    ...(extension.source.type === "dev-link" ? { linked: extension.source.ref } : {})
  }
}

/** The table's rows (Status is one word, so the column parses) and, under it, why each is quarantined. */
export const extensionTable = (views: ReadonlyArray<ReturnType<typeof extensionView>>) => ({
  header: ["ID", "Name", "Version", "Status", "Signature"],
  rows: views.map((view) => [view.id, view.name, view.version, view.status, view.signature]),
  notes: views.flatMap((view) => [
    ...(view.quarantine === undefined ? [] : [`${view.id} is ${view.status}: ${view.quarantine}`]),
    ...(view.linked === undefined ? [] : [`${view.id} is linked to ${view.linked} (host dev)`])
  ])
})

/** Which installed extensions `host list` shows: only the enabled, only the disabled, or (both or neither) all. */
export interface ListFilter {
  readonly enabled: boolean
  readonly disabled: boolean
}

/** `host list`: the installed extensions, as views, with the quarantine the last server recorded. */
export const listInstalledViews = (filter: ListFilter) =>
  Effect.gen(function*() {
    const [extensions, quarantine] = yield* Effect.all([Effect.flatMap(ExtensionsRepo, (repo) => repo.list), readQuarantine])
    return extensions
      .filter((extension) => filter.enabled === filter.disabled || extension.enabled === filter.enabled)
      .map((extension) => extensionView(extension, quarantine))
  })
