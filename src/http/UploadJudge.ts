import { Path } from "@effect/platform"
import { Effect } from "effect"
import { type ArchiveLimits, enforceTrust, inspectArchive, readArchiveFile, readDetachedSignature, unpackArchive } from "../archive/Archive.js"
import type { Keyring } from "../archive/Signing.js"
import { ManifestInvalid } from "../domain/Errors.js"
import { type InspectedUpload, inspectedUpload } from "../usecases/UploadFacts.js"
import { policyRefusal, type UploadPolicy, type UploadVerdict } from "../usecases/UploadPolicy.js"

// What the upload worker decides about one archive (UploadWorker.ts runs it in its thread; the server
// runs it itself when there is no built worker). Kept apart from UploadInspection.ts so the worker's
// bundle holds the archive code and nothing of the server.

export type { UploadVerdict }

/**
 * The tree of an archive that passed, written where the judge was asked to (`unpackTo`), and the
 * detached signature it was judged with: what the lifecycle stages without reading the archive again.
 */
export interface UnpackedUpload {
  readonly directory: string
  readonly detachedSignature: string | undefined
}

/** The verdict, the facts of the archive when it could be read at all, and its tree when it passed and was unpacked. */
export interface UploadInspection {
  readonly verdict: UploadVerdict
  readonly facts: InspectedUpload | undefined
  readonly unpacked: UnpackedUpload | undefined
}

export interface JudgeInput {
  readonly file: string
  readonly source: string
  readonly limits: ArchiveLimits
  readonly keyring: Keyring
  readonly requireSignatures: boolean
  /** `admin_uploads: signed` (docs/operations.md "Web installs"): only a valid signature by a trusted key passes. */
  readonly uploadPolicy: UploadPolicy
  /**
   * Where to unpack an archive that passes (a folder that must not exist yet, inside the request's
   * upload folder); a preview, which installs nothing, leaves it out.
   */
  readonly unpackTo?: string | undefined
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
 * policy), apply the upload policy, and require a manifest that decodes; then, when asked, unpack the
 * inspection it made (unpackArchive writes the files it already holds, checked against checksums.json),
 * so an install neither reads nor inflates the archive again. A refused archive is never unpacked. The
 * worker runs it; running from the sources (no built worker), the server runs it itself.
 */
export const judgeUpload = (input: JudgeInput) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const bytes = yield* readArchiveFile(input.file, input.limits)
    const detachedSignature = yield* readDetachedSignature(input.file)
    const inspection = yield* inspectArchive(bytes, {
      source: path.basename(input.file),
      limits: input.limits,
      keyring: input.keyring,
      detachedSignature
    })
    const facts = inspectedUpload(inspection)
    const judged = (verdict: UploadVerdict): UploadInspection => ({ verdict, facts, unpacked: undefined })
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
    if (input.unpackTo === undefined) return judged({ ok: true })
    // unpackArchive removes its partial folder on failure, so a failed unpack leaves nothing.
    const directory = yield* unpackArchive(inspection, { into: path.dirname(input.unpackTo), name: path.basename(input.unpackTo) })
    return { verdict: { ok: true }, facts, unpacked: { directory, detachedSignature } } satisfies UploadInspection
  }).pipe(
    Effect.catchAll((error) =>
      Effect.succeed<UploadInspection>({
        // A file this server could not read or write (ENOSPC, EIO, ...) says nothing about the archive:
        // it is the disk's failure, not a refusal (DESIGN.md §23 "No failure is swallowed").
        verdict: isDiskFailure(error)
          ? { ok: false, stage: "disk", tag: "UploadDiskFailed", message: `the server could not read or write the upload's files: ${error.message}` }
          : refusalOf("archive")(error),
        facts: undefined,
        unpacked: undefined
      })
    )
  )

/** The server's own I/O failing (archive/ArchiveErrors ArchiveIOError, or a platform error), not the archive's content. */
const isDiskFailure = (error: { readonly _tag: string }) =>
  error._tag === "ArchiveIOError" || error._tag === "SystemError" || error._tag === "BadArgument"
