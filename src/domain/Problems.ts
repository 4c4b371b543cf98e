import { ParseResult } from "effect"

/** One finding of a validation: where (`backend.routes.web`, `schedules.tasks[0].cron`) and what. */
export interface Problem {
  readonly path: string
  readonly message: string
}

export interface ValidationReport {
  readonly errors: ReadonlyArray<Problem>
  readonly warnings: ReadonlyArray<Problem>
}

export const problem = (path: string, message: string): Problem => ({ path, message })

/** Renders a property path as `a.b[0].c`. */
export const formatPath = (segments: ReadonlyArray<PropertyKey>): string =>
  segments.reduce<string>((out, segment) => {
    if (typeof segment === "number") return `${out}[${segment}]`
    const key = String(segment)
    return out === "" ? key : `${out}.${key}`
  }, "")

export const joinPath = (base: string, ...rest: ReadonlyArray<PropertyKey>): string =>
  formatPath([...(base === "" ? [] : [base]), ...rest])

/** Flattens a Schema parse error into one problem per failing leaf, paths prefixed with `base`. */
export const problemsFromParseError = (error: ParseResult.ParseError, base = ""): ReadonlyArray<Problem> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => {
    const path = joinPath(base, ...issue.path)
    return problem(path === "" ? "(root)" : path, issue.message)
  })
