import { ParseResult, Schema } from "effect"

// JSON that someone else wrote (request bodies, a registry's index, an archive's signature.json) is
// parsed, then its nesting is counted with an explicit stack before any other code sees the value
// (docs/decisions.md "JSON from outside nests at most 64 levels"). `JSON.parse` itself does not recurse,
// but much of what comes after does: Schema's messages format the value they refused, settings values are
// compared and stringified, an extension's handler walks its body. On 100,000 nested arrays (200 KB, well
// inside the 1 MiB body limit) that code ran out of stack: a 500 with "Maximum call stack size exceeded"
// at best, and V8 aborting the whole process when a regular expression was compiled there (as it did for
// YAML: docs/decisions.md "YAML nests at most 64 levels").

/** The same bound as YAML's: no document Host reads nests more than a handful of levels. */
export const maxJsonDepth = 64

/**
 * How deeply the arrays and objects of a parsed JSON value nest (a scalar is 0, `[]` and `{}` are 1),
 * walked with an explicit stack; the walk stops as soon as the depth passes `limit`, so a hostile value
 * costs no more than the part of it that is read.
 */
export const nestingDepth = (value: unknown, limit: number): number => {
  let deepest = 0
  const pending: Array<readonly [unknown, number]> = [[value, 0]]
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!
    if (typeof current !== "object" || current === null) continue
    const level = depth + 1
    if (level > deepest) {
      deepest = level
      if (deepest > limit) return deepest
    }
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === "object" && child !== null) pending.push([child, level])
    }
  }
  return deepest
}

/** The refusal's wording, one for every place that reads JSON from outside. */
export const tooDeepJson = `the JSON nests arrays and objects more than ${maxJsonDepth} levels deep; that is the limit`

/** Whether a parsed value is within the bound (the check `parseJsonWithinDepth` makes). */
export const isWithinJsonDepth = (value: unknown): boolean => nestingDepth(value, maxJsonDepth) <= maxJsonDepth

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * `Schema.parseJson()` with the depth bound: the text is parsed, then refused with `tooDeepJson` when it
 * nests too deeply, before a schema decodes it (and before any message could format it). A text that is
 * not JSON is refused with `JSON.parse`'s own message, as `Schema.parseJson` does.
 */
const ParseJsonWithinDepth: Schema.Schema<unknown, string> = Schema.transformOrFail(
  Schema.String.annotations({ description: "a string to be decoded into JSON" }),
  Schema.Unknown,
  {
    strict: true,
    decode: (text, _, ast) => {
      let value: unknown
      try {
        value = JSON.parse(text)
      } catch (error) {
        return ParseResult.fail(new ParseResult.Type(ast, text, messageOf(error)))
      }
      return isWithinJsonDepth(value) ? ParseResult.succeed(value) : ParseResult.fail(new ParseResult.Type(ast, text, tooDeepJson))
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
