import type { PlatformError } from "@effect/platform/Error"
import type { SqlError } from "@effect/sql/SqlError"
import { Predicate, Schema } from "effect"
import type { ArchiveIOError, ArchiveRefused, KeyInvalid, SignatureRefused } from "../archive/ArchiveErrors.js"
import type { ArtifactUnavailable } from "../archive/ArtifactStore.js"
import type { ManifestInvalid } from "../domain/Errors.js"
import type {
  ChecksumMismatch,
  RegistryArchiveMismatch,
  RegistryCacheError,
  RegistryFetchFailed,
  RegistryIndexInvalid,
  RegistryIndexExpired,
  RegistryIndexRolledBack,
  RegistryIndexSignatureInvalid,
  RegistryIndexUnsigned,
  RegistryLookupFailed,
  RegistryNotConfigured,
  RegistryUnknown
} from "../registry/RegistryErrors.js"
import type { LockHeld } from "../store/OperationLock.js"
import type { StoreError } from "../store/StoreError.js"
import type { MigrationFailed } from "./Migrations.js"
import type { ModuleLoadError } from "../kernel/ModuleLoader.js"

// Failures of lifecycle operations. Every one leaves the panel as it was, and says so. An operation
// fails with one of a few kinds, each meaning something different to whoever called it: the input was
// refused (fix the archive, manifest or signature), the source could not be reached (retry), the
// extension's migrations failed (fix the extension), the database is unavailable (fix the database),
// the files could not be written (disk, permissions) — or the lock is held, or a precondition does not
// hold. `http/Errors.ts` and `cli/main.ts` choose an HTTP status and a hint per kind from tables the
// compiler checks against these tags (docs/architecture.md "One install").
//
// They are Schema errors because they leave the process: as HTTP answers, in what the reconciler reports
// of a run, and (a refused upload) from the upload worker. A failed step keeps the typed error it failed
// with as its `cause`, so a caller can still tell a MigrationFailed from a SqlError without reading the
// sentence; the sentence itself (`message`) is what the CLI prints and tests read, and stays worded as it was.

export const OperationName = Schema.Literal("add", "update", "remove", "enable", "disable", "configure")
export type OperationName = typeof OperationName.Type

/** Every typed error a step of an operation can fail with (archive/, registry/, the migrations, the store, files). */
export type FailureCause =
  | ArchiveRefused
  | SignatureRefused
  | KeyInvalid
  | ManifestInvalid
  | ChecksumMismatch
  | RegistryArchiveMismatch
  | RegistryIndexInvalid
  | RegistryLookupFailed
  | RegistryNotConfigured
  | RegistryIndexUnsigned
  | RegistryIndexSignatureInvalid
  | RegistryIndexRolledBack
  | RegistryIndexExpired
  | RegistryUnknown
  | RegistryFetchFailed
  | ArtifactUnavailable
  | RegistryCacheError
  | MigrationFailed
  | ModuleLoadError
  | StoreError
  | SqlError
  | ArchiveIOError
  | PlatformError

/**
 * The kind of failure each cause is. Keyed by every tag of FailureCause (and nothing else), so a step
 * that starts raising something new does not compile until it is classified here, and so gets its HTTP
 * status and CLI hint through its kind.
 */
export const kindByTag = {
  // archive/, registry/ and the manifest: the input was refused
  ArchiveRefused: "SourceRejected",
  SignatureRefused: "SourceRejected",
  KeyInvalid: "SourceRejected",
  ManifestInvalid: "SourceRejected",
  ChecksumMismatch: "SourceRejected",
  RegistryArchiveMismatch: "SourceRejected",
  RegistryIndexInvalid: "SourceRejected",
  RegistryLookupFailed: "SourceRejected",
  RegistryNotConfigured: "SourceRejected",
  RegistryIndexUnsigned: "SourceRejected",
  RegistryIndexSignatureInvalid: "SourceRejected",
  RegistryIndexRolledBack: "SourceRejected",
  RegistryIndexExpired: "SourceRejected",
  RegistryUnknown: "SourceRejected",
  // the registry could not be reached
  RegistryFetchFailed: "SourceUnreachable",
  // the artifact store lost (or damaged) the bytes a plan verified: fetch them again with a new plan
  ArtifactUnavailable: "SourceUnreachable",
  RegistryCacheError: "SourceUnreachable",
  // the extension's migrations
  MigrationFailed: "MigrationsFailed",
  ModuleLoadError: "MigrationsFailed",
  // the database
  StoreError: "StoreUnavailable",
  SqlError: "StoreUnavailable",
  // files
  ArchiveIOError: "FilesFailed",
  SystemError: "FilesFailed",
  BadArgument: "FilesFailed"
} as const satisfies { readonly [Tag in FailureCause["_tag"]]: FailureKindName }

type FailureKindName = "SourceRejected" | "SourceUnreachable" | "MigrationsFailed" | "StoreUnavailable" | "FilesFailed"

/**
 * A cause as a Schema: the error itself, checked by its tag. Across JSON it arrives as its own fields
 * (tag, message and the rest), which the same check accepts; the class is not rebuilt, so a caller on the
 * far side reads the tag and the fields, never `instanceof`.
 */
