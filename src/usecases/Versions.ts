import { frameworkVersion } from "../config/HostConfig.js"
import type { RuntimeVersions } from "../domain/Rules.js"

// The versions `requires` ranges are checked against, one record for every front door: Host's own (the
// framework's, or the `version` config/host.yaml sets), the panel's and PHP's as the panel driver read
// them (unknown before a server's first boot), and Node's.

export const versionsOf = (
  panelInfo: { readonly version: string | undefined; readonly php: string | undefined } | undefined,
  host: string = frameworkVersion
): RuntimeVersions => ({
  host,
  panel: panelInfo?.version,
  php: panelInfo?.php,
  node: process.versions.node
})
