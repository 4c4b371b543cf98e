import { Data } from "effect"
import type { Problem } from "../domain/Problems.js"

// Errors of registry/: each message is one sentence naming the URL (or file) and the check that failed.

/** `registry_url` is empty. */
export class RegistryNotConfigured extends Data.TaggedError("RegistryNotConfigured")<{}> {
  override get message() {
    return "no registry is configured: set registry_url in config/host.yaml or the HOST_REGISTRY_URL environment variable"
  }
}

/** `registry "official": ` before a message about one of several configured registries (docs/registry.md "Several registries"). */
const named = (registry: string | undefined) => (registry === undefined ? "" : `registry "${registry}": `)

/** Fetching a URL (the index, an archive, a signature) failed; `registry` names whose index it was. */
export class RegistryFetchFailed extends Data.TaggedError("RegistryFetchFailed")<{
  readonly url: string
  readonly reason: "not-found" | "http-status" | "unreachable" | "timeout" | "too-large" | "invalid-url"
  readonly detail: string
  readonly registry?: string
}> {
  override get message() {
    return `${named(this.registry)}cannot fetch ${this.url}: ${this.detail}`
  }
}

/** registry.json is not JSON, or not a registry index. */
export class RegistryIndexInvalid extends Data.TaggedError("RegistryIndexInvalid")<{
  readonly url: string
  readonly problems: ReadonlyArray<Problem>
  readonly registry?: string
}> {
  override get message() {
    const first = this.problems[0]
    const more = this.problems.length > 1 ? ` (and ${this.problems.length - 1} more)` : ""
    return `${named(this.registry)}${this.url} is not a valid registry index: ${first === undefined ? "unreadable" : `${first.path}: ${first.message}`}${more}`
  }
}

// The trust checks of a registry with `public_key` (docs/registry.md "Trust"): each refusal names the
// registry, and the cache is left as it was.

/** A keyed registry's index has no `registry.json.sig` (missing, or 404). */
export class RegistryIndexUnsigned extends Data.TaggedError("RegistryIndexUnsigned")<{
  readonly registry: string
  readonly url: string
  readonly detail: string
}> {
  override get message() {
    return `${named(this.registry)}the index is refused (RegistryIndexUnsigned): ${this.url} has no signature (${this.detail}); the registry has a public_key, so its registry.json must be signed (host registry:build --sign)`
  }
}

/** `registry.json.sig` is not a valid Ed25519 signature of registry.json's bytes by the registry's key. */
export class RegistryIndexSignatureInvalid extends Data.TaggedError("RegistryIndexSignatureInvalid")<{
  readonly registry: string
  readonly url: string
  readonly detail: string
}> {
  override get message() {
    return `${named(this.registry)}the index is refused (RegistryIndexSignatureInvalid): ${this.url} ${this.detail}`
  }
}

/** The index's `serial` is lower than one already accepted from this registry (a rollback). */
export class RegistryIndexRolledBack extends Data.TaggedError("RegistryIndexRolledBack")<{
  readonly registry: string
  readonly serial: number | null
  readonly accepted: number
}> {
  override get message() {
    return `${named(this.registry)}the index is refused (RegistryIndexRolledBack): its serial ${this.serial ?? "(none)"} is lower than ${this.accepted}, already accepted from this registry; an older index is being served`
  }
}

/** The index is past its `expires_at` (a frozen index). */
export class RegistryIndexExpired extends Data.TaggedError("RegistryIndexExpired")<{
  readonly registry: string
  readonly expiresAt: string | null
}> {
  override get message() {
    return this.expiresAt === null
      ? `${named(this.registry)}the index is refused (RegistryIndexExpired): it has no expires_at; a signed index must say until when it holds (host registry:build --expires-days)`
      : `${named(this.registry)}the index is refused (RegistryIndexExpired): it expired at ${this.expiresAt}; the publisher must build and sign it again`
  }
}

/** `--registry NAME` or `registry: NAME` names no configured registry. */
export class RegistryUnknown extends Data.TaggedError("RegistryUnknown")<{
  readonly name: string
  readonly configured: ReadonlyArray<string>
}> {
  override get message() {
    return `there is no registry named "${this.name}" (configured: ${this.configured.length === 0 ? "none" : this.configured.join(", ")}); add it under registries in config/host.yaml`
  }
}

export type RegistryTrustError =
  | RegistryIndexUnsigned
  | RegistryIndexSignatureInvalid
  | RegistryIndexRolledBack
  | RegistryIndexExpired

/** A reference does not parse, names an extension the registry lacks, or no version matches. */
export class RegistryLookupFailed extends Data.TaggedError("RegistryLookupFailed")<{
  readonly reference: string
  readonly reason: "invalid-reference" | "unknown-extension" | "no-matching-version" | "bad-url"
  readonly detail: string
}> {
  override get message() {
    return `${this.reference}: ${this.detail}`
  }
}

/** A download's sha256 differs from the one the index lists. */
export class ChecksumMismatch extends Data.TaggedError("ChecksumMismatch")<{
  readonly url: string
  readonly expected: string
  readonly actual: string
}> {
  override get message() {
    return `${this.url} is refused (sha256-mismatch): the registry lists sha256 ${this.expected}, the download has ${this.actual}`
  }
}

/** The archive downloaded for a resolved reference holds another extension or version. */
export class RegistryArchiveMismatch extends Data.TaggedError("RegistryArchiveMismatch")<{
  readonly url: string
  readonly expected: string
  readonly actual: string
}> {
  override get message() {
    return `${this.url} is refused (${this.expected.split("@")[0] === this.actual.split("@")[0] ? "version" : "id"}-mismatch): the registry resolved ${this.expected}, the archive holds ${this.actual}`
  }
}

/** The cache file could not be written. */
export class RegistryCacheError extends Data.TaggedError("RegistryCacheError")<{
  readonly path: string
  readonly detail: string
}> {
  override get message() {
    return `cannot write the registry cache ${this.path}: ${this.detail}`
  }
}

export type RegistryIndexError = RegistryNotConfigured | RegistryFetchFailed | RegistryIndexInvalid | RegistryTrustError | RegistryUnknown

