import { Effect, Either, ParseResult, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { checkSignatures, emptyKeyring } from "../../src/archive/Signing.js"
import { maxJsonDepth, nestingDepth, parseJsonWithinDepth, tooDeepJson } from "../../src/domain/JsonDepth.js"

// JSON from outside nests at most 64 levels (docs/decisions.md "JSON from outside nests at most 64
// levels"). Before the bound, decoding 100,000 nested arrays with a Schema returned a refusal whose
// message threw "Maximum call stack size exceeded" when it was read (it formats the value).

const deepArrays = (levels: number) => "[".repeat(levels) + "]".repeat(levels)
const deepObjects = (levels: number) => '{"a":'.repeat(levels) + "1" + "}".repeat(levels)
const messagesOf = (error: ParseResult.ParseError) => ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => issue.message)

describe("nestingDepth", () => {
  it("counts arrays and objects, not scalars", () => {
    expect(nestingDepth(1, maxJsonDepth)).toBe(0)
    expect(nestingDepth("[[[", maxJsonDepth)).toBe(0)
    expect(nestingDepth([], maxJsonDepth)).toBe(1)
    expect(nestingDepth({ a: [1, { b: [] }], c: 2 }, maxJsonDepth)).toBe(4)
    expect(nestingDepth(JSON.parse(deepObjects(64)), maxJsonDepth)).toBe(64)
  })

  it("stops once past the limit, without recursion, however deep the value", () => {
    expect(nestingDepth(JSON.parse(deepArrays(100_000)), maxJsonDepth)).toBe(maxJsonDepth + 1)
    // A cycle (never in parsed JSON) still ends: the walk stops past the limit.
    const cyclic: Array<unknown> = []
    cyclic.push(cyclic)
    expect(nestingDepth(cyclic, 3)).toBe(4)
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
