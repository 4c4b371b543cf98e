import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { decodeManifest } from "../../src/domain/Manifest.js"
import { maxSettingFields, maxSettingValueBytes, normalizeSettings, validateSettingValue } from "../../src/domain/Settings.js"
import { manifestYamlLimits, readYaml } from "../../src/domain/YamlText.js"

// Findings 2 and 8 of issue 16: YAML from outside is read within limits, in linear time, and alias
// errors are problems (never exceptions); settings have a field cap and a value cap.

const manyKeys = (count: number) => `id: acme/x\nextra:\n${Array.from({ length: count }, (_, i) => `  k${i}: ${i}\n`).join("")}`

describe("readYaml", () => {
  it("refuses a text over the size limit before parsing it", () => {
    const result = readYaml(`a: "${"x".repeat(300 * 1024)}"\n`, manifestYamlLimits)
    expect(result).toEqual(Either.left([{ path: "(yaml)", message: "the file is 300 KiB; the limit is 256 KiB" }]))
  })

  it("refuses more entries than the limit, counted over every depth", () => {
    const result = readYaml(manyKeys(6_000), manifestYamlLimits)
    expect(Either.isLeft(result) && result.left[0]!.message).toBe(
      "the document has more than 5000 entries (keys and list items); that is the limit"
    )
    const list = readYaml(`a: [${Array.from({ length: 6_000 }, () => "1").join(",")}]\n`, manifestYamlLimits)
    expect(Either.isLeft(list)).toBe(true)
  })

  it("refuses nesting deeper than 64 levels, however it is written, without recursing into it", () => {
    const tooDeep = [{ path: "(yaml)", message: "the document nests mappings and lists more than 64 levels deep; that is the limit" }]
    const shapes = {
      "flow lists": (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}\n`,
      "flow maps": (depth: number) => `${"{a: ".repeat(depth)}1${"}".repeat(depth)}\n`,
      "block lists": (depth: number) => `${"- ".repeat(depth)}1\n`,
      "block maps": (depth: number) => `${Array.from({ length: depth }, (_, level) => `${" ".repeat(level)}a:`).join("\n")} 1\n`,
      "a key that is a list": (depth: number) => `? ${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}\n: x\n`
    }
    for (const [shape, text] of Object.entries(shapes)) {
      expect(Either.isRight(readYaml(text(64), manifestYamlLimits)), `${shape}: 64 levels are read`).toBe(true)
      expect(readYaml(text(65), manifestYamlLimits), `${shape}: 65 levels are refused`).toEqual(Either.left(tooDeep))
    }
    // The package's node builder recursed on these until the stack ran out; V8 sometimes aborted the
    // process there (a regular expression compiled at the stack's end) instead of throwing.
    for (const text of [shapes["flow lists"](100_000), shapes["flow maps"](50_000), shapes["block lists"](100_000)]) {
      expect(readYaml(text, manifestYamlLimits)).toEqual(Either.left(tooDeep))
    }
  })

  it("a second document is a problem, not silently dropped", () => {
    expect(readYaml("id: acme/x\n---\nid: acme/y\n", manifestYamlLimits)).toEqual(Either.left([
      { path: "(yaml line 2, column 1)", message: "the file holds more than one YAML document (a second `---`); it must hold one" }
    ]))
  })

  it("keeps duplicate keys an error, with the key's position", () => {
    const result = readYaml("id: acme/x\nname: A\nversion: 1.0.0\nname: B\n", manifestYamlLimits)
    expect(result).toEqual(Either.left([{ path: "(yaml line 4, column 1)", message: `Map keys must be unique: "name" appears more than once` }]))
    // Nested, and the last of many.
    const nested = readYaml(`${manyKeys(4_000)}  k17: again\n`, manifestYamlLimits)
    expect(Either.isLeft(nested) && nested.left[0]!.message).toBe(`Map keys must be unique: "k17" appears more than once`)
    // Merge keys may repeat; equal values of different types are different keys.
    expect(Either.isRight(readYaml("a: &a {x: 1}\nb: &b {y: 2}\nc:\n  <<: *a\n  <<: *b\n", manifestYamlLimits))).toBe(true)
    expect(readYaml("1: a\n'1': b\n", manifestYamlLimits)).toEqual(Either.right({ 1: "b" }))
  })

  it("a manifest with the most entries allowed is read in one linear pass (no quadratic duplicate check)", () => {
    // 4,900 keys; the package's own check compares every pair (12 million comparisons).
    const result = readYaml(manyKeys(4_900), manifestYamlLimits)
    expect(Either.isRight(result)).toBe(true)
    expect(Object.keys((result as Either.Right<unknown, unknown>).right as object)).toEqual(["id", "extra"])
  })

  it("an undefined alias is a problem, not an exception", () => {
    const result = readYaml("id: acme/x\nname: *missing\n", manifestYamlLimits)
    expect(Either.isLeft(result) && result.left[0]!.message).toMatch(/^Unresolved alias.*missing/)
  })

  it("an alias bomb is stopped by the alias-expansion limit, as a problem", () => {
    const bomb = [
      "a: &a [x, x, x, x, x, x, x, x, x]",
      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]",
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]",
      "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]",
      "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d]"
    ].join("\n")
    const result = readYaml(bomb, manifestYamlLimits)
    expect(Either.isLeft(result) && result.left[0]!.message).toMatch(/^aliases expand to too many nodes/)
  })

  it("syntax errors keep their line and column", () => {
    const result = readYaml("id: acme/x\nname: Broken: yes\n", manifestYamlLimits)
    expect(Either.isLeft(result) && result.left[0]!.path).toBe("(yaml line 2, column 7)")
  })
})

describe("settings limits", () => {
  it(`refuses more than ${maxSettingFields} settings fields, before decoding any`, () => {
    const section: Record<string, unknown> = {}
    for (let i = 0; i < 20_000; i++) section[`field_${i}`] = { type: "string" }
    const result = normalizeSettings(section)
    expect(result.errors).toEqual([{ path: "admin.settings", message: `declares 20000 settings; an extension may declare at most ${maxSettingFields}` }])
    const manifest = decodeManifest({ host: "1.0", id: "acme/x", name: "X", version: "1.0.0", description: "x", license: "MIT", admin: { settings: section } })
    expect(manifest.errors.map((p) => p.path)).toEqual(["admin.settings"])
    const fine: Record<string, unknown> = {}
    for (let i = 0; i < maxSettingFields; i++) fine[`field_${i}`] = { type: "string" }
    expect(normalizeSettings(fine).errors).toEqual([])
  })

  it(`caps a value at ${maxSettingValueBytes} bytes (UTF-8), and the message does not echo it`, () => {
    const field = normalizeSettings({ note: { type: "text" } }).fields[0]!
    expect(validateSettingValue(field, "x".repeat(maxSettingValueBytes))).toEqual(Either.right("x".repeat(maxSettingValueBytes)))
    const big = validateSettingValue(field, "x".repeat(900 * 1024))
    expect(big).toEqual(Either.left(`is ${900 * 1024} bytes long; a setting holds at most ${maxSettingValueBytes} bytes (64 KiB)`))
    // Multi-byte characters count by their bytes.
    expect(Either.isLeft(validateSettingValue(field, "é".repeat(maxSettingValueBytes / 2 + 1)))).toBe(true)
    const email = normalizeSettings({ mail: { type: "string", input: "email" } }).fields[0]!
    const wrong = validateSettingValue(email, "y".repeat(10_000))
    expect(Either.isLeft(wrong) && wrong.left.length).toBeLessThan(200)
  })
})
