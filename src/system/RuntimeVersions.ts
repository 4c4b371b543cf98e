import type { RuntimeVersions } from "../domain/Rules.js"

// The versions `requires` ranges are checked against (docs/authoring.md "The manifest"), made in one place: Host's own,
// the panel's and its PHP as the panel driver reports them, and the Node.js running this process.

export type { RuntimeVersions }

/** What a panel driver reports about itself that `requires` can name (undefined: not known). */
export interface PanelVersions {
  readonly version: string | undefined
  readonly php: string | undefined
}

export const runtimeVersions = (host: string, panel: PanelVersions | undefined) =>
  ({ host, panel: panel?.version, php: panel?.php, node: process.versions.node }) satisfies RuntimeVersions
