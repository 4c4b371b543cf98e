import { Effect } from "effect"
import { type ArchiveLimits, enforceTrust, inspectFile } from "../archive/Archive.js"
import type { Keyring } from "../archive/Signing.js"
import { ManifestInvalid } from "../domain/Errors.js"
import { type InspectedUpload, inspectedUpload } from "../usecases/UploadFacts.js"
import { policyRefusal, type UploadPolicy, type UploadVerdict } from "../usecases/UploadPolicy.js"

// What the upload worker decides about one archive (UploadWorker.ts runs it in its thread; the server
// runs it itself when there is no built worker). Kept apart from UploadInspection.ts so the worker's
// bundle holds the archive code and nothing of the server.

export type { UploadVerdict }

/** The verdict, and the facts of the archive when it could be read at all. */
export interface UploadInspection {
  readonly verdict: UploadVerdict
  readonly facts: InspectedUpload | undefined
}

export interface JudgeInput {
  readonly file: string
  readonly source: string
  readonly limits: ArchiveLimits
  readonly keyring: Keyring
  readonly requireSignatures: boolean
  /** `admin_uploads: signed` (docs/operations.md "Web installs"): only a valid signature by a trusted key passes. */
  readonly uploadPolicy: UploadPolicy
}

const refusalOf = (stage: "archive" | "trust") => (error: { readonly _tag: string; readonly message: string }): UploadVerdict => ({
  ok: false,
  stage,
  tag: error._tag,
  message: error.message,
  ...("reason" in error ? { reason: String(error.reason) } : {})
})

/**
 * The worker's whole judgement of one archive, written once: read it, trust it (checksums, signature
 * policy), apply the upload policy, and require a manifest that decodes. The worker runs it; running
 * from the sources (no built worker), the server runs it itself.
 */
export const judgeUpload = (input: JudgeInput) =>
  Effect.gen(function*() {
    const inspection = yield* inspectFile(input.file, { limits: input.limits, keyring: input.keyring })
    const facts = inspectedUpload(inspection)
    const judged = (verdict: UploadVerdict): UploadInspection => ({ verdict, facts })
    const untrusted = yield* enforceTrust(inspection, input.requireSignatures).pipe(
      Effect.as<UploadVerdict | undefined>(undefined),
      Effect.catchAll((error) => Effect.succeed(refusalOf("trust")(error)))
    )
    if (untrusted !== undefined) return judged(untrusted)
    const refusedByPolicy = policyRefusal(input.uploadPolicy, input.source, inspection.status, inspection.signature.key)
    if (refusedByPolicy !== undefined) return judged(refusedByPolicy)
    if (inspection.manifest.decoded === undefined) {
      const refusal = new ManifestInvalid({ source: input.source, problems: inspection.manifest.problems })
      return judged({ ok: false, stage: "manifest", tag: refusal._tag, message: refusal.message })
    }
    return judged({ ok: true })
  }).pipe(
    Effect.catchAll((error) => Effect.succeed<UploadInspection>({ verdict: refusalOf("archive")(error), facts: undefined }))
  )
