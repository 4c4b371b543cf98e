import { Data } from "effect"

/** The database could not do what was asked (unreachable, locked, corrupt rows). */
export class StoreError extends Data.TaggedError("StoreError")<{
  readonly operation: string
  readonly cause: unknown
}> {
  override get message() {
    const cause = this.cause as { message?: unknown; cause?: { message?: unknown } } | undefined
    const detail = typeof cause?.cause?.message === "string"
      ? cause.cause.message
      : typeof cause?.message === "string" ? cause.message : String(this.cause)
    return `database: ${this.operation} failed: ${detail}`
  }
}

/** Wraps SQL and row-decoding failures of one repository call as a StoreError naming the call. */
export const storeError = (operation: string) => (cause: unknown) => new StoreError({ operation, cause })

/** A write refused by a UNIQUE constraint (every dialect words it differently). */
export const isUniqueViolation = (error: unknown): boolean => {
  const cause = (error as { cause?: { message?: unknown; code?: unknown } } | undefined)?.cause
  return /UNIQUE|unique constraint|duplicate/i.test(`${String(cause?.message ?? "")} ${String(cause?.code ?? "")}`)
}
