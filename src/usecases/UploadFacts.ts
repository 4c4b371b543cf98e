import { type Inspection, integrityRefusal, listedFileCount } from "../archive/Archive.js"
import type { SignatureStatus } from "../domain/Installed.js"
import { migrationNames, resolveLayout } from "../domain/Manifest.js"
import { capabilitiesOf } from "../domain/Plan.js"
import type { Capabilities } from "../domain/PlanFormat.js"
import type { Problem } from "../domain/Problems.js"

// What one inspection of an uploaded archive tells the preview, as plain data: the worker thread that
// inspects the upload (http/UploadWorker.ts) sends it back with its verdict, so a preview reads the
// archive once, in the worker, and not again on the server's event loop (docs/decisions.md
// "Use cases: one layer between the front doors and the services").

export interface InspectedUpload {
  readonly sha256: string
  readonly bytes: number
  readonly status: SignatureStatus
  readonly signature: { readonly key: string | null; readonly trustedAs: string | null }
  /** How many files checksums.json lists. */
  readonly listedFiles: number
  /** The first integrity problem (a file differs from, is missing from or is not in checksums.json). */
  readonly integrity: { readonly reason: string; readonly message: string } | null
  readonly manifest: {
    readonly id: string | null
    readonly version: string | null
    readonly problems: ReadonlyArray<Problem>
    /** What the preview shows of a manifest that decodes; null when it does not. */
    readonly decoded: {
      readonly id: string
      readonly version: string
      readonly name: string
      readonly description: string | undefined
      readonly requires: Readonly<Record<string, string>>
      readonly dependencies: Readonly<Record<string, string>>
      readonly settings: number
    } | null
  }
  /** What the version would bring (the plan's capabilities), when the manifest decodes. */
  readonly capabilities: Capabilities | null
}

export const inspectedUpload = (inspection: Inspection): InspectedUpload => {
  const manifest = inspection.manifest.decoded
  const integrity = integrityRefusal(inspection)
  const capabilities = manifest === undefined ? null : (() => {
    const files = inspection.files.map((entry) => entry.path)
    const present = new Set(files)
    const directories = new Set(inspection.directories)
    const layout = resolveLayout(manifest.document, (path) => present.has(path), (path) => directories.has(path))
    const bundle = inspection.files.find((entry) => entry.path === layout.bundle)
    return capabilitiesOf(
      manifest,
      layout,
      bundle === undefined ? undefined : Buffer.from(bundle.data).toString("utf8"),
      migrationNames(files, layout.migrations)
    )
  })()
  return {
    sha256: inspection.sha256,
    bytes: inspection.bytes,
    status: inspection.status,
    signature: { key: inspection.signature.key, trustedAs: inspection.signature.trustedAs },
    listedFiles: listedFileCount(inspection),
    integrity: integrity === undefined ? null : { reason: integrity.reason, message: integrity.message },
    manifest: {
      id: inspection.manifest.id,
      version: inspection.manifest.version,
      problems: inspection.manifest.problems,
      decoded: manifest === undefined ? null : {
        id: manifest.id,
        version: manifest.version,
        name: manifest.document.name,
        description: manifest.document.description,
        requires: manifest.document.requires ?? {},
        dependencies: manifest.document.dependencies ?? {},
        settings: manifest.settings.length
      }
    },
    capabilities
  }
}
