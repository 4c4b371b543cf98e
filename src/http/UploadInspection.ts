import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import { join } from "node:path"
import { Worker } from "node:worker_threads"
import { inspectFile, limitsFromConfig } from "../archive/Archive.js"
import { keyringFromConfig } from "../archive/Signing.js"
import { HostConfig } from "../config/HostConfig.js"
import { ServerSettings } from "./Context.js"
import { policyRefusal, uploadPolicyOf } from "./UploadPolicy.js"

// An uploaded archive is inspected in a worker thread before the lifecycle sees it, so a hostile one
// (a manifest of 40,000 keys, an archive that inflates a hundredfold) costs a worker its CPU time and
// never stalls the server's event loop (docs/operations.md "Uploads and leftovers").
// A refusal found there is the answer; an archive that passes is installed as any other, its manifest
// now known to be within the limits.

/**
 * What the worker found: ok, or the refusal (the tag and message of the archive/manifest error) and the
 * stage that refused it: reading the archive, trusting it (checksums, signature policy), or its manifest.
 * A preview shows trust and manifest refusals as failing checks; only an unreadable archive ends it.
 */
export type UploadVerdict =
  | { readonly ok: true }
  | {
    readonly ok: false
    readonly stage: "archive" | "trust" | "policy" | "manifest" | "worker"
    readonly tag: string
    readonly message: string
    readonly reason?: string
  }

/** A worker that has not answered by then is stopped, and the upload refused. */
const workerTimeoutMillis = 120_000

const workerFile = (frameworkRoot: string) => join(frameworkRoot, "dist", "upload-worker.cjs")

/**
 * Inspects `file` (named `source`) in a worker thread. Without the built worker (running from the
 * sources), it answers ok and the lifecycle inspects on its own.
 */
export const inspectUpload = (file: string, source: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const { config } = yield* HostConfig
    const { frameworkRoot } = yield* ServerSettings
    const script = workerFile(frameworkRoot)
    const uploadPolicy = uploadPolicyOf(config)
    if (!(yield* fs.exists(script).pipe(Effect.orElseSucceed(() => false)))) {
      // Running from the sources: the lifecycle inspects the archive; only the upload policy, which the
      // lifecycle does not know, is checked here.
      if (uploadPolicy.setting !== "signed") return { ok: true } as UploadVerdict
      const inspection = yield* inspectFile(file, { limits: limitsFromConfig(config), keyring: keyringFromConfig(config) }).pipe(Effect.option)
      if (inspection._tag === "None") return { ok: true } as UploadVerdict
      return policyRefusal(uploadPolicy, source, inspection.value.status, inspection.value.signature.key) ?? ({ ok: true } as UploadVerdict)
    }
    const workerData = {
      file,
      source,
      limits: limitsFromConfig(config),
      keyring: keyringFromConfig(config),
      requireSignatures: config.require_signatures,
      uploadPolicy
    }
    return yield* Effect.async<UploadVerdict>((resume) => {
      const worker = new Worker(script, { workerData, resourceLimits: { maxOldGenerationSizeMb: 1024 } })
      let settled = false
      const settle = (verdict: UploadVerdict) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        void worker.terminate()
        resume(Effect.succeed(verdict))
      }
      const timer = setTimeout(
        () => settle({ ok: false, stage: "worker", tag: "InspectionTimeout", message: `${source} could not be inspected within ${workerTimeoutMillis / 1000} s` }),
        workerTimeoutMillis
      )
      worker.once("message", (verdict: UploadVerdict) => settle(verdict))
      worker.once("error", (error) => settle({ ok: false, stage: "worker", tag: "InspectionFailed", message: `${source} could not be inspected: ${error.message}` }))
      worker.once("exit", (code) => settle({ ok: false, stage: "worker", tag: "InspectionFailed", message: `${source} could not be inspected (the worker exited with ${code})` }))
      return Effect.sync(() => {
        settled = true
        clearTimeout(timer)
        void worker.terminate()
      })
    })
  })
