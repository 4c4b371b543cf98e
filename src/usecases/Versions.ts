import { Effect } from "effect"
import { frameworkVersion } from "../config/HostConfig.js"
import type { RuntimeVersions } from "../domain/Rules.js"
import { LiveRuntime } from "../runtime/LiveState.js"

// The versions `requires` ranges are checked against, as the server knows them: Host's own, the
// panel's and PHP's as the running generation read them (unknown before the first boot), and Node's.

export const versionsOf = (
  panelInfo: { readonly version: string | undefined; readonly php: string | undefined } | undefined
): RuntimeVersions => ({
  host: frameworkVersion,
  panel: panelInfo?.version,
  php: panelInfo?.php,
  node: process.versions.node
})

/** The versions of the server's current runtime generation. */
export const currentVersions = Effect.map(LiveRuntime, (runtime) => versionsOf(runtime.current()?.panelInfo))
