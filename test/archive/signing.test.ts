import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign as nodeSign,
  verify as nodeVerify
} from "node:crypto"
import { afterEach } from "vitest"
import { defaultLimits, enforceTrust, inspectArchive, type Inspection, packTree } from "../../src/archive/Archive.js"
import {
  decodePublicKey,
  decodeSecretKey,
  emptyKeyring,
  generateKeyPair,
  type Keyring,
  keyringFromConfig,
  signaturePolicy,
  signBytes,
  verifyBytes
} from "../../src/archive/Signing.js"
import { encodeTar, gzipDeterministic, type TarEntryToWrite } from "../../src/archive/Tar.js"
import type { SignatureStatus } from "../../src/domain/Installed.js"
import { cleanupAll, fixtureCopy, spkiPrefix } from "./helpers.js"

afterEach(cleanupAll)

const run = <A, E>(effect: Effect.Effect<A, E, NodeContext.NodeContext>) => effect.pipe(Effect.provide(NodeContext.layer))

const nodePublicKey = (hex: string) =>
  createPublicKey({ key: Buffer.concat([spkiPrefix, Buffer.from(hex, "hex")]), format: "der", type: "spki" })

const inspect = (bytes: Uint8Array, keyring: Keyring, detachedSignature?: string) =>
  inspectArchive(bytes, { source: "acme-full-1.2.0.host", limits: defaultLimits, keyring, detachedSignature })

/** Rebuilds an archive from an inspection, with files replaced. */
const repack = (inspection: Inspection, replace: Readonly<Record<string, string | Uint8Array>>) =>
  gzipDeterministic(encodeTar(
    inspection.files.map((file): TarEntryToWrite => ({
      type: "File",
      path: file.path,
      data: file.path in replace ? Buffer.from(replace[file.path]!) : file.data,
      mode: 0o644
    }))
  ))

const text = (inspection: Inspection, path: string) =>
  Buffer.from(inspection.files.find((file) => file.path === path)!.data).toString("utf8")

const signedFixture = Effect.gen(function*() {
  const trusted = yield* generateKeyPair
  const secretKey = yield* decodeSecretKey(trusted.secret_key, "test")
  const packed = yield* packTree(fixtureCopy("full"), { secretKey })
  return { trusted, packed }
})

describe("keys", () => {
  it.effect("generates pairs whose public key node:crypto derives from the seed too", () =>
    Effect.gen(function*() {
      const pair = yield* generateKeyPair
      expect(pair.public_key).toMatch(/^[0-9a-f]{64}$/)
      expect(pair.secret_key).toMatch(/^[0-9a-f]{64}$/)
      const pkcs8 = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), Buffer.from(pair.secret_key, "hex")])
      const nodeKey = createPublicKey(createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" }))
      const raw = nodeKey.export({ format: "der", type: "spki" }).subarray(spkiPrefix.length)
      expect(raw.toString("hex")).toBe(pair.public_key)
    }))

  it.effect("accepts a 64-hex seed and a 128-hex seed+public key, in either case", () =>
    Effect.gen(function*() {
      const pair = yield* generateKeyPair
      expect((yield* decodeSecretKey(pair.secret_key, "HOST_SECRET_KEY")).publicKey).toBe(pair.public_key)
      const long = `${pair.secret_key}${pair.public_key}`.toUpperCase()
      expect((yield* decodeSecretKey(`  ${long}\n`, "HOST_SECRET_KEY")).publicKey).toBe(pair.public_key)
      expect(yield* decodePublicKey(pair.public_key.toUpperCase(), "public_key")).toBe(pair.public_key)
    }))

  it.effect.each<readonly [string, string]>([
    ["abc", "a secret key is 64 or 128 hex characters (got 3 hex characters)"],
    ["z".repeat(64), "it contains characters other than 0-9 and a-f"],
    ["", "(got 0 hex characters)"],
    ["11".repeat(32) + "22".repeat(32), "its second half is not the public key of its first half"]
  ])("refuses the secret key %j with a clear message", ([key, expected]) =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(decodeSecretKey(key, "HOST_SECRET_KEY"))
      expect(error._tag).toBe("KeyInvalid")
      expect(error.message).toContain("HOST_SECRET_KEY is not a valid Ed25519 key: ")
      expect(error.message).toContain(expected)
    }))

  it.effect("refuses a malformed public key", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(decodePublicKey("12345", "--key"))
      expect(error.message).toBe("--key is not a valid Ed25519 key: a public key is 64 hex characters (got 5 hex characters)")
    }))

  it.effect("treats malformed signatures and keys as not valid, never as a crash", () =>
    Effect.gen(function*() {
      const message = Buffer.from("hello")
      expect(yield* verifyBytes("zz", message, "00".repeat(32))).toBe(false)
      expect(yield* verifyBytes("00".repeat(64), message, "00".repeat(32))).toBe(false)
      expect(yield* verifyBytes("00".repeat(64), message, "ff".repeat(32))).toBe(false)
    }))
})

