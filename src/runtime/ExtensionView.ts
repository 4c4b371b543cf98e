import type { InstalledExtension } from "../domain/Installed.js"
import { type QuarantineMap, quarantineReason } from "./Quarantine.js"

/**
 * One installed extension as `list --json`, `status --extensions` and the admin page show it. An enabled extension that
 * the running server quarantined (recorded in host_settings) shows as `quarantined`, with the reason.
 */
export const extensionView = (extension: InstalledExtension, quarantine: QuarantineMap = {}) => {
  const reason = quarantineReason(quarantine, extension)
  return {
    id: extension.extensionId,
    name: extension.name,
    version: extension.version,
    enabled: extension.enabled,
    status: reason !== undefined ? "quarantined" : extension.enabled ? "enabled" : "disabled",
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
    ...(view.quarantine === undefined ? [] : [`${view.id} is quarantined: ${view.quarantine}`]),
    ...(view.linked === undefined ? [] : [`${view.id} is linked to ${view.linked} (host dev)`])
  ])
})
