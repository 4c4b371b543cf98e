import { Effect, Either, Option, ParseResult, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { checkSignatures, emptyKeyring } from "../../src/archive/Signing.js"
import { isTooDeepJson, maxJsonDepth, nestingDepth, parseJsonWithinDepth, tooDeepJson } from "../../src/domain/JsonDepth.js"

// JSON from outside nests at most 64 levels (docs/decisions.md "JSON from outside nests at most 64
// levels"). Before the bound, decoding 100,000 nested arrays with a Schema returned a refusal whose
// message threw "Maximum call stack size exceeded" when it was read (it formats the value).

const deepArrays = (levels: number) => "[".repeat(levels) + "]".repeat(levels)
const deepObjects = (levels: number) => '{"a":'.repeat(levels) + "1" + "}".repeat(levels)
const messagesOf = (error: ParseResult.ParseError) => ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => issue.message)

describe("nestingDepth", () => {
  it("counts the arrays and objects of a JSON text, not brackets inside strings", () => {
    expect(nestingDepth("1", maxJsonDepth)).toBe(0)
    expect(nestingDepth(JSON.stringify("[[[{{{"), maxJsonDepth)).toBe(0)
    expect(nestingDepth("[]", maxJsonDepth)).toBe(1)
    expect(nestingDepth(JSON.stringify({ a: [1, { b: [] }], c: 2 }), maxJsonDepth)).toBe(4)
    // An escaped quote does not end a string; an escaped backslash does not escape the quote after it.
    expect(nestingDepth(JSON.stringify({ a: 'x"[[[', b: "y\\", c: [[]] }), maxJsonDepth)).toBe(3)
    expect(nestingDepth(deepObjects(64), maxJsonDepth)).toBe(64)
  })

  it("stops at the first bracket past the limit, however long the text", () => {
    expect(nestingDepth(deepArrays(500_000), maxJsonDepth)).toBe(maxJsonDepth + 1)
    expect(nestingDepth("[".repeat(10), 3)).toBe(4)
  })

  it("is the nesting of the parsed value for valid JSON", () => {
    const valueDepth = (value: unknown): number =>
      typeof value !== "object" || value === null ? 0 : 1 + Math.max(0, ...Object.values(value).map(valueDepth))
    for (const value of [{ a: [[1], { "b]": "}{" }], c: { d: { e: [] } } }, [[], [[["\\"]]], "x"], { "\"": ["[\\]"] }]) {
      expect(nestingDepth(JSON.stringify(value), maxJsonDepth)).toBe(valueDepth(value))
    }
  })
})

describe("parseJsonWithinDepth", () => {
  const Shape = parseJsonWithinDepth(Schema.Struct({ name: Schema.String }))

  it("refuses 100,000 nested arrays or objects with a message naming the limit", () => {
    for (const text of [deepArrays(100_000), deepObjects(100_000), `{"name":"x","extra":${deepArrays(100_000)}}`]) {
      const decoded = Schema.decodeUnknownEither(Shape)(text)
      expect(Either.isLeft(decoded)).toBe(true)
      if (Either.isLeft(decoded)) {
        expect(messagesOf(decoded.left)).toEqual([tooDeepJson])
        expect(decoded.left.message).toContain(`more than ${maxJsonDepth} levels`)
      }
    }
  })

  it("takes 64 levels, refuses 65", () => {
    const at = (levels: number) => `{"name":"x","extra":${deepArrays(levels - 1)}}`
    expect(Schema.decodeUnknownEither(Shape)(at(64))).toEqual(Either.right({ name: "x" }))
    expect(Either.isLeft(Schema.decodeUnknownEither(Shape)(at(65)))).toBe(true)
    expect(Schema.decodeUnknownEither(parseJsonWithinDepth())(deepObjects(64))).toEqual(Either.right(JSON.parse(deepObjects(64))))
  })

  it("words a text that is not JSON as Schema.parseJson does", () => {
    const ours = Schema.decodeUnknownEither(Shape)("{nope")
    const theirs = Schema.decodeUnknownEither(Schema.parseJson(Schema.Struct({ name: Schema.String })))("{nope")
    expect(Either.isLeft(ours) && Either.isLeft(theirs) && messagesOf(ours.left)).toEqual(Either.isLeft(theirs) && messagesOf(theirs.left))
  })
})

describe("signature.json", () => {
  it("nesting 100,000 levels is an invalid signature naming the limit, not a stack overflow", async () => {
    const check = await Effect.runPromise(checkSignatures({
      checksumsJson: new TextEncoder().encode("{}"),
      signatureJson: new TextEncoder().encode(deepArrays(100_000)),
      archiveBytes: new Uint8Array(),
      detached: undefined,
      detachedLabel: "x.host.sig",
      keyring: emptyKeyring
    }))
    expect(check.status).toBe("invalid")
    expect(check.problems.map((p) => `${p.path}: ${p.message}`).join("\n")).toContain(tooDeepJson)
  })
})

describe("isTooDeepJson", () => {
  const refusal = (text: string) =>
    Option.getOrUndefined(Either.getLeft(Schema.decodeUnknownEither(parseJsonWithinDepth(Schema.Struct({ a: Schema.Number })))(text)))
  it("tells the depth refusal from a syntax error and from a shape refusal, whatever the message quotes", () => {
    expect(isTooDeepJson(refusal(deepObjects(maxJsonDepth + 1)))).toBe(true)
    expect(isTooDeepJson(refusal("{"))).toBe(false)
    // A shape refusal quoting a value that is the depth refusal's own wording: matching the message would say "too deep".
    const quoting = refusal(JSON.stringify({ a: tooDeepJson }))
    expect(quoting?.message).toContain(tooDeepJson)
    expect(isTooDeepJson(quoting)).toBe(false)
    expect(isTooDeepJson(new Error(tooDeepJson))).toBe(false)
  })
})
