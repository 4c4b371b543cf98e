import { NodeContext } from "@effect/platform-node"
import { Effect } from "effect"
import { parentPort, workerData } from "node:worker_threads"
import { type ArchiveLimits, enforceTrust, inspectFile } from "../archive/Archive.js"
import type { Keyring } from "../archive/Signing.js"
import { ManifestInvalid } from "../domain/Errors.js"
import type { UploadVerdict } from "./UploadInspection.js"
import { policyRefusal, type UploadPolicy } from "./UploadPolicy.js"

// The worker thread that inspects an uploaded archive (UploadInspection.ts starts it): inflating,
// checksums, signature and reading extension.yaml, the CPU-bound part of an install, away from the
// server's event loop. Bundled on its own as dist/upload-worker.cjs (scripts/build.mjs).

interface Input {
  readonly file: string
  readonly source: string
  readonly limits: ArchiveLimits
  readonly keyring: Keyring
  readonly requireSignatures: boolean
  /** `admin_uploads: signed` (docs/operations.md "Web installs"): only a valid signature by a trusted key passes. */
  readonly uploadPolicy: UploadPolicy
}

const input = workerData as Input

const refusalOf = (stage: "archive" | "trust") => (error: { readonly _tag: string; readonly message: string }) =>
  Effect.succeed<UploadVerdict>({
    ok: false,
    stage,
    tag: error._tag,
    message: error.message,
    ...("reason" in error ? { reason: String(error.reason) } : {})
  })

const verdict: Effect.Effect<UploadVerdict> = Effect.gen(function*() {
  const inspection = yield* inspectFile(input.file, { limits: input.limits, keyring: input.keyring })
  const trusted = yield* enforceTrust(inspection, input.requireSignatures).pipe(
    Effect.as<UploadVerdict | undefined>(undefined),
    Effect.catchAll(refusalOf("trust"))
  )
  if (trusted !== undefined) return trusted
  const refusedByPolicy = policyRefusal(input.uploadPolicy, input.source, inspection.status, inspection.signature.key)
  if (refusedByPolicy !== undefined) return refusedByPolicy
  if (inspection.manifest.decoded === undefined) {
    const refusal = new ManifestInvalid({ source: input.source, problems: inspection.manifest.problems })
    return { ok: false, stage: "manifest", tag: refusal._tag, message: refusal.message } as const
  }
  return { ok: true } as const
}).pipe(
  Effect.catchAll(refusalOf("archive")),
  Effect.provide(NodeContext.layer)
)

void Effect.runPromise(verdict).then((result) => parentPort?.postMessage(result))
