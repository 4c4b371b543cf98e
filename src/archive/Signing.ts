import { Effect, Either, Schema } from "effect"
import type { ConfigDocument } from "../config/HostConfig.js"
import type { SignatureStatus } from "../domain/Installed.js"
import { parseJsonWithinDepth } from "../domain/JsonDepth.js"
import { problem, type Problem, problemsFromParseError } from "../domain/Problems.js"
import { KeyInvalid } from "./ArchiveErrors.js"

// The ed25519 implementation is loaded when a key is first used: planning reads the keyring from the
// config (this module) on every run, and signs or verifies nothing for folder sources (docs/decisions.md,
// "P4: a dry run in sync loads no archive code, and sorts nothing it does not print").
const ed25519 = () => import("@noble/ed25519")

// Ed25519 keys, signatures and the trust policy of docs/archives.md. The embedded signature signs the
// bytes of checksums.json (which pin every file); the detached `<archive>.sig` signs the whole archive.

const hexPattern = (length: number) => new RegExp(`^[0-9a-fA-F]{${length}}$`)

export const PublicKeyHex = Schema.String.pipe(
  Schema.filter((key) => hexPattern(64).test(key) || "must be an Ed25519 public key: 64 hex characters")
)
export const SignatureHex = Schema.String.pipe(
  Schema.filter((sig) => hexPattern(128).test(sig) || "must be an Ed25519 signature: 128 hex characters")
)

/** `signature.json` inside an archive. */
export const SignatureFile = Schema.Struct({
  alg: Schema.Literal("ed25519"),
  key: PublicKeyHex,
  sig: SignatureHex
})
export type SignatureFile = typeof SignatureFile.Type

/** The bytes written as `signature.json` (stable key order, two-space indent, final newline). */
export const encodeSignatureFile = (signature: SignatureFile): Uint8Array =>
  Buffer.from(`${JSON.stringify({ alg: signature.alg, key: signature.key, sig: signature.sig }, null, 2)}\n`)

/** A decoded secret key: its 32-byte seed and the public key derived from it (lowercase hex). */
export interface SecretKey {
  readonly seed: Uint8Array
  readonly publicKey: string
}

export interface KeyPair {
  readonly public_key: string
  /** The 32-byte seed as 64 hex characters. */
  readonly secret_key: string
}

export interface TrustedKey {
  readonly name: string
  /** Lowercase hex. */
  readonly publicKey: string
}

/** The keys a panel trusts: `public_key` (named "public_key") and every `trusted_keys` entry. */
export interface Keyring {
  readonly keys: ReadonlyArray<TrustedKey>
}

export const emptyKeyring: Keyring = { keys: [] }

export const keyringFromConfig = (config: Pick<ConfigDocument, "public_key" | "trusted_keys">): Keyring => ({
  keys: [
    ...(config.public_key === "" ? [] : [{ name: "public_key", publicKey: config.public_key.toLowerCase() }]),
    ...config.trusted_keys.map((key) => ({ name: key.name, publicKey: key.public_key.toLowerCase() }))
  ]
})

export const trustedName = (keyring: Keyring, publicKey: string): string | undefined =>
  keyring.keys.find((key) => key.publicKey === publicKey.toLowerCase())?.name

const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex")
const fromHex = (hex: string): Uint8Array => new Uint8Array(Buffer.from(hex, "hex"))

const derivePublicKey = (seed: Uint8Array): Effect.Effect<string> =>
  Effect.promise(() => ed25519().then((ed) => ed.getPublicKeyAsync(seed))).pipe(Effect.map(toHex))

const describeLength = (text: string): string =>
  /^[0-9a-fA-F]*$/.test(text) ? `got ${text.length} hex characters` : "it contains characters other than 0-9 and a-f"

/**
 * Decodes a secret key: 64 hex characters (the seed) or 128 (seed followed by its public key, as
 * libsodium writes them; the public half must match the seed).
 */
