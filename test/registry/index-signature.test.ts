import * as ed from "@noble/ed25519"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { verifyIndexSignature } from "../../src/registry/IndexTrust.js"

// registry.json.sig is made with @noble/ed25519 (host registry:build --sign) and checked with Node's Ed25519
// (registry/IndexTrust.ts). The check must accept exactly what noble's strict verification accepts: here the
// malleable and altered forms a mirror could serve (docs/registry.md "Trust").

const order = 2n ** 252n + 27742317777372353535851937790883648493n
const toHex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex")

const littleEndian = (value: bigint): Uint8Array => {
  const out = new Uint8Array(32)
  for (let index = 0; index < 32; index++) out[index] = Number((value >> BigInt(8 * index)) & 0xffn)
  return out
}
const fromLittleEndian = (bytes: Uint8Array): bigint => bytes.reduceRight((value, byte) => (value << 8n) | BigInt(byte), 0n)

describe("the index signature", () => {
  it("accepts noble's signature of the exact bytes and refuses every altered form noble refuses", async () => {
    const secret = ed.utils.randomSecretKey()
    const publicKey = toHex(await ed.getPublicKeyAsync(secret))
    const other = toHex(await ed.getPublicKeyAsync(ed.utils.randomSecretKey()))
    const bytes = new TextEncoder().encode(`{"version":"1.0","serial":7,"extensions":[]}\n`)
    const signature = await ed.signAsync(bytes, secret)
    const check = (candidate: Uint8Array, message: Uint8Array = bytes, key = publicKey) =>
      Effect.runPromise(verifyIndexSignature(toHex(candidate), message, key))
    const nobleAccepts = (candidate: Uint8Array, message: Uint8Array, key: string) =>
      ed.verifyAsync(Uint8Array.from(candidate), Uint8Array.from(message), Uint8Array.from(Buffer.from(key, "hex")), { zip215: false })
        .catch(() => false)

    // S + L: the same point equation, a second encoding of one signature (malleability).
    const malleable = Uint8Array.from(signature)
    malleable.set(littleEndian(fromLittleEndian(signature.subarray(32)) + order), 32)
    const flippedR = Uint8Array.from(signature)
    flippedR[0]! ^= 1
    const flippedS = Uint8Array.from(signature)
    flippedS[40]! ^= 1
    const altered = Uint8Array.from(bytes)
    altered[10]! ^= 1
    const cases: ReadonlyArray<readonly [string, Uint8Array, Uint8Array, string]> = [
      ["the signature", signature, bytes, publicKey],
      ["S + L", malleable, bytes, publicKey],
      ["another R", flippedR, bytes, publicKey],
      ["another S", flippedS, bytes, publicKey],
      ["other bytes", signature, altered, publicKey],
      ["another key", signature, bytes, other],
      ["zeros", new Uint8Array(64), bytes, publicKey]
    ]
    const verdicts = await Promise.all(cases.map(async ([name, candidate, message, key]) => ({
      name,
      host: (await check(candidate, message, key)) === undefined,
      noble: await nobleAccepts(candidate, message, key)
    })))
    expect(verdicts.map(({ name, noble }) => ({ name, host: noble, noble }))).toEqual(verdicts)
    expect(verdicts.filter((verdict) => verdict.host).map((verdict) => verdict.name)).toEqual(["the signature"])
    expect(await check(signature, altered)).toMatch(/^is not a signature of registry\.json by the registry's public_key /)
    expect(await Effect.runPromise(verifyIndexSignature("abc", bytes, publicKey))).toBe("is not an Ed25519 signature (128 hex characters)")
  })
})