describe("interop with node:crypto's Ed25519", () => {
  it.effect("node verifies our embedded and detached signatures", () =>
    run(Effect.gen(function*() {
      const { packed, trusted } = yield* signedFixture
      const inspection = yield* inspect(packed.bytes, emptyKeyring)
      const signature = JSON.parse(text(inspection, "signature.json"))
      expect(signature).toEqual({ alg: "ed25519", key: trusted.public_key, sig: expect.stringMatching(/^[0-9a-f]{128}$/) })
      const checksums = inspection.files.find((file) => file.path === "checksums.json")!.data
      const key = nodePublicKey(trusted.public_key)
      expect(nodeVerify(null, checksums, key, Buffer.from(signature.sig, "hex"))).toBe(true)
      expect(nodeVerify(null, packed.bytes, key, Buffer.from(packed.detachedSignature!, "hex"))).toBe(true)
      expect(nodeVerify(null, Buffer.from("other"), key, Buffer.from(signature.sig, "hex"))).toBe(false)
    })))

  it.effect("we verify node's signatures, and sign with node's keys exactly as node does", () =>
    Effect.gen(function*() {
      const { privateKey, publicKey } = generateKeyPairSync("ed25519")
      const publicHex = publicKey.export({ format: "der", type: "spki" }).subarray(spkiPrefix.length).toString("hex")
      const seedHex = Buffer.from(privateKey.export({ format: "jwk" }).d!, "base64url").toString("hex")
      const message = Buffer.from("checksums.json bytes")
      const nodeSignature = nodeSign(null, message, privateKey).toString("hex")
      expect(yield* verifyBytes(nodeSignature, message, publicHex)).toBe(true)
      const ours = yield* signBytes(message, yield* decodeSecretKey(seedHex, "node"))
      expect(ours).toBe(nodeSignature) // Ed25519 is deterministic
    }))
})

