import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { nestingDepth, nestingDepthByScan, stringOrNotABracket } from "../../src/domain/JsonDepth.js"
import { runHost, tempDir } from "../support/cli.js"

// A registry index nesting 100,000 levels (docs/decisions.md "JSON from outside nests at most 64
// levels") is refused as an invalid index naming the limit. Before the bound, `registry:sync` ended with
// "unexpected failure: Maximum call stack size exceeded": the schema's refusal formatted the value.

const root = tempDir("host-registry-depth-")
afterAll(() => root.cleanup())

describe("registry index nesting", () => {
  it("100,000 levels are an invalid index that names the limit", async () => {
    mkdirSync(join(root.path, "config"), { recursive: true })
    mkdirSync(join(root.path, "registry"))
    writeFileSync(join(root.path, "config", "host.yaml"), `registry_url: file://${root.path}/registry\n`)
    const levels = 100_000
    writeFileSync(join(root.path, "registry", "registry.json"), `{"host":"1.0","extensions":${"[".repeat(levels)}${"]".repeat(levels)}}`)
    const sync = await runHost(["--root", root.path, "registry:sync"])
    expect(sync.code).not.toBe(0)
    expect(sync.stderr).toContain("(json): the JSON nests arrays and objects more than 64 levels deep; that is the limit")
    expect(sync.stderr).not.toContain("unexpected failure")
  })
})

// The count was a character-by-character loop (kept as the fallback for texts the regular expressions
// cannot take); it now removes strings and everything but brackets with regular expressions first
// (docs/decisions.md "A registry index is decoded once, quickly"). On any text it must count as the loop
// does, unclosed strings and stray backslashes included.
describe("nestingDepth", () => {
  it("counts as the character loop did, on any text", () => {
    const text = fc.array(fc.constantFrom("[", "]", "{", "}", "\"", "\\", "a", " ", "\n", ":", ","), { maxLength: 60 }).map((parts) => parts.join(""))
    fc.assert(fc.property(text, fc.integer({ min: 0, max: 6 }), (json, limit) => {
      expect(nestingDepth(json, limit)).toBe(nestingDepthByScan(json, limit))
    }), { numRuns: 5000 })
  })

  it("counts strings with escapes, unclosed strings and a final backslash as the loop did", () => {
    for (const json of ['{"a":"[["}', '["\\"]', '["\\\\"]', '["a\\"[[', '"[', '[["\\', '["\\\\', '{"k":["x\\"]"]}']) {
      expect(nestingDepth(json, 64)).toBe(nestingDepthByScan(json, 64))
    }
    expect(nestingDepth('{"a":"[["}', 64)).toBe(1)
    expect(nestingDepth(`${"[".repeat(100_000)}${"]".repeat(100_000)}`, 64)).toBe(65)
  })
})

// One match of the count takes up to 256 tokens (strings and runs between them) in a row
// (docs/decisions.md "registry:sync: fewer, larger steps"): texts with far more tokens between two brackets
// count as the loop counts them, and a flat array of two million strings does not run the backtracking stack out.
describe("long stretches between brackets", () => {
  it("count as the character loop does", () => {
    const token = fc.constantFrom("\"a\"", "\"[\"", "\"\\\"{\"", " ", ",", ":", "1", "\n  ")
    const stretch = fc.array(token, { minLength: 200, maxLength: 1200 }).map((parts) => parts.join(""))
    const text = fc.array(fc.oneof(stretch, fc.constantFrom("[", "]", "{", "}")), { maxLength: 8 }).map((parts) => parts.join(""))
    fc.assert(fc.property(text, fc.integer({ min: 0, max: 6 }), (json, limit) => {
      expect(nestingDepth(json, limit)).toBe(nestingDepthByScan(json, limit))
    }), { numRuns: 300 })
    const entries = `[${Array.from({ length: 3000 }, (_, n) => `"x${n}", ${n}, "[${n}"`).join(",\n  ")}, [[{"a": ["]"]}]]]`
    expect(nestingDepth(entries, 64)).toBe(5)
    expect(nestingDepth(entries, 64)).toBe(nestingDepthByScan(entries, 64))
  })

  it("of two million strings are counted by the regular expression", () => {
    const flat = `[${'"ab",'.repeat(2_000_000)}"c"]`
    // The regular expression's own answer (the character loop would count the same).
    expect(flat.replace(stringOrNotABracket, "")).toBe("[]")
    expect(nestingDepth(flat, 64)).toBe(1)
    expect(nestingDepth(`[${flat}, ${"[".repeat(70)}`, 64)).toBe(65)
  })
})

describe("a string of millions of escapes", () => {
  // 16 MB of `\a` inside one string ran V8's regular-expression backtracking stack out ("Maximum call
  // stack size exceeded" out of the count, a defect instead of an answer); a registry index may be 32 MiB.
  it("is counted as the loop counts it, without running out of stack", () => {
    const escapes = "\\a".repeat(8_000_000)
    expect(nestingDepth(`{"a":[["${escapes}"]]}`, 64)).toBe(3)
    expect(nestingDepth(`[["${escapes}`, 64)).toBe(2)
  })
})
