import { NodeContext } from "@effect/platform-node"
import { Effect } from "effect"
import { parentPort, workerData } from "node:worker_threads"
import { type JudgeInput, judgeUpload } from "./UploadJudge.js"

// The worker thread that inspects an uploaded archive (UploadInspection.ts starts it): inflating,
// checksums, signature and reading extension.yaml, the CPU-bound part of an install, away from the
// server's event loop. It answers the verdict and the facts a preview shows, as plain data. Bundled on
// its own as dist/upload-worker.cjs (scripts/build.mjs).

const input = workerData as JudgeInput

void Effect.runPromise(judgeUpload(input).pipe(Effect.provide(NodeContext.layer))).then((result) => parentPort?.postMessage(result))