describe("signature status", () => {
  it.effect("matrix: trusted, trusted_keys, untrusted, tampered file, tampered checksums, tampered signature, none", () =>
    run(Effect.gen(function*() {
      const { packed, trusted } = yield* signedFixture
      const other = yield* generateKeyPair
      const asPublicKey = keyringFromConfig({ public_key: trusted.public_key, trusted_keys: [] })
      const asTrustedKey = keyringFromConfig({
        public_key: other.public_key,
        trusted_keys: [{ name: "acme-release", public_key: trusted.public_key.toUpperCase() }]
      })
      const otherOnly = keyringFromConfig({ public_key: other.public_key, trusted_keys: [] })

      const signed = yield* inspect(packed.bytes, asPublicKey)
      expect(signed.status).toBe("signed")
      expect(signed.signature).toMatchObject({ key: trusted.public_key, trustedAs: "public_key" })
      expect(signed.problems).toEqual([])

      const viaKeyring = yield* inspect(packed.bytes, asTrustedKey)
      expect(viaKeyring.signature).toMatchObject({ status: "signed", trustedAs: "acme-release" })

      const untrusted = yield* inspect(packed.bytes, otherOnly)
      expect(untrusted.status).toBe("untrusted")
      expect(untrusted.problems[0]!.message).toContain(`signed by key ${trusted.public_key}, which is not in the keyring`)

      const tamperedFile = yield* inspect(yield* repack(signed, { "src/routes/web.ts": "export default 'pwned'\n" }), asPublicKey)
      expect(tamperedFile.status).toBe("modified")
      expect(tamperedFile.problems[0]).toEqual({ path: "src/routes/web.ts", message: "content differs from checksums.json" })

      // the attacker fixes checksums.json too: the signature over it no longer verifies
      const evil = "export default 'pwned'\n"
      const checksums = JSON.parse(text(signed, "checksums.json"))
      checksums["src/routes/web.ts"] = createHash("sha256").update(evil).digest("hex")
      const tamperedChecksums = yield* inspect(
        yield* repack(signed, { "src/routes/web.ts": evil, "checksums.json": `${JSON.stringify(checksums, null, 2)}\n` }),
        asPublicKey
      )
      expect(tamperedChecksums.status).toBe("invalid")
      expect(tamperedChecksums.problems[0]!.message).toContain("the signature does not verify")

      const signature = JSON.parse(text(signed, "signature.json"))
      const flipped = `${signature.sig.slice(0, 10)}${signature.sig[10] === "0" ? "1" : "0"}${signature.sig.slice(11)}`
      const tamperedSignature = yield* inspect(
        yield* repack(signed, { "signature.json": JSON.stringify({ ...signature, sig: flipped }) }),
        asPublicKey
      )
      expect(tamperedSignature.status).toBe("invalid")

      // a valid signature by another key, with the key swapped in signature.json: invalid, not signed
      const swapped = yield* inspect(
        yield* repack(signed, { "signature.json": JSON.stringify({ ...signature, key: other.public_key }) }),
        otherOnly
      )
      expect(swapped.status).toBe("invalid")

      const malformed = yield* inspect(yield* repack(signed, { "signature.json": "{ nope" }), asPublicKey)
      expect(malformed.status).toBe("invalid")
      expect(malformed.problems[0]!.message).toContain("is malformed")
      const wrongAlg = yield* inspect(yield* repack(signed, { "signature.json": JSON.stringify({ ...signature, alg: "rsa" }) }), asPublicKey)
      expect(wrongAlg.status).toBe("invalid")

      const unsigned = yield* inspect((yield* packTree(fixtureCopy("full"))).bytes, asPublicKey)
      expect(unsigned.status).toBe("unsigned")
      expect(unsigned.problems).toEqual([])
    })))

  it.effect("detached signatures: accepted alone, checked against the embedded key, malformed ones invalid", () =>
    run(Effect.gen(function*() {
      const { packed, trusted } = yield* signedFixture
      const keyring = keyringFromConfig({ public_key: trusted.public_key, trusted_keys: [] })
      const secretKey = yield* decodeSecretKey(trusted.secret_key, "test")

      expect((yield* inspect(packed.bytes, keyring, `${packed.detachedSignature}\n`)).status).toBe("signed")
      const wrong = yield* inspect(packed.bytes, keyring, yield* signBytes(Buffer.from("something else"), secretKey))
      expect(wrong.status).toBe("invalid")
      expect(wrong.problems[0]!.path).toBe("acme-full-1.2.0.host.sig")
      expect((yield* inspect(packed.bytes, keyring, "not hex")).status).toBe("invalid")

      // an unsigned archive with only a detached signature
      const plain = yield* packTree(fixtureCopy("full"))
      const detached = yield* signBytes(plain.bytes, secretKey)
      const alone = yield* inspect(plain.bytes, keyring, detached)
      expect(alone.signature).toMatchObject({ status: "signed", key: trusted.public_key, trustedAs: "public_key" })
      // ...that no configured key can check: unsigned, and said so
      const unknown = yield* inspect(plain.bytes, emptyKeyring, detached)
      expect(unknown.status).toBe("unsigned")
      expect(unknown.problems[0]!.message).toContain("cannot be checked: no public key is configured")
    })))

  it.effect("the policy: invalid and modified never pass; with require_signatures only signed does", () =>
    run(Effect.gen(function*() {
      const statuses: ReadonlyArray<SignatureStatus> = ["signed", "untrusted", "invalid", "modified", "unsigned"]
      const passes = (require: boolean) => statuses.filter((status) => Either.isRight(signaturePolicy(status, require)))
      expect(passes(false)).toEqual(["signed", "untrusted", "unsigned"])
      expect(passes(true)).toEqual(["signed"])
      expect(Either.getLeft(signaturePolicy("unsigned", true))._tag === "Some").toBe(true)

      const { packed } = yield* signedFixture
      const untrusted = yield* inspect(packed.bytes, emptyKeyring)
      expect((yield* enforceTrust(untrusted, false)).status).toBe("untrusted")
      const refused = yield* Effect.flip(enforceTrust(untrusted, true))
      expect(refused._tag).toBe("SignatureRefused")
      expect(refused.message).toBe(
        "acme-full-1.2.0.host is refused (signature untrusted): it is signed by a key that is not in the keyring, and require_signatures is on"
      )
      const modified = yield* inspect(yield* repack(untrusted, { "extension.yaml": "id: x\n" }), emptyKeyring)
      const refusedModified = yield* Effect.flip(enforceTrust(modified, false))
      expect(refusedModified._tag === "ArchiveRefused" && refusedModified.reason).toBe("checksum-mismatch")
    })))
})
