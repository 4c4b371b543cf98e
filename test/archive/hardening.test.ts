import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createGzip } from "node:zlib"
import { afterEach } from "vitest"
import { defaultLimits, inspectArchive } from "../../src/archive/Archive.js"
import { emptyKeyring } from "../../src/archive/Signing.js"
import { cleanupAll, gz, packageEntries, rawTar, sha256 } from "./helpers.js"

// Findings of the attack on archives (issue 16): a bomb hidden after the tar end marker, a
// checksums.json that lists "__proto__", and one nested 100,000 levels deep.

afterEach(cleanupAll)

const inspect = (bytes: Uint8Array) =>
  inspectArchive(bytes, { source: "t.host", limits: defaultLimits, keyring: emptyKeyring }).pipe(Effect.provide(NodeContext.layer))

/** gzip of `head` followed by `zeroMiB` MiB of zeros, compressed as a stream (never held inflated). */
const withTrailingZeros = (head: Uint8Array, zeroMiB: number) =>
  Effect.promise(async () => {
    const gzip = createGzip({ level: 9 })
    const chunks: Array<Buffer> = []
    gzip.on("data", (chunk: Buffer) => chunks.push(chunk))
    const ended = new Promise((resolve) => gzip.on("end", resolve))
    gzip.write(head)
    const zeros = Buffer.alloc(1024 * 1024)
    for (let i = 0; i < zeroMiB; i++) if (!gzip.write(zeros)) await new Promise((resolve) => gzip.once("drain", resolve))
    gzip.end()
    await ended
    return Buffer.concat(chunks)
  })

describe("data after the end-of-archive marker", () => {
  it.effect("a bomb of zeros after the end marker is refused for its trailer, not inflated to the bomb cap", () =>
    Effect.gen(function*() {
      const bytes = yield* withTrailingZeros(rawTar(packageEntries()), 64)
      const refused = yield* inspect(bytes).pipe(Effect.flip)
      expect(refused._tag).toBe("ArchiveRefused")
      expect(refused._tag === "ArchiveRefused" && refused.reason).toBe("corrupt")
      expect(refused.message).toContain("more than 1 MiB of data after its end-of-archive marker")
    }))

  it.effect("tar's own record padding (zeros up to 1 MiB) is still accepted", () =>
    Effect.gen(function*() {
      const bytes = gz(Buffer.concat([rawTar(packageEntries()), Buffer.alloc(512 * 1024)]))
      const inspection = yield* inspect(bytes)
      expect(inspection.status).toBe("unsigned")
    }))

  it.effect("anything but zeros after the end marker is refused", () =>
    Effect.gen(function*() {
      const bytes = gz(Buffer.concat([rawTar(packageEntries()), Buffer.alloc(512 * 1024, 0x41)]))
      const refused = yield* inspect(bytes).pipe(Effect.flip)
      expect(refused.message).toContain("(corrupt): it has data after its end-of-archive marker")
    }))
})

describe("checksums.json", () => {
  it.effect("a listed \"__proto__\" that is not in the archive is a missing file", () =>
    Effect.gen(function*() {
      const files = { "README.md": "hello\n" }
      const listed: Record<string, string> = JSON.parse(
        `{"README.md": "${sha256("hello\n")}", "__proto__": "${sha256("x")}", "extension.yaml": "${sha256(packageEntries()[1]!.data as string)}"}`
      )
      const checksums = `${JSON.stringify(listed, Object.keys(listed).sort(), 2)}\n`
      expect(checksums).toContain("__proto__")
      const inspection = yield* inspect(gz(rawTar(packageEntries(files, { checksums }))))
      expect(inspection.status).toBe("modified")
      expect(inspection.integrity).toEqual([
        { reason: "missing-file", path: "__proto__", message: "is listed in checksums.json but missing from the archive" }
      ])
    }))

  it.effect("a file named constructor that is not listed is unlisted (no inherited keys)", () =>
    Effect.gen(function*() {
      const entries = packageEntries({ "README.md": "hello\n" }, { extra: [{ path: "constructor", data: "x" }] })
      const inspection = yield* inspect(gz(rawTar(entries)))
      expect(inspection.integrity.map((p) => [p.reason, p.path])).toEqual([["unlisted-file", "constructor"]])
    }))

  it.effect("nested 100,000 levels deep is refused as malformed (no stack overflow)", () =>
    Effect.gen(function*() {
      for (const checksums of ["[".repeat(100_000) + "]".repeat(100_000), "[".repeat(100_000), `{"a": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`]) {
        const refused = yield* inspect(gz(rawTar(packageEntries(undefined, { checksums })))).pipe(Effect.flip)
        expect(refused._tag).toBe("ArchiveRefused")
        expect(refused._tag === "ArchiveRefused" && refused.reason).toBe("checksums-malformed")
      }
    }))
})
