import { Effect, Schema } from "effect"

// The trust fields of a registry index (docs/registry.md "Trust"): the detached Ed25519 signature of
// registry.json's exact bytes, and the `serial` and `expires_at` that `host registry:build` writes.
// Ed25519 is @noble/ed25519, as archive/Signing.ts uses it; registry/ may not import archive/ (they sit
// side by side, docs/architecture.md "Layers"), so the few lines of verifying are here. The library is
// loaded on the first keyed registry, not on every start.
const ed25519 = () => import("@noble/ed25519")

const hex = (length: number) => new RegExp(`^[0-9a-fA-F]{${length}}$`)

const fromHex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text, "hex"))

/**
 * Why `signature` (the text of registry.json.sig) is not a valid signature of `bytes` by `publicKey`;
 * undefined when it is.
 */
export const verifyIndexSignature = (signature: string, bytes: Uint8Array, publicKey: string): Effect.Effect<string | undefined> => {
  if (!hex(128).test(signature)) return Effect.succeed("is not an Ed25519 signature (128 hex characters)")
  return Effect.tryPromise(() =>
    ed25519().then((ed) => ed.verifyAsync(fromHex(signature), bytes, fromHex(publicKey), { zip215: false }))
  ).pipe(
    Effect.orElseSucceed(() => false),
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