export const decodeSecretKey = (text: string, source: string): Effect.Effect<SecretKey, KeyInvalid> =>
  Effect.gen(function*() {
    const hex = text.trim()
    if (!hexPattern(64).test(hex) && !hexPattern(128).test(hex)) {
      return yield* new KeyInvalid({
        source,
        detail: `a secret key is 64 or 128 hex characters (${describeLength(hex)})`
      })
    }
    const seed = fromHex(hex.slice(0, 64))
    const publicKey = yield* derivePublicKey(seed)
    if (hex.length === 128 && hex.slice(64).toLowerCase() !== publicKey) {
      return yield* new KeyInvalid({ source, detail: "its second half is not the public key of its first half (the seed)" })
    }
    return { seed, publicKey }
  })

/** Decodes a public key (64 hex characters) to lowercase hex. */
export const decodePublicKey = (text: string, source: string): Effect.Effect<string, KeyInvalid> => {
  const hex = text.trim()
  return hexPattern(64).test(hex)
    ? Effect.succeed(hex.toLowerCase())
    : Effect.fail(new KeyInvalid({ source, detail: `a public key is 64 hex characters (${describeLength(hex)})` }))
}

export const generateKeyPair: Effect.Effect<KeyPair> = Effect.gen(function*() {
  const ed = yield* Effect.promise(ed25519)
  const seed = ed.utils.randomSecretKey()
  return { public_key: yield* derivePublicKey(seed), secret_key: toHex(seed) }
})

/** Signs `message`; the signature as 128 lowercase hex characters. */
export const signBytes = (message: Uint8Array, key: SecretKey): Effect.Effect<string> =>
  Effect.promise(() => ed25519().then((ed) => ed.signAsync(message, key.seed))).pipe(Effect.map(toHex))

/**
 * Whether `signature` (hex) is a valid RFC 8032 signature of `message` by `publicKey` (hex).
 * Malformed input (bad hex, a public key that is not a curve point) is simply not valid.
 */
export const verifyBytes = (signature: string, message: Uint8Array, publicKey: string): Effect.Effect<boolean> =>
  hexPattern(128).test(signature) && hexPattern(64).test(publicKey)
    ? Effect.tryPromise(() => ed25519().then((ed) => ed.verifyAsync(fromHex(signature), message, fromHex(publicKey), { zip215: false }))).pipe(
      Effect.orElseSucceed(() => false)
    )
    : Effect.succeed(false)

/** The signature side of an archive's status (`modified` is decided by the checksums, elsewhere). */
export interface SignatureCheck {
  readonly status: Exclude<SignatureStatus, "modified">
  /** The key that signed (or claims to have signed), lowercase hex. */
  readonly key: string | null
  /** The keyring name of `key` when it is trusted. */
  readonly trustedAs: string | null
  readonly problems: ReadonlyArray<Problem>
}

export interface SignatureInputs {
  readonly checksumsJson: Uint8Array
  /** The bytes of `signature.json`, when the archive has one. */
  readonly signatureJson: Uint8Array | undefined
  readonly archiveBytes: Uint8Array
  /** The text of the detached `<archive>.sig`, when there is one. */
  readonly detached: string | undefined
  /** How to name the detached signature in problems, e.g. `acme-x-1.0.0.host.sig`. */
  readonly detachedLabel: string
  readonly keyring: Keyring
}

type Outcome =
  | { readonly _tag: "None" }
  | { readonly _tag: "Valid"; readonly key: string }
  | { readonly _tag: "Invalid"; readonly key: string | null; readonly problem: Problem }
  | { readonly _tag: "Unverifiable"; readonly problem: Problem }

// Bounded like every JSON from outside (docs/decisions.md "JSON from outside nests at most 64 levels"):
// the refusal's message formats the value it refused.
const decodeSignatureFile = Schema.decodeUnknownEither(parseJsonWithinDepth(SignatureFile))

const checkEmbedded = (inputs: SignatureInputs): Effect.Effect<Outcome> =>
  Effect.gen(function*() {
    if (inputs.signatureJson === undefined) return { _tag: "None" } as const
    const decoded = decodeSignatureFile(Buffer.from(inputs.signatureJson).toString("utf8"))
    if (Either.isLeft(decoded)) {
      const why = problemsFromParseError(decoded.left).map((p) => `${p.path}: ${p.message}`).join("; ")
      return { _tag: "Invalid", key: null, problem: problem("signature.json", `is malformed (${why})`) } as const
    }
    const key = decoded.right.key.toLowerCase()
    const valid = yield* verifyBytes(decoded.right.sig, inputs.checksumsJson, key)
    return valid
      ? { _tag: "Valid", key } as const
      : {
        _tag: "Invalid",
        key,
        problem: problem("signature.json", `the signature does not verify: checksums.json was not signed by key ${key}`)
      } as const
  })

