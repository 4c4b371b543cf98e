import { Data } from "effect"

// Failures of lifecycle operations. Every one leaves the panel as it was, and says so. An operation
// fails with one of a few kinds, each meaning something different to whoever called it: the input was
// refused (fix the archive, manifest or signature), the source could not be reached (retry), the
// extension's migrations failed (fix the extension), the database is unavailable (fix the database),
// the files could not be written (disk, permissions) — or the lock is held, or a precondition does not
// hold. `http/Errors.ts` and `cli/main.ts` choose an HTTP status and a hint per kind from tables the
// compiler checks against `LifecycleFailure` (docs/architecture.md "One install").

export type OperationName = "add" | "update" | "remove" | "enable" | "disable" | "configure"

interface StepFailure {
  readonly operation: OperationName
  readonly extensionId: string
  /** The step the operation stopped at (as its progress lines name it). */
  readonly step: string
  /** The tag of the underlying failure (ArchiveRefused, SqlError, …), for logs and `--verbose`. */
  readonly reason: string
  readonly detail: string
}

const stepMessage = (failure: StepFailure) =>
  `${failure.operation} ${failure.extensionId} failed while ${failure.step}: ${failure.detail}; nothing was changed`

/** The archive, its signature, its manifest or the registry's answer was refused. */
export class SourceRejected extends Data.TaggedError("SourceRejected")<StepFailure> {
  override get message() {
    return stepMessage(this)
  }
}

/** The source could not be fetched (registry or network down): retrying later may work. */
export class SourceUnreachable extends Data.TaggedError("SourceUnreachable")<StepFailure> {
  override get message() {
    return stepMessage(this)
  }
}

/** The extension's migrations (or the code that defines them) failed; the batch was rolled back. */
export class MigrationsFailed extends Data.TaggedError("MigrationsFailed")<StepFailure> {
  override get message() {
    return stepMessage(this)
  }
}

/** The database could not be reached or refused the write. */
export class StoreUnavailable extends Data.TaggedError("StoreUnavailable")<StepFailure> {
  override get message() {
    return stepMessage(this)
  }
}

/** Files could not be read, written or moved (disk full, permissions). */
export class FilesFailed extends Data.TaggedError("FilesFailed")<StepFailure> {
  override get message() {
    return stepMessage(this)
  }
}

/** A failure while running a step, by kind. */
export type OperationFailed = SourceRejected | SourceUnreachable | MigrationsFailed | StoreUnavailable | FilesFailed

export const failureKinds = {
  SourceRejected,
  SourceUnreachable,
  MigrationsFailed,
  StoreUnavailable,
  FilesFailed
} as const
export type FailureKind = keyof typeof failureKinds

/** A precondition does not hold (already installed, unmet requirement, dependency, dependents …). */
export class OperationRefused extends Data.TaggedError("OperationRefused")<{
  readonly operation: OperationName
  readonly extensionId: string
  readonly reason:
    | "already-installed"
    | "not-installed"
    | "not-newer"
    | "id-mismatch"
    | "requirements"
    | "dependencies"
    | "dependents"
    | "settings"
  readonly detail: string
  readonly hint?: string
  /** One entry per problem, when the refusal is about input (settings). */
  readonly problems?: ReadonlyArray<{ readonly path: string; readonly message: string }>
}> {
  override get message() {
    return `${this.operation} ${this.extensionId} refused: ${this.detail}${this.hint === undefined ? "" : `\nhint: ${this.hint}`}`
  }
}
