import type { InstalledExtension } from "../../domain/Installed.js"

/** One installed extension as `list --json` and `status --extensions` show it. */
export const extensionView = (extension: InstalledExtension) => ({
  id: extension.extensionId,
  name: extension.name,
  version: extension.version,
  enabled: extension.enabled,
  status: extension.enabled ? "enabled" : "disabled",
  signature: extension.signature.status,
  source: extension.source
})
