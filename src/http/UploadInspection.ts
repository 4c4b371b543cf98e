import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import { join } from "node:path"
import { Worker } from "node:worker_threads"
import { limitsFromConfig } from "../archive/Archive.js"
import { keyringFromConfig } from "../archive/Signing.js"
import { HostConfig } from "../config/HostConfig.js"
import { uploadPolicyOf } from "../usecases/UploadPolicy.js"
import { ServerSettings } from "./Context.js"
import { judgeUpload, type UploadInspection, type UploadVerdict } from "./UploadJudge.js"

// An uploaded archive is inspected in a worker thread before the lifecycle sees it, so a hostile one
// (a manifest of 40,000 keys, an archive that inflates a hundredfold) costs a worker its CPU time and
// never stalls the server's event loop (docs/operations.md "Uploads and leftovers").
// A refusal found there is the answer; an archive that passes is installed as any other, its manifest
// now known to be within the limits. The worker also sends back what it read (usecases/UploadFacts.ts),
// so a preview does not read the archive a second time, and for an install it unpacks the archive it
// judged, so staging does not inspect it a second time (lifecycle/Source.ts `StagedUpload`).

export type { UploadInspection, UploadVerdict }

/** A worker that has not answered by then is stopped, and the upload refused. */
const workerTimeoutMillis = 120_000

const workerFile = (frameworkRoot: string) => join(frameworkRoot, "dist", "upload-worker.cjs")

/**
 * Inspects `file` (named `source`) in a worker thread (or, without the built worker, here); when it
 * passes and `unpackTo` is given, the judge also unpacks it there for the install to stage.
 */
export const inspectUpload = (file: string, source: string, unpackTo?: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const { config } = yield* HostConfig
    const { frameworkRoot } = yield* ServerSettings
    const script = workerFile(frameworkRoot)
    const input = {
      file,
      source,
      limits: limitsFromConfig(config),
      keyring: keyringFromConfig(config),
      requireSignatures: config.require_signatures,
      uploadPolicy: uploadPolicyOf(config),
      unpackTo
    }
    if (!(yield* fs.exists(script).pipe(Effect.orElseSucceed(() => false)))) return yield* judgeUpload(input)
    return yield* Effect.async<UploadInspection>((resume) => {
      const worker = new Worker(script, { workerData: input, resourceLimits: { maxOldGenerationSizeMb: 1024 } })
      let settled = false
      const settle = (result: UploadInspection) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        void worker.terminate()
        resume(Effect.succeed(result))
      }
      const failed = (tag: string, message: string): UploadInspection => ({
        verdict: { ok: false, stage: "worker", tag, message },
        facts: undefined,
        unpacked: undefined
      })
      const timer = setTimeout(
        () => settle(failed("InspectionTimeout", `${source} could not be inspected within ${workerTimeoutMillis / 1000} s`)),
        workerTimeoutMillis
      )
      worker.once("message", (result: UploadInspection) => settle(result))
      worker.once("error", (error) => settle(failed("InspectionFailed", `${source} could not be inspected: ${error.message}`)))
      worker.once("exit", (code) => settle(failed("InspectionFailed", `${source} could not be inspected (the worker exited with ${code})`)))
      return Effect.sync(() => {
        settled = true
        clearTimeout(timer)
        void worker.terminate()
      })
    })
  })
