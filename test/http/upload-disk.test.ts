import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { limitsFromConfig, packTree } from "../../src/archive/Archive.js"
import { keyringFromConfig } from "../../src/archive/Signing.js"
import { HostConfig, layer as hostConfigLayer } from "../../src/config/HostConfig.js"
import { judgeUpload } from "../../src/http/UploadJudge.js"
import { uploadPolicyOf } from "../../src/usecases/UploadPolicy.js"
import { fixture, tempDirsPerTest } from "../support/cli.js"

// DESIGN.md §23 "No failure is swallowed": when the server cannot write an upload's files (a full disk,
// here a folder whose parent is a regular file: ENOTDIR), the judge says it is the disk, not that the
// archive was refused (admin/Uploads.ts answers that stage with a 500 naming it).

const temp = tempDirsPerTest()

describe("judging an upload", () => {
  it.effect("a write failure of the server's own files is the disk's failure, not 'archive refused'", () => {
    const root = temp("host-root-")
    return Effect.gen(function*() {
      const { config, paths } = yield* HostConfig
      const folder = join(paths.storage, "uploads", "upload-1")
      mkdirSync(folder, { recursive: true })
      const packed = yield* packTree(fixture("extensions", "hello-world"), { limits: limitsFromConfig(config) })
      const file = join(folder, "hello.host")
      writeFileSync(file, packed.bytes)
      // Where it must unpack sits under a regular file: every write there fails as a full disk would.
      const blocked = join(folder, "not-a-folder")
      writeFileSync(blocked, "")
      const judged = yield* judgeUpload({
        file,
        source: "hello.host",
        limits: limitsFromConfig(config),
        keyring: keyringFromConfig(config),
        requireSignatures: false,
        uploadPolicy: uploadPolicyOf(config),
        unpackTo: join(blocked, "unpacked")
      })
      expect(judged.verdict).toMatchObject({ ok: false, stage: "disk", tag: "UploadDiskFailed" })
      expect(judged.verdict.ok ? "" : judged.verdict.message).toMatch(/could not read or write the upload's files: .*not-a-folder/)
    }).pipe(Effect.provide(Layer.provideMerge(hostConfigLayer({ root, env: {} }), NodeContext.layer)))
  })
})
