import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { inspectionCount, limitsFromConfig, packTree } from "../../src/archive/Archive.js"
import * as ArtifactStore from "../../src/archive/ArtifactStore.js"
import { keyringFromConfig } from "../../src/archive/Signing.js"
import { frameworkVersion, HostConfig, layer as hostConfigLayer } from "../../src/config/HostConfig.js"
import { judgeUpload } from "../../src/http/UploadJudge.js"
import { SourceSpec, stageSource } from "../../src/lifecycle/Source.js"
import * as Registry from "../../src/registry/Registry.js"
import { uploadPolicyOf } from "../../src/usecases/UploadPolicy.js"
import { fixture, tempDirsPerTest } from "../support/cli.js"

// An uploaded archive is inspected once per install (docs/decisions.md "An uploaded archive is inspected
// and unpacked once"): the judge inspects and unpacks it, staging moves that tree. Run in this thread, so
// Archive.ts's inspection count sees both the judge and the staging.

const temp = tempDirsPerTest()

const services = (root: string) => {
  const base = Layer.provideMerge(hostConfigLayer({ root, env: {} }), NodeContext.layer)
  // The real services a staging needs; no upload source reaches the registry.
  return Layer.provideMerge(Layer.merge(ArtifactStore.layer, Registry.layerNode()), base)
}

/** An upload folder (in the root's storage) holding hello-world as `hello.host`, and what the judge is given for it. */
const setUp = (options: { readonly requireSignatures?: boolean } = {}) =>
  Effect.gen(function*() {
    const { config, paths } = yield* HostConfig
    const folder = join(paths.storage, "uploads", "upload-1")
    mkdirSync(folder, { recursive: true })
    const packed = yield* packTree(fixture("extensions", "hello-world"), { limits: limitsFromConfig(config) })
    const file = join(folder, "hello.host")
    writeFileSync(file, packed.bytes)
    const input = {
      file,
      source: "hello.host",
      limits: limitsFromConfig(config),
      keyring: keyringFromConfig(config),
      requireSignatures: options.requireSignatures ?? false,
      uploadPolicy: uploadPolicyOf(config),
      unpackTo: join(folder, "unpacked")
    }
    return { file, input, packed, staging: paths.staging }
  })

const run = <A, E>(body: Effect.Effect<A, E, HostConfig | ArtifactStore.ArtifactStore | Registry.Registry | NodeContext.NodeContext>) => {
  const root = temp("host-root-")
  return Effect.provide(body, services(root))
}

describe("an uploaded archive", () => {
  it.effect("is inspected once: the judge unpacks it and staging moves that tree (a re-read archive is a second inspection)", () =>
    run(Effect.gen(function*() {
      const { file, input, packed, staging } = yield* setUp()
      const before = inspectionCount()
      const judged = yield* judgeUpload(input)
      expect(judged.verdict).toEqual({ ok: true })
      expect(judged.unpacked?.directory).toBe(input.unpackTo)
      expect(inspectionCount()).toBe(before + 1)
      const staged = yield* stageSource(
        SourceSpec.StagedUpload({
          path: file,
          name: "hello.host",
          directory: judged.unpacked!.directory,
          sha256: judged.facts!.sha256,
          signature: { status: judged.facts!.status, key: judged.facts!.signature.key },
          detachedSignature: judged.unpacked!.detachedSignature
        }),
        "operation-1",
        frameworkVersion
      )
      expect(inspectionCount()).toBe(before + 1)
      expect(staged.directory).toBe(join(staging, "operation-1"))
      expect(existsSync(input.unpackTo)).toBe(false)
      expect(existsSync(join(staged.directory, "extension.yaml"))).toBe(true)
      expect(staged.manifest.id).toBe("acme/hello-world")
      expect(staged.source).toEqual({ type: "upload", ref: "hello.host", sha256: packed.sha256 })
      expect(staged.signature).toEqual({ status: "unsigned", key: null })
      expect(staged.artifactAdded).toBe(true)
      const store = yield* ArtifactStore.ArtifactStore
      expect(yield* store.has(packed.sha256)).toBe(true)
      // The same file as a plain upload source is read and inspected again by staging.
      yield* stageSource(SourceSpec.Upload({ path: file, name: "hello.host" }), "operation-2", frameworkVersion)
      expect(inspectionCount()).toBe(before + 2)
    })))

  it.effect("whose file changes after it was judged is refused, and nothing is staged or stored", () =>
    run(Effect.gen(function*() {
      const { file, input, packed, staging } = yield* setUp()
      const judged = yield* judgeUpload(input)
      expect(judged.verdict).toEqual({ ok: true })
      writeFileSync(file, Buffer.concat([Buffer.from(packed.bytes), Buffer.from("tampered")]))
      const result = yield* Effect.either(stageSource(
        SourceSpec.StagedUpload({
          path: file,
          name: "hello.host",
          directory: judged.unpacked!.directory,
          sha256: judged.facts!.sha256,
          signature: { status: judged.facts!.status, key: judged.facts!.signature.key },
          detachedSignature: undefined
        }),
        "operation-1",
        frameworkVersion
      ))
      expect(Either.isLeft(result) && result.left).toMatchObject({ _tag: "ArchiveRefused", reason: "checksum-mismatch" })
      expect(existsSync(join(staging, "operation-1"))).toBe(false)
      const store = yield* ArtifactStore.ArtifactStore
      expect(yield* store.list).toEqual([])
    })))

  it.effect("that is refused is not unpacked", () =>
    run(Effect.gen(function*() {
      const { input } = yield* setUp({ requireSignatures: true })
      const judged = yield* judgeUpload(input)
      expect(judged.verdict).toMatchObject({ ok: false, stage: "trust", tag: "SignatureRefused" })
      expect(judged.unpacked).toBeUndefined()
      expect(readdirSync(join(input.unpackTo, ".."))).toEqual(["hello.host"])
    })))
})
