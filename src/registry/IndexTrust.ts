import { Effect, Schema } from "effect"
import { createPublicKey, verify } from "node:crypto"

// The trust fields of a registry index (docs/registry.md "Trust"): the detached Ed25519 signature of
// registry.json's exact bytes, and the `serial` and `expires_at` that `host registry:build` writes.
// Signatures are made with @noble/ed25519 (archive/Signing.ts) and checked here with Node's own Ed25519
// (OpenSSL): RFC 8032 verification, which like noble's strict mode (`zip215: false`) refuses an S that is
// not below the group order and an R that is not canonically encoded (the R computed is compared byte for
// byte). Noble's pure-JavaScript check cost a short command about 30 ms of CPU on its first call, most of
// a `registry:sync` of a keyed registry (docs/decisions.md "A registry index is decoded once, quickly").

const hex = (length: number) => new RegExp(`^[0-9a-fA-F]{${length}}$`)

/** The DER prefix of an Ed25519 public key in SubjectPublicKeyInfo form (RFC 8410); the 32 key bytes follow. */
const ed25519SpkiPrefix = Buffer.from("302a300506032b6570032100", "hex")

/**
 * Why `signature` (the text of registry.json.sig) is not a valid signature of `bytes` by `publicKey`;
 * undefined when it is.
 */
export const verifyIndexSignature = (signature: string, bytes: Uint8Array, publicKey: string): Effect.Effect<string | undefined> => {
  if (!hex(128).test(signature)) return Effect.succeed("is not an Ed25519 signature (128 hex characters)")
  return Effect.sync(() => {
    try {
      const key = createPublicKey({ key: Buffer.concat([ed25519SpkiPrefix, Buffer.from(publicKey, "hex")]), format: "der", type: "spki" })
      return verify(null, bytes, key, Buffer.from(signature, "hex"))
    } catch {
      // A public_key that is no point of the curve verifies nothing.
      return false
    }
  }).pipe(
    Effect.map((valid) =>
      valid ? undefined : `is not a signature of registry.json by the registry's public_key ${publicKey.slice(0, 12)}… (the index or its signature was altered, or signed with another key)`
    )
  )
}

/** `serial` and `expires_at` as the trust checks read them; both optional, a wrong type is named. */
const TrustFields = Schema.Struct({
  serial: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  expires_at: Schema.optional(Schema.DateFromString.pipe(Schema.filter((date) => !Number.isNaN(date.getTime()) || "must be an ISO date and time")))
})

export const decodeTrustFields = Schema.decodeUnknownEither(TrustFields, { errors: "all" })
