import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { randomBytes } from "node:crypto"
import { gunzipAndParseTar, gunzipAndParseTarStreamed } from "../../src/archive/Tar.js"
import { gz, packageEntries, rawTar } from "./helpers.js"

// An archive that inflates to one stream chunk is read at once on the calling thread (docs/decisions.md
// "Small archives are inflated at once"); its answer must be the stream's, for honest and broken archives.

const maxEntries = 21

const bothReads = (data: Uint8Array, maxOutput = 8 * 1024 * 1024) =>
  Effect.gen(function*() {
    const atOnce = yield* Effect.either(gunzipAndParseTar(data, maxOutput, maxEntries))
    const streamed = yield* Effect.either(gunzipAndParseTarStreamed(data, maxOutput, maxEntries))
    return { atOnce, streamed }
  })

/** A tar of one 16 MiB file of zeros: about 16 KiB compressed. */
const bomb = () => gz(rawTar([{ path: "zeros.bin", data: Buffer.alloc(16 * 1024 * 1024) }]))

const honest = rawTar(packageEntries({ "README.md": "hello\n", "dist/app.js": "console.log(1)\n" }))

const cases: ReadonlyArray<readonly [string, () => Uint8Array, number?]> = [
  ["an honest archive", () => gz(honest)],
  ["a gzip stream cut short", () => gz(honest).subarray(0, 200)],
  ["a damaged deflate block", () => {
    const data = Buffer.from(gz(honest))
    data[40] = data[40]! ^ 0xff
    data[41] = data[41]! ^ 0xff
    return data
  }],
  ["a wrong gzip trailer (CRC)", () => {
    const data = Buffer.from(gz(honest))
    data[data.length - 6] = data[data.length - 6]! ^ 0xff
    return data
  }],
  ["bytes that are not gzip after the member", () => Buffer.concat([gz(honest), Buffer.from("not gzip at all")])],
  ["zeros after the member", () => Buffer.concat([gz(honest), Buffer.alloc(64)])],
  ["two gzip members", () => Buffer.concat([gz(honest.subarray(0, 1024)), gz(honest.subarray(1024))])],
  ["tar compressed twice", () => gz(gz(honest))],
  ["gzip of something that is not tar", () => gz(Buffer.from("just some text, not a tar stream".repeat(40)))],
  ["tar without its end-of-archive marker", () => gz(honest.subarray(0, honest.length - 1024))],
  ["tar that does not end on a block", () => gz(honest.subarray(0, honest.length - 100))],
  ["a damaged tar header", () => {
    const tar = Buffer.from(honest)
    tar[520] = tar[520]! ^ 0xff
    return gz(tar)
  }],
  ["too many entries", () => gz(rawTar(Array.from({ length: 30 }, (_, i) => ({ path: `f${i}.txt`, data: "x" }))))],
  ["data after the end-of-archive marker", () => gz(Buffer.concat([honest, Buffer.from("trailing")]))],
  ["more than the output cap, in one chunk", () => gz(honest), 4096],
  ["a bomb past the cap", bomb, 8 * 1024 * 1024],
  ["zeros past the cap", () => gz(Buffer.alloc(16 * 1024 * 1024)), 8 * 1024 * 1024],
  ["more than one chunk, honest", () => gz(rawTar(packageEntries({ "big.bin": randomBytes(400 * 1024).toString("hex") })))],
  ["more than one chunk, then cut short", () => gz(rawTar(packageEntries({ "big.bin": randomBytes(400 * 1024).toString("hex") }))).subarray(0, 300 * 1024)]
]

describe("a small archive is read at once with the stream's answers", () => {
  for (const [name, make, maxOutput] of cases) {
    it.effect(name, () =>
      Effect.gen(function*() {
        const { atOnce, streamed } = yield* bothReads(make(), maxOutput)
        expect(atOnce).toEqual(streamed)
      }))
  }

  it.effect("the honest archive reads in full, and a broken one is refused", () =>
    Effect.gen(function*() {
      const { atOnce } = yield* bothReads(gz(honest))
      expect(Either.isRight(atOnce) && atOnce.right.map((entry) => entry.path)).toEqual([
        "checksums.json",
        "extension.yaml",
        "README.md",
        "dist/app.js"
      ])
      const cut = yield* bothReads(gz(honest).subarray(0, 200))
      expect(Either.isLeft(cut.atOnce) && cut.atOnce.left._tag).toBe("Truncated")
      const bombed = yield* bothReads(bomb())
      expect(Either.isLeft(bombed.atOnce) && bombed.atOnce.left._tag).toBe("TooLarge")
    }))
})
