import { ParseResult, Schema } from "effect"

// JSON that someone else wrote (request bodies, a registry's index, an archive's signature.json, a saved
// plan) has its nesting counted on the text, in one pass, before it is parsed and any other code sees it
// (docs/decisions.md "JSON from outside nests at most 64 levels"). `JSON.parse` itself does not recurse,
// but much of what comes after does: Schema's messages format the value they refused, settings values are
// compared and stringified, an extension's handler walks its body. On 100,000 nested arrays (200 KB, well
// inside the 1 MiB body limit) that code ran out of stack: a 500 with "Maximum call stack size exceeded"
// at best, and V8 aborting the whole process when a regular expression was compiled there (as it did for
// YAML: docs/decisions.md "YAML nests at most 64 levels").

/** The same bound as YAML's: no document Host reads nests more than a handful of levels. */
export const maxJsonDepth = 64

/**
 * A JSON string from its opening quote to its closing one, or to the end of the text (then perhaps
 * ending in a lone backslash): from an opening quote it always matches, and it matches each character
 * once, so a text of unclosed strings costs no more than one of closed ones. Or else a run of anything but
 * brackets and quotes. Removing every match leaves the brackets outside strings: a run stops at a quote,
 * where a string begins, so strings are found where a scan from the start finds them.
 *
 * One match takes up to 256 of these tokens in a row: each match costs a call into the regular expression's
 * code and the replacement's bookkeeping, a good part of the count's time on a registry index (a token or
 * two per line). The bound keeps the backtracking stack small: unbounded, a flat array of two million
 * strings ran it out and fell back to the character loop (docs/decisions.md "registry:sync: fewer, larger
 * steps"). Neither kind of token matches at a bracket nor where the other begins, so the tokens are the
 * same ones, and nothing after the repetition can make it give any back. Exported for its test.
 */
export const stringOrNotABracket = /(?:"[^"\\]*(?:\\[\s\S][^"\\]*)*(?:"|\\?$)|[^"[\]{}]+){1,256}/g

/**
 * How deeply the arrays and objects of a JSON text nest (`1` is 0, `[]` and `{}` are 1), counted on the
 * text: brackets inside strings do not count. For valid JSON this is the nesting of the parsed value. It
 * is counted before `JSON.parse` on purpose: parsing 1 MiB of `[` took V8 300–570 ms (about 1 µs a
 * level, against 6 ms for a flat body of that size), the count stops at the first bracket past `limit`.
 * Strings and everything but brackets are removed by one regular expression first (native code): a
 * character-by-character loop cost 35 ms on a 1.3 MB registry index in a short command, which runs
 * without the optimising compiler; two regular expressions (strings, then the rest) about 6–16, one
 * about half that (docs/decisions.md "A registry index is decoded once, quickly").
 */
export const nestingDepth = (text: string, limit: number): number => {
  let brackets: string
  try {
    brackets = text.replace(stringOrNotABracket, "")
  } catch (error) {
    // A string of millions of escapes runs V8's regular-expression backtracking stack out (a registry
    // index may be 32 MiB): such a text is counted character by character instead.
    if (error instanceof RangeError) return nestingDepthByScan(text, limit)
    throw error
  }
  return deepestOf(brackets, limit)
}

/** The deepest nesting of a text of brackets only; stops at the first bracket past `limit`. */
const deepestOf = (brackets: string, limit: number): number => {
  let depth = 0
  let deepest = 0
  for (let index = 0; index < brackets.length; index++) {
    const code = brackets.charCodeAt(index)
    if (code === 0x5b || code === 0x7b) {
      depth++
      if (depth > deepest) {
        deepest = depth
        if (deepest > limit) return deepest
      }
    } else depth--
  }
  return deepest
}

/** `nestingDepth` in one pass over every character, skipping strings as it goes. */
export const nestingDepthByScan = (text: string, limit: number): number => {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (inString) {
      if (code === 0x5c) index++ // a backslash: the next character is escaped (\" does not end the string)
      else if (code === 0x22) inString = false
    } else if (code === 0x22) inString = true
    else if (code === 0x5b || code === 0x7b) {
      depth++
      if (depth > deepest) {
        deepest = depth
        if (deepest > limit) return deepest
      }
    } else if (code === 0x5d || code === 0x7d) depth--
  }
  return deepest
}

/** The refusal's wording, one for every place that reads JSON from outside. */
export const tooDeepJson = `the JSON nests arrays and objects more than ${maxJsonDepth} levels deep; that is the limit`

/** Whether a JSON text is within the bound (the check `parseJsonWithinDepth` makes before parsing). */
export const isWithinJsonDepth = (text: string): boolean => nestingDepth(text, maxJsonDepth) <= maxJsonDepth

/** The node the depth refusal names: `isTooDeepJson` finds a refusal by it, not by its wording. */
const depthBound = Schema.String.annotations({ identifier: "JsonWithinDepth", description: tooDeepJson }).ast

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * `Schema.parseJson()` with the depth bound: a text that nests too deeply is refused with `tooDeepJson`
 * before it is parsed, so before a schema decodes it (and before any message could format it). A text that is
 * not JSON is refused with `JSON.parse`'s own message, as `Schema.parseJson` does.
 */
const ParseJsonWithinDepth: Schema.Schema<unknown, string> = Schema.transformOrFail(
  Schema.String.annotations({ description: "a string to be decoded into JSON" }),
  Schema.Unknown,
  {
    strict: true,
    decode: (text, _, ast) => {
      if (!isWithinJsonDepth(text)) return ParseResult.fail(new ParseResult.Type(depthBound, text, tooDeepJson))
      return ParseResult.try({ try: () => JSON.parse(text) as unknown, catch: (error) => new ParseResult.Type(ast, text, messageOf(error)) })
    },
    encode: (value, _, ast) =>
      ParseResult.try({ try: () => JSON.stringify(value), catch: (error) => new ParseResult.Type(ast, value, messageOf(error)) })
  }
).annotations({ title: "parseJson" })

/** A JSON text decoded with `schema` (or to `unknown`), refused first when it nests more than `maxJsonDepth` levels. */
export function parseJsonWithinDepth<A, I, R>(schema: Schema.Schema<A, I, R>): Schema.Schema<A, string, R>
export function parseJsonWithinDepth(): Schema.Schema<unknown, string>
export function parseJsonWithinDepth<A, I, R>(schema?: Schema.Schema<A, I, R>): Schema.Schema<A, string, R> | Schema.Schema<unknown, string> {
  return schema === undefined ? ParseJsonWithinDepth : Schema.compose(ParseJsonWithinDepth, schema as Schema.Schema<A, unknown, R>)
}

/** Whether an issue, or one under it, is the depth refusal of `parseJsonWithinDepth`. */
const refusedForDepth = (issue: ParseResult.ParseIssue): boolean => {
  switch (issue._tag) {
    case "Type":
      return issue.ast === depthBound
    case "Composite":
      return Array.isArray(issue.issues) ? issue.issues.some(refusedForDepth) : refusedForDepth(issue.issues as ParseResult.ParseIssue)
    case "Pointer":
    case "Refinement":
    case "Transformation":
      return refusedForDepth(issue.issue)
    default:
      return false
  }
}

/**
 * Whether `parseJsonWithinDepth` refused the text for its nesting (not for its syntax or its shape): the
 * callers answer that with `tooDeepJson`, so the client learns the limit rather than "not valid JSON".
 */
export const isTooDeepJson = (error: unknown): boolean => ParseResult.isParseError(error) && refusedForDepth(error.issue)
