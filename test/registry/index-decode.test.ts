import { Either, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { problemsFromParseError } from "../../src/domain/Problems.js"
import { decodeRegistryIndex, indexInDecodedForm, RegistryIndex } from "../../src/domain/Registry.js"

// `decodeRegistryIndex` keeps entries already in decoded form as they are and leaves every other one to the
// schema (docs/decisions.md "A registry index is decoded once, quickly"). Whatever it is given, its answer
// must be the schema's: the same index, or the same problems.

const bySchema = Schema.decodeUnknownEither(RegistryIndex, { errors: "all" })

const answer = (decoded: Either.Either<RegistryIndex, import("effect").ParseResult.ParseError>) =>
  Either.match(decoded, { onLeft: (error) => ({ problems: problemsFromParseError(error) }), onRight: (index) => ({ index }) })

const expectSameAsSchema = (raw: unknown) => {
  // A JSON round trip: indexes come from JSON.parse (and it copies, so neither decoder sees the other's input).
  const copy = () => JSON.parse(JSON.stringify(raw)) as unknown
  const schema = answer(bySchema(copy()))
  expect(answer(decodeRegistryIndex(copy()))).toEqual(schema)
  // The index in decoded form is taken as it is only when the schema would give the same.
  const quick = indexInDecodedForm(copy())
  if (quick !== undefined) expect({ index: quick }).toEqual(schema)
}

const hex = (char: string) => char.repeat(64)

const full = (id: string) => ({
  id,
  name: "Hello",
  description: "Says hello.",
  latest_version: "1.2.0",
  versions: ["1.0.0", "1.2.0"],
  license: "MIT",
  authors: [{ name: "Ada", email: "ada@example.org" }],
  tags: ["greeting"],
  requires: { host: "^1" },
  dependencies: {},
  archive_url: "{archive}",
  sha256: { "1.0.0": hex("a"), "1.2.0": hex("b") }
})

// For each key, values near the edges of its check (right and wrong), and values of the wrong type.
const near: Record<string, ReadonlyArray<unknown>> = {
  id: ["acme/hello-world", "Acme/Hello", "host/reserved", "acme", `acme/${"a".repeat(65)}`],
  name: ["", "Hello"],
  description: ["", "Hello"],
  repository: ["https://example.org/acme/hello", ""],
  latest_version: ["1.2.0", "v1.2.0", "=1.2.0", " 1.2.0 ", "1.2", "2.0.0-beta.1", "01.2.0"],
  versions: [[], ["1.0.0"], ["1.0.0", "one"], ["v1.0.0"], [1]],
  license: ["", "MIT"],
  authors: [[], [{ name: "Ada" }], [{ name: "Ada", url: "x" }], [{ email: "x" }], [{ name: "Ada", email: 1 }], ["Ada"]],
  tags: [[], ["a", "b"], [1], "greeting"],
  requires: [{}, { host: "^1" }, { host: 1 }, [], JSON.parse(`{"__proto__": "x", "host": "^1"}`) as unknown],
  dependencies: [{}, { "acme/other": "^1" }, { "acme/other": null }, ["acme/other"]],
  archive_url: ["{archive}", ""],
  signature_url: ["{archive}.sig", ""],
  sha256: [hex("a"), hex("A"), "abc", { "1.2.0": hex("c") }, { "1.2.0": hex("C") }, { "1.2.0": "abc" }, { "1.2.0": 1 }, []],
  homepage: ["https://example.org"],
  __proto__: [{ id: "acme/x" }, "x"]
}
const wrongType: ReadonlyArray<unknown> = [null, 1, true, [], {}, "text"]
const keys = Object.keys(near).concat("__proto__")

const change = fc.constantFrom(...keys).chain((key) =>
  fc.tuple(fc.constant(key), fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...(near[key] ?? ["x"])) }, fc.constantFrom(...wrongType), fc.constant(undefined)))
)

const mutatedEntry = (id: string) =>
  fc.array(change, { maxLength: 2 }).map((changes) => {
    const entry: Record<string, unknown> = { ...full(id) }
    for (const [key, changed] of changes) {
      if (changed === undefined) delete entry[key]
      else Object.defineProperty(entry, key, { value: changed, enumerable: true, writable: true, configurable: true })
    }
    return entry
  })

describe("decodeRegistryIndex", () => {
  it("answers as the schema does for entries of every shape", () => {
    fc.assert(
      fc.property(fc.array(mutatedEntry("acme/one"), { maxLength: 3 }), mutatedEntry("acme/two"), (some, other) => {
        expectSameAsSchema({ version: "1.0", serial: 3, extensions: [...some, other] })
      }),
      { numRuns: 2000 }
    )
  })

  it("answers as the schema does for indexes of every shape", () => {
    const envelope = fc.record({
      version: fc.constantFrom("1.0", 1, 1.5, "2.0", "x", undefined),
      serial: fc.constantFrom(1, -1, 1.5, "1", undefined),
      expires_at: fc.constantFrom("2026-12-31T00:00:00Z", "tomorrow", undefined),
      updated_at: fc.constantFrom("2026-01-01T00:00:00Z", 5, undefined),
      extensions: fc.oneof(fc.constant(undefined), fc.constant({}), fc.array(mutatedEntry("acme/one"), { maxLength: 2 }))
    })
    fc.assert(fc.property(envelope, (index) => expectSameAsSchema(index)), { numRuns: 300 })
  })

  it("refuses a listed id twice as the schema does, and fills the defaults of a short entry", () => {
    expectSameAsSchema({ version: "1.0", extensions: [full("acme/one"), full("acme/one")] })
    expect(answer(decodeRegistryIndex({ version: "1.0", extensions: [full("acme/one"), full("acme/one")] }))).toEqual({
      problems: [{ path: "extensions[1].id", message: `"acme/one" is listed twice` }]
    })
    const short = decodeRegistryIndex({ version: "1.0", extensions: [{ id: "acme/one", name: "One", latest_version: "1.0.0" }] })
    expect(Either.getOrThrow(short).extensions[0]).toEqual({
      id: "acme/one",
      name: "One",
      description: "",
      latest_version: "1.0.0",
      versions: [],
      license: "",
      authors: [],
      tags: [],
      requires: {},
      dependencies: {}
    })
  })
})
