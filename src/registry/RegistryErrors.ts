import { Data } from "effect"
import type { Problem } from "../domain/Problems.js"

// Errors of registry/: each message is one sentence naming the URL (or file) and the check that failed.

/** `registry_url` is empty. */
export class RegistryNotConfigured extends Data.TaggedError("RegistryNotConfigured")<{}> {
  override get message() {
    return "no registry is configured: set registry_url in config/host.yaml or the HOST_REGISTRY_URL environment variable"
  }
}

/** Fetching a URL (the index, an archive, a signature) failed. */
export class RegistryFetchFailed extends Data.TaggedError("RegistryFetchFailed")<{
  readonly url: string
  readonly reason: "not-found" | "http-status" | "unreachable" | "timeout" | "too-large" | "invalid-url"
  readonly detail: string
}> {
  override get message() {
    return `cannot fetch ${this.url}: ${this.detail}`
  }
}

/** registry.json is not JSON, or not a registry index. */
export class RegistryIndexInvalid extends Data.TaggedError("RegistryIndexInvalid")<{
  readonly url: string
  readonly problems: ReadonlyArray<Problem>
}> {
  override get message() {
    const first = this.problems[0]
    const more = this.problems.length > 1 ? ` (and ${this.problems.length - 1} more)` : ""
    return `${this.url} is not a valid registry index: ${first === undefined ? "unreadable" : `${first.path}: ${first.message}`}${more}`
  }
}

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

export type RegistryIndexError = RegistryNotConfigured | RegistryFetchFailed | RegistryIndexInvalid