export const FailureCauseSchema = Schema.declare(
  (input: unknown): input is FailureCause =>
    Predicate.hasProperty(input, "_tag") && typeof input._tag === "string" && Object.hasOwn(kindByTag, input._tag),
  { identifier: "FailureCause", description: "the typed error the step of an operation failed with" }
)

const stepFailureFields = {
  operation: OperationName,
  extensionId: Schema.String,
  /** The step the operation stopped at (as its progress lines name it). */
  step: Schema.String,
  /** The tag of the underlying failure (ArchiveRefused, SqlError, …), for logs and `--verbose`. */
  reason: Schema.String,
  detail: Schema.String,
  /** The typed error the step failed with; absent when the failure was found elsewhere (the upload worker). */
  cause: Schema.optional(FailureCauseSchema)
}

interface StepFailure {
  readonly operation: OperationName
  readonly extensionId: string
  readonly step: string
  readonly detail: string
}

const stepMessage = (failure: StepFailure) =>
  `${failure.operation} ${failure.extensionId} failed while ${failure.step}: ${failure.detail}; nothing was changed`

/** The archive, its signature, its manifest or the registry's answer was refused. */
export class SourceRejected extends Schema.TaggedError<SourceRejected>()("SourceRejected", stepFailureFields) {
  override get message() {
    return stepMessage(this)
  }
}

/** The source could not be fetched (registry or network down): retrying later may work. */
export class SourceUnreachable extends Schema.TaggedError<SourceUnreachable>()("SourceUnreachable", stepFailureFields) {
  override get message() {
    return stepMessage(this)
  }
}

/** The extension's migrations (or the code that defines them) failed; the batch was rolled back. */
export class MigrationsFailed extends Schema.TaggedError<MigrationsFailed>()("MigrationsFailed", stepFailureFields) {
  override get message() {
    return stepMessage(this)
  }
}

/** The database could not be reached or refused the write. */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", stepFailureFields) {
  override get message() {
    return stepMessage(this)
  }
}

/** Files could not be read, written or moved (disk full, permissions). */
export class FilesFailed extends Schema.TaggedError<FilesFailed>()("FilesFailed", stepFailureFields) {
  override get message() {
    return stepMessage(this)
  }
}

/** A failure while running a step, by kind. */
export const OperationFailed = Schema.Union(SourceRejected, SourceUnreachable, MigrationsFailed, StoreUnavailable, FilesFailed)
export type OperationFailed = typeof OperationFailed.Type

export const failureKinds = {
  SourceRejected,
  SourceUnreachable,
  MigrationsFailed,
  StoreUnavailable,
  FilesFailed
} as const satisfies { readonly [Kind in FailureKindName]: unknown }
export type FailureKind = keyof typeof failureKinds

export const RefusalReason = Schema.Literal(
  "already-installed",
  "not-installed",
  "not-newer",
  "id-mismatch",
  "requirements",
  "dependencies",
  "dependents",
  "settings"
)

/** A precondition does not hold (already installed, unmet requirement, dependency, dependents …). */
export class OperationRefused extends Schema.TaggedError<OperationRefused>()("OperationRefused", {
  operation: OperationName,
  extensionId: Schema.String,
  reason: RefusalReason,
  detail: Schema.String,
  hint: Schema.optional(Schema.String),
  /** One entry per problem, when the refusal is about input (settings). */
  problems: Schema.optional(Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String })))
}) {
  override get message() {
    return `${this.operation} ${this.extensionId} refused: ${this.detail}${this.hint === undefined ? "" : `\nhint: ${this.hint}`}`
  }
}

/**
 * Everything a lifecycle operation fails with: a step failed (its kind keeps the cause), a precondition
 * refused it, or another operation holds the lock. What the reconciler reports of a failed action.
 */
export type LifecycleFailure = OperationFailed | OperationRefused | LockHeld

/**
 * The failure a step's error becomes: the kind its tag maps to, naming the operation and the step, worded
 * for the person who ran it, and keeping the error itself as the cause.
 */
export const classify = (
  operation: OperationName,
  extensionId: string,
  step: string,
  error: FailureCause,
  database: string
): OperationFailed =>
  new failureKinds[kindByTag[error._tag]]({
    operation,
    extensionId,
    step,
    reason: error._tag,
    detail: error._tag === "SqlError" || error._tag === "StoreError"
      ? databaseDetail(error, database)
      : error.message === "" ? error._tag : error.message,
    cause: error
  })

/**
 * A database failure names the database (its URL without the password) and the cause: a StoreError's own
 * message, or a raw SqlError (one a transaction's end raised, docs/decisions.md "Database cuts").
 */
const databaseDetail = (error: StoreError | SqlError, database: string) => {
  // The operation's own message names the database and what was left; a StoreError marked before any change
  // (store/StoreError.ts beforeAnyChange, e.g. by crash recovery inside an operation) says it once, not twice.
  if (error._tag === "StoreError") return `database ${database}: ${error.failure}`
  const cause = error.cause as { readonly message?: unknown } | undefined
  const why = typeof cause?.message === "string" && cause.message !== "" ? `: ${cause.message}` : ""
  return `database ${database}: ${error.message === "" ? "a statement failed" : error.message}${why}`
}
