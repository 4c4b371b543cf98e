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
    signature: extension.signature.status,
    source: extension.source
  }
}

/** The Status column: `quarantined: <reason>` when quarantined. */
export const statusText = (view: ReturnType<typeof extensionView>): string =>
  view.quarantine !== undefined ? `quarantined: ${view.quarantine}` : view.status
