import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { contentETag, sha256Base64url, sha256Hex } from "../../src/system/Hash.js"

// system/Hash.ts is the one sha256 of every box: archive checksums, registry caches, credentials' keys and
// every HTTP answer's ETag (which the fast lane and the router must give alike) all come from it, so each
// digest is held to node's own.

const inputs: ReadonlyArray<Uint8Array | string> = ["", "hello", "ünïcødé ✓", new Uint8Array([0, 1, 2, 255]), Buffer.alloc(70_000, 7)]
const reference = (data: Uint8Array | string, encoding: "hex" | "base64url") => createHash("sha256").update(data).digest(encoding)

describe("system/Hash", () => {
  it("gives node's sha256 in hex and base64url, for bytes and for strings as UTF-8", () => {
    for (const data of inputs) {
      expect(sha256Hex(data)).toBe(reference(data, "hex"))
      expect(sha256Base64url(data)).toBe(reference(data, "base64url"))
    }
    expect(sha256Hex("ü")).toBe(sha256Hex(Buffer.from("ü", "utf8")))
  })

  it("tags content with the quoted first 27 base64url characters of its sha256, the same for equal bytes given as text", () => {
    for (const data of inputs) expect(contentETag(data)).toBe(`"${reference(data, "base64url").slice(0, 27)}"`)
    expect(contentETag('{"data":{}}')).toBe(contentETag(Buffer.from('{"data":{}}')))
    expect(contentETag("a")).not.toBe(contentETag("b"))
    expect(contentETag("a")).toMatch(/^"[A-Za-z0-9_-]{27}"$/)
  })
})