const checkDetached = (inputs: SignatureInputs, embedded: Outcome): Effect.Effect<Outcome> =>
  Effect.gen(function*() {
    if (inputs.detached === undefined) return { _tag: "None" } as const
    const label = inputs.detachedLabel
    const sig = inputs.detached.trim()
    if (!hexPattern(128).test(sig)) {
      return {
        _tag: "Invalid",
        key: null,
        problem: problem(label, `is malformed: a detached signature is 128 hex characters (${describeLength(sig)})`)
      } as const
    }
    const claimed = embedded._tag === "Valid" || embedded._tag === "Invalid" ? embedded.key : null
    const candidates = [...new Set([...(claimed === null ? [] : [claimed]), ...inputs.keyring.keys.map((k) => k.publicKey)])]
    for (const key of candidates) {
      if (yield* verifyBytes(sig, inputs.archiveBytes, key)) return { _tag: "Valid", key } as const
    }
    if (claimed !== null) {
      return {
        _tag: "Invalid",
        key: claimed,
        problem: problem(label, `the detached signature does not match the archive for key ${claimed} (nor any trusted key)`)
      } as const
    }
    return {
      _tag: "Unverifiable",
      problem: problem(
        label,
        candidates.length === 0
          ? "cannot be checked: no public key is configured (public_key, trusted_keys) and the archive has no signature.json"
          : "matches none of the trusted keys (public_key, trusted_keys), and the archive has no signature.json naming its key"
      )
    } as const
  })

/**
 * The signature status of an archive whose files match checksums.json: `invalid` if any signature
 * present fails; else `signed` when a valid signature is by a trusted key, `untrusted` when it is
 * by another key, `unsigned` when nothing could be verified.
 */
export const checkSignatures = (inputs: SignatureInputs): Effect.Effect<SignatureCheck> =>
  Effect.gen(function*() {
    const embedded = yield* checkEmbedded(inputs)
    const detached = yield* checkDetached(inputs, embedded)
    const outcomes = [embedded, detached]
    const problems: Array<Problem> = []
    for (const outcome of outcomes) {
      if (outcome._tag === "Invalid" || outcome._tag === "Unverifiable") problems.push(outcome.problem)
    }
    const invalid = outcomes.find((outcome) => outcome._tag === "Invalid")
    if (invalid !== undefined && invalid._tag === "Invalid") {
      return { status: "invalid", key: invalid.key, trustedAs: null, problems }
    }
    const validKeys = outcomes.flatMap((outcome) => (outcome._tag === "Valid" ? [outcome.key] : []))
    for (const key of validKeys) {
      const name = trustedName(inputs.keyring, key)
      if (name !== undefined) return { status: "signed", key, trustedAs: name, problems }
    }
    const key = validKeys[0]
    if (key !== undefined) {
      problems.push(problem(
        embedded._tag === "Valid" ? "signature.json" : inputs.detachedLabel,
        `signed by key ${key}, which is not in the keyring (public_key, trusted_keys)`
      ))
      return { status: "untrusted", key, trustedAs: null, problems }
    }
    return { status: "unsigned", key: null, trustedAs: null, problems }
  })

/**
 * The trust policy (docs/archives.md "Signature statuses"): `modified` and `invalid` never pass; with `require_signatures`
 * only `signed` passes. Left is the reason for a refusal.
 */
export const signaturePolicy = (status: SignatureStatus, requireSignatures: boolean): Either.Either<SignatureStatus, string> => {
  switch (status) {
    case "modified":
      return Either.left("its files differ from its checksums.json")
    case "invalid":
      return Either.left("its signature does not verify")
    case "untrusted":
      return requireSignatures
        ? Either.left("it is signed by a key that is not in the keyring, and require_signatures is on")
        : Either.right(status)
    case "unsigned":
      return requireSignatures ? Either.left("it is not signed, and require_signatures is on") : Either.right(status)
    case "signed":
      return Either.right(status)
  }
}
