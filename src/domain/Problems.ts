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

const isPrefix = (prefix: ReadonlyArray<PropertyKey>, path: ReadonlyArray<PropertyKey>) =>
  prefix.length <= path.length && prefix.every((segment, index) => path[index] === segment)

/**
 * Flattens a Schema parse error into one problem per failing leaf, paths prefixed with `base`.
 * An optional key fails both as its schema and as `undefined`; the `Expected undefined` half is
 * dropped whenever a more specific issue explains the same place.
 */
export const problemsFromParseError = (error: ParseResult.ParseError, base = ""): ReadonlyArray<Problem> => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const undefinedAlternative = (issue: (typeof issues)[number]) =>
    issue.message.startsWith("Expected undefined, actual") &&
    issues.some((other) => other !== issue && !other.message.startsWith("Expected undefined") && isPrefix(issue.path, other.path))
  const problems: Array<Problem> = []
  const alternatives = new Map<string, { expected: Array<string>; actual: string; index: number }>()
  for (const issue of issues.filter((issue) => !undefinedAlternative(issue))) {
    const joined = joinPath(base, ...issue.path)
    const path = joined === "" ? "(root)" : joined
    const expectation = /^Expected (.+), actual (.+)$/s.exec(issue.message)
    const seen = expectation === null ? undefined : alternatives.get(path)
    if (expectation !== null && seen !== undefined && seen.actual === expectation[2]) {
      // Members of a union (like a literal list) failing at one place read as one line.
      seen.expected.push(expectation[1]!)
      problems[seen.index] = problem(path, `Expected one of ${seen.expected.join(", ")}; actual ${seen.actual}`)
      continue
    }
    if (expectation !== null) alternatives.set(path, { expected: [expectation[1]!], actual: expectation[2]!, index: problems.length })
    problems.push(problem(path, issue.message))
  }
  return problems
}
