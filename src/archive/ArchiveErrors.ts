import type { PlatformError } from "@effect/platform/Error"
import { Data } from "effect"
import type { SignatureStatus } from "../domain/Installed.js"

// Errors of archive/: every refusal names the check that failed (a stable `reason` code for
// programs, one clear sentence in `message` for people).

/** Why an archive was refused; one code per check (docs/archives.md lists them). */
export type RefusalReason =
  // size and shape of the whole archive
  | "archive-too-large"
  | "unpacked-too-large"
  | "too-many-files"
  | "compression-bomb"
  | "truncated"
  | "corrupt"
  | "not-an-archive"
  // entries
  | "absolute-path"
  | "parent-segment"
  | "invalid-path"
  | "symlink"
  | "hardlink"
  | "special-file"
  | "unsupported-entry"
  | "duplicate-entry"
  | "path-conflict"
  // package files
  | "checksums-missing"
  | "checksums-malformed"
  | "manifest-missing"
  // integrity against checksums.json
  | "unlisted-file"
  | "missing-file"
  | "checksum-mismatch"

/** The archive (or the tree being packed) fails a safety or integrity check; nothing was written. */
export class ArchiveRefused extends Data.TaggedError("ArchiveRefused")<{
  /** What was checked: a file name, an upload name, or the folder being packed. */
  readonly source: string
  readonly reason: RefusalReason
  /** The entry concerned, when there is one. */
  readonly entry?: string
  /** Lower-case clause saying what is wrong, e.g. `entry "../x" has a ".." segment`. */
  readonly detail: string
}> {
  override get message() {
    return `${this.source} is refused (${this.reason}): ${this.detail}`
  }
}

/** A key given as text (config, environment, option) is not a valid Ed25519 key. */
export class KeyInvalid extends Data.TaggedError("KeyInvalid")<{
  /** Where the key came from: `HOST_SECRET_KEY`, `--secret-key`, `public_key`, ... */
  readonly source: string
  readonly detail: string
}> {
  override get message() {
    return `${this.source} is not a valid Ed25519 key: ${this.detail}`
  }
}

/** `--sign` was asked for but no secret key was given. */
export class SecretKeyMissing extends Data.TaggedError("SecretKeyMissing")<{
  readonly hint: string
}> {
  override get message() {
    return `signing needs a secret key: ${this.hint}`
  }
}

/** The signature status does not satisfy the trust policy (docs/archives.md "Signature statuses"). */
export class SignatureRefused extends Data.TaggedError("SignatureRefused")<{
  readonly source: string
  readonly status: SignatureStatus
  readonly detail: string
}> {
  override get message() {
    return `${this.source} is refused (signature ${this.status}): ${this.detail}`
  }
}

/** Reading or writing a file failed. */
export class ArchiveIOError extends Data.TaggedError("ArchiveIOError")<{
  readonly operation: "read" | "write" | "create" | "rename" | "remove"
  readonly path: string
  readonly detail: string
}> {
  override get message() {
    return `cannot ${this.operation} ${this.path}: ${this.detail}`
  }
}

/** Maps a platform error to an ArchiveIOError naming the operation and the path. */
export const ioError = (operation: ArchiveIOError["operation"], path: string) => (error: PlatformError): ArchiveIOError => {
  const detail = error._tag === "SystemError"
    ? systemReason(error.reason, error.description)
    : error.description ?? error.message
  return new ArchiveIOError({ operation, path, detail })
}

/** The platform's reason for each errno code (as @effect/platform-node names them); others are "Unknown". */
const errnoReasons: Readonly<Record<string, string>> = {
  ENOENT: "NotFound",
  EACCES: "PermissionDenied",
  EEXIST: "AlreadyExists",
  EISDIR: "BadResource",
  ENOTDIR: "BadResource",
  EBUSY: "Busy",
  ELOOP: "BadResource"
}

/**
 * Maps an exception of a direct `node:fs` call to the ArchiveIOError that the same call through the
 * platform's FileSystem gives (same reason, same sentence), so packing and unpacking can call node:fs
 * synchronously (docs/decisions.md "Packing and unpacking call node:fs synchronously, in slices")
 * without changing a message.
 */
export const nodeIoError = (operation: ArchiveIOError["operation"], path: string) => (cause: unknown): ArchiveIOError => {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code
  const reason = (code === undefined ? undefined : errnoReasons[code]) ?? "Unknown"
  return new ArchiveIOError({ operation, path, detail: systemReason(reason, cause instanceof Error ? cause.message : String(cause)) })
}

const systemReason = (reason: string, description: string | undefined): string => {
  switch (reason) {
    case "NotFound":
      return "no such file or directory"
    case "PermissionDenied":
      return "permission denied"
    case "AlreadyExists":
      return "it already exists"
    case "Busy":
      return "it is busy"
    default:
      return description ?? reason
  }
}
