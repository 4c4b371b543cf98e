import { describe, expect, it } from "vitest"
import { Either } from "effect"
import { parseTar } from "../../src/archive/Tar.js"
import { gz, packageEntries, rawTar } from "./helpers.js"

// The first block of a tar stream decides whether it is tar at all. The parser reads that block alone
// and its own decoding of the header is the check (docs/decisions.md "registry:build: less work around
// each archive"): a block it cannot decode, with a wrong checksum or of zeros is "not tar"; damage
// further on is damage.

const honest = rawTar(packageEntries({ "README.md": "hello\n" }))

const failure = (data: Buffer) => {
  const result = parseTar(data, 21)
  return Either.isLeft(result) ? result.left : undefined
}

describe("the first tar block", () => {
  it("an honest stream reads in full", () => {
    const result = parseTar(honest, 21)
    expect(Either.isRight(result) && result.right.map((entry) => entry.path)).toEqual(["checksums.json", "extension.yaml", "README.md"])
  })

  it("a first header with a wrong checksum is not tar", () => {
    const data = Buffer.from(honest)
    data[0] = data[0]! ^ 0x01
    expect(failure(data)).toEqual({ _tag: "NotTar", detail: "the data is neither gzip nor tar" })
  })

  it("a zero block first is not tar", () => {
    expect(failure(Buffer.concat([Buffer.alloc(512), honest]))).toEqual({ _tag: "NotTar", detail: "the data is neither gzip nor tar" })
  })

  it("text is not tar, and gzip inside is compressed twice", () => {
    expect(failure(Buffer.from("just text, no tar headers here\n".repeat(40)))?._tag).toBe("NotTar")
    expect(failure(Buffer.concat([gz(honest), Buffer.alloc(1024)]))).toEqual({ _tag: "NotTar", detail: "the tar data is compressed twice" })
  })

  it("less than a block is not tar", () => {
    expect(failure(honest.subarray(0, 100))).toEqual({ _tag: "NotTar", detail: "the data is neither gzip nor tar" })
  })

  it("a wrong checksum in a later header is damage, not 'not tar'", () => {
    // The second entry's header: after the first header and checksums.json's data, padded to a block.
    const data = Buffer.from(honest)
    const first = Buffer.from(packageEntries({ "README.md": "hello\n" })[0]!.data ?? "")
    const second = 512 + Math.ceil(first.length / 512) * 512
    data[second] = data[second]! ^ 0x01
    const refused = failure(data)
    expect(refused?._tag).toBe("Corrupt")
    expect(refused !== undefined && "detail" in refused && refused.detail).toContain("checksum failure")
  })
})
