import { Data } from "effect"

/**
 * The database could not do what was asked (unreachable, locked, corrupt rows). A failure before a command
 * changed anything says so (docs/decisions.md "Database cuts"): `database` names the database (its URL
 * without the password) where the operation does not already, and `outcome` says what was left as it was.
 */
export class StoreError extends Data.TaggedError("StoreError")<{
  readonly operation: string
  readonly cause: unknown
  readonly database?: string
  readonly outcome?: string
}> {
  /** What failed and why, without the database or the outcome: `<operation> failed: <the driver's reason>`. */
  get failure(): string {
    const cause = this.cause as { message?: unknown; cause?: { message?: unknown } } | undefined
    const detail = typeof cause?.cause?.message === "string"
      ? cause.cause.message
      : typeof cause?.message === "string" ? cause.message : String(this.cause)
    return `${this.operation} failed: ${detail}`
  }

  override get message() {
    const database = this.database === undefined ? "database" : `database ${this.database}`
    return `${database}: ${this.failure}${this.outcome === undefined ? "" : `; ${this.outcome}`}`
  }
}

/** Wraps SQL and row-decoding failures of one repository call as a StoreError naming the call. */
export const storeError = (operation: string) => (cause: unknown) => new StoreError({ operation, cause })

/** What a failure before any change leaves: the words every such database failure ends with. */
export const nothingChanged = "nothing was changed"

/**
 * Marks a database failure that happened before its command changed anything: it names the database and
 * says nothing was changed. Other failures pass through as they are.
 */
export const beforeAnyChange = (database: string, outcome: string = nothingChanged) => <E>(error: E): E =>
  error instanceof StoreError && error.outcome === undefined
    ? new StoreError({
      operation: error.operation,
      cause: error.cause,
      outcome,
      ...(error.operation.includes(database) ? {} : { database })
    }) as E
    : error

/** A write refused by a UNIQUE constraint (every dialect words it differently). */
export const isUniqueViolation = (error: unknown): boolean => {
  const cause = (error as { cause?: { message?: unknown; code?: unknown } } | undefined)?.cause
  return /UNIQUE|unique constraint|duplicate/i.test(`${String(cause?.message ?? "")} ${String(cause?.code ?? "")}`)
}
