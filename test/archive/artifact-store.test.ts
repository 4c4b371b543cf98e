import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { ArtifactStore, make } from "../../src/archive/ArtifactStore.js"
import { decodeConfig } from "../../src/config/HostConfig.js"
import { tempDirsPerTest } from "../support/cli.js"

const temp = tempDirsPerTest()

const sha = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex")

/** Runs `body` with a store rooted at a fresh folder (which does not exist yet). */
const withStore = <A, E>(body: (store: ArtifactStore["Type"], directory: string) => Effect.Effect<A, E>) => {
  const directory = join(temp("host-artifacts-"), "storage", "host", "artifacts")
  return Effect.flatMap(make(directory), (store) => body(store, directory)).pipe(Effect.provide(NodeContext.layer))
}

describe("ArtifactStore", () => {
  it.effect("keeps bytes at <sha256>.host, reads them back, counts them and removes them", () =>
    withStore((store, directory) =>
      Effect.gen(function*() {
        expect(yield* store.size).toEqual({ path: directory, count: 0, bytes: 0 })
        const one = new TextEncoder().encode("first archive")
        const two = new TextEncoder().encode("the second archive, longer")
        const first = yield* store.put(one)
        expect(first).toBe(sha(one))
        expect(store.path(first)).toBe(join(directory, `${first}.host`))
        expect(readFileSync(store.path(first))).toEqual(Buffer.from(one))
        expect(yield* store.has(first)).toBe(true)
        expect(yield* store.has(sha(two))).toBe(false)
        const second = yield* store.put(two)
        expect(yield* store.size).toEqual({ path: directory, count: 2, bytes: one.length + two.length })
        expect(Buffer.from(yield* store.read(second)).equals(Buffer.from(two))).toBe(true)
        expect(yield* store.remove(first)).toBe(true)
        expect(yield* store.remove(first)).toBe(false)
        expect(yield* store.has(first)).toBe(false)
        expect(readdirSync(directory)).toEqual([`${second}.host`])
        expect(yield* store.size).toEqual({ path: directory, count: 1, bytes: two.length })
      })
    ))

  it.effect("a second put of the same bytes writes nothing", () =>
    withStore((store) =>
      Effect.gen(function*() {
        const bytes = new TextEncoder().encode("same bytes")
        const digest = yield* store.put(bytes)
        const before = statSync(store.path(digest))
        const again = yield* store.put(bytes)
        expect(again).toBe(digest)
        const after = statSync(store.path(digest))
        expect(after.ino).toBe(before.ino)
        expect(after.mtimeMs).toBe(before.mtimeMs)
        expect((yield* store.size).count).toBe(1)
      })
    ))

  it.effect("keeps a detached signature beside its artifact and drops it with it", () =>
    withStore((store, directory) =>
      Effect.gen(function*() {
        const bytes = new TextEncoder().encode("signed archive")
        const digest = yield* store.put(bytes)
        expect(yield* store.signature(digest)).toBeUndefined()
        expect(yield* store.put(bytes, { detachedSignature: "ab".repeat(64) })).toBe(digest)
        expect(readFileSync(`${store.path(digest)}.sig`, "utf8")).toBe("ab".repeat(64))
        expect(yield* store.signature(digest)).toBe("ab".repeat(64))
        expect(yield* store.size).toEqual({ path: directory, count: 1, bytes: bytes.length })
        expect(yield* store.remove(digest)).toBe(true)
        expect(readdirSync(directory)).toEqual([])
      })
    ))

  it.effect("putFile hashes while copying and agrees with put", () =>
    withStore((store, directory) =>
      Effect.gen(function*() {
        const source = join(temp("host-artifact-src-"), "x.host")
        const content = Buffer.alloc(300_000, 7)
        writeFileSync(source, content)
        const digest = yield* store.putFile(source)
        expect(digest).toBe(sha(content))
        expect(yield* store.put(new Uint8Array(content))).toBe(digest)
        expect(readdirSync(directory)).toEqual([`${digest}.host`])
      })
    ))

  it.effect("a put that fails midway leaves neither a partial artifact nor its temporary file", () =>
    withStore((store, directory) =>
      Effect.gen(function*() {
        const kept = yield* store.put(new TextEncoder().encode("kept"))
        const failed = yield* Effect.either(store.putFile(join(directory, "does-not-exist.host")))
        expect(Either.isLeft(failed) && failed.left._tag).toBe("ArchiveIOError")
        expect(readdirSync(directory)).toEqual([`${kept}.host`])
      })
    ))

  it.effect("read refuses a missing, a damaged and a malformed digest", () =>
    withStore((store) =>
      Effect.gen(function*() {
        const digest = yield* store.put(new TextEncoder().encode("original"))
        writeFileSync(store.path(digest), "tampered")
        const corrupt = yield* Effect.flip(store.read(digest))
        expect(corrupt._tag === "ArtifactUnavailable" && corrupt.reason).toBe("corrupt")
        const missing = yield* Effect.flip(store.read(sha("never stored")))
        expect(missing._tag === "ArtifactUnavailable" && missing.reason).toBe("missing")
        expect(missing.message).toContain("is not in the artifact store")
        const malformed = yield* Effect.flip(store.read("../../etc/passwd"))
        expect(malformed._tag === "ArtifactUnavailable" && malformed.reason).toBe("invalid-digest")
        expect(yield* store.has("../x")).toBe(false)
      })
    ))

  it.effect("temporary files of interrupted puts are not counted", () =>
    withStore((store, directory) =>
      Effect.gen(function*() {
        const digest = yield* store.put(new TextEncoder().encode("whole"))
        writeFileSync(join(directory, ".put-interrupted"), "half")
        expect(yield* store.size).toEqual({ path: directory, count: 1, bytes: 5 })
        expect(existsSync(store.path(digest))).toBe(true)
      })
    ))
})

describe("artifacts_path", () => {
  it("defaults to storage/host/artifacts, is overridden by HOST_ARTIFACTS_PATH and may be absolute", () => {
    const decode = (raw: unknown, env: Record<string, string> = {}) => decodeConfig(raw, env, "config/host.yaml")
    expect(Either.map(decode(undefined), ({ config }) => config.artifacts_path)).toEqual(Either.right("storage/host/artifacts"))
    expect(Either.map(decode({ artifacts_path: "a" }, { HOST_ARTIFACTS_PATH: "/mnt/shared/artifacts" }), ({ config }) => config.artifacts_path))
      .toEqual(Either.right("/mnt/shared/artifacts"))
    const outside = decode({ artifacts_path: "../elsewhere" })
    expect(Either.isLeft(outside) && outside.left.message).toContain("artifacts_path")
  })
})
