import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { labelFromKey, normalizeSettings, type SettingField, validateSettingValue, validateSettingValues } from "../../src/domain/Settings.js"

describe("labelFromKey", () => {
  it.each([
    ["api_key", "Api Key"],
    ["refreshRate", "Refresh Rate"],
    ["APIKey", "API Key"],
    ["server-name", "Server Name"],
    ["max_players2", "Max Players 2"],
    ["enableHTTPProxy", "Enable HTTP Proxy"],
    ["url", "Url"],
    ["already Spaced", "Already Spaced"]
  ])("%s → %s", (key, label) => {
    expect(labelFromKey(key)).toBe(label)
  })
})

const field = (overrides: Partial<SettingField>): SettingField => ({
  key: "k",
  type: "string",
  label: "K",
  required: false,
  default: null,
  help: null,
  placeholder: null,
  input: "text",
  options: [],
  public: false,
  ...overrides
})

describe("validateSettingValue", () => {
  it.each<[string, Partial<SettingField>, unknown, Either.Either<unknown, string> | "left"]>([
    ["number", { type: "number", input: "number" }, 5, Either.right(5)],
    ["numeric string", { type: "number", input: "number" }, "2.5", Either.right(2.5)],
    ["not a number", { type: "number", input: "number" }, "soon", "left"],
    ["boolean", { type: "boolean", input: "checkbox" }, false, Either.right(false)],
    ["boolean string", { type: "boolean", input: "checkbox" }, "true", Either.right(true)],
    ["not a boolean", { type: "boolean", input: "checkbox" }, "yes", "left"],
    ["select option", { type: "select", input: "select", options: [{ value: "eu", label: "EU" }] }, "eu", Either.right("eu")],
    ["select numeric option from text", { type: "select", input: "select", options: [{ value: 1, label: "One" }] }, "1", Either.right(1)],
    ["select unknown", { type: "select", input: "select", options: [{ value: "eu", label: "EU" }] }, "mars", "left"],
    ["string", {}, "hello", Either.right("hello")],
    ["string gets number", {}, 5, "left"],
    ["required empty", { required: true }, "  ", "left"],
    ["email", { input: "email" }, "a@b.io", Either.right("a@b.io")],
    ["bad email", { input: "email" }, "a@b", "left"],
    ["url", { input: "url" }, "https://x.test/a", Either.right("https://x.test/a")],
    ["bad url", { input: "url" }, "ftp://x.test", "left"],
    ["color", { input: "color" }, "#A0b1C2", Either.right("#A0b1C2")],
    ["bad color", { input: "color" }, "#abc", "left"],
    ["empty optional email", { input: "email" }, "", Either.right("")]
  ])("%s", (_, overrides, value, expected) => {
    const result = validateSettingValue(field(overrides), value)
    if (expected === "left") expect(Either.isLeft(result)).toBe(true)
    else expect(result).toEqual(expected)
  })

  it("names the allowed options", () => {
    const result = validateSettingValue(field({ type: "select", input: "select", options: [{ value: "eu", label: "EU" }, { value: "us", label: "US" }] }), "mars")
    expect(result).toEqual(Either.left(`must be one of "eu", "us", got "mars"`))
  })
})

describe("normalizeSettings", () => {
  it("merges the full and the shorthand syntax into one normalized list", () => {
    const result = normalizeSettings({
      title: "T",
      fields: [{ key: "api_key", type: "string", input: "password", required: true, description: "Key" }],
      refreshRate: { type: "number", default: 30, public: true },
      region: { options: ["eu", { value: "us", label: "United States" }], default: "eu" }
    })
    expect(result.errors).toEqual([])
    expect(result.fields).toEqual([
      { key: "api_key", type: "string", label: "Api Key", required: true, default: null, help: "Key", placeholder: null, input: "password", options: [], public: false },
      { key: "refreshRate", type: "number", label: "Refresh Rate", required: false, default: 30, help: null, placeholder: null, input: "number", options: [], public: true },
      { key: "region", type: "select", label: "Region", required: false, default: "eu", help: null, placeholder: null, input: "select", options: [{ value: "eu", label: "eu" }, { value: "us", label: "United States" }], public: false }
    ])
  })

  it.each<[string, Record<string, unknown>, string, string]>([
    ["duplicate key across syntaxes", { fields: [{ key: "a" }], a: {} }, "admin.settings.a", "duplicate setting key"],
    ["duplicate key in fields", { fields: [{ key: "a" }, { key: "a" }] }, "admin.settings.fields[1]", "duplicate setting key"],
    ["select without options", { mode: { type: "select" } }, "admin.settings.mode.options", "at least one option"],
    ["input that does not fit", { on: { type: "boolean", input: "email" } }, "admin.settings.on.input", "does not fit"],
    ["default of the wrong type", { n: { type: "number", default: "x" } }, "admin.settings.n.default", "must be a number"],
    ["scalar shorthand", { n: 30 }, "admin.settings.n", "must be a definition object"],
    ["unknown property in shorthand", { n: { tpye: "number" } }, "admin.settings.n.tpye", "unexpected"],
    ["bad key", { "1st": {} }, "admin.settings.1st", "must start with a letter"]
  ])("%s", (_, section, path, message) => {
    const result = normalizeSettings(section as never)
    expect(result.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path, message: expect.stringContaining(message) })]))
  })
})

describe("validateSettingValues", () => {
  const fields = normalizeSettings({ limit: { type: "number", required: true }, name: { type: "string" } }).fields

  it("converts values and reports unknown keys and bad values with their keys", () => {
    expect(validateSettingValues(fields, { limit: "3", name: "x" })).toEqual(Either.right({ limit: 3, name: "x" }))
    const result = validateSettingValues(fields, { limit: "many", colour: "red" }, "extensions.acme/x.settings")
    expect(result).toEqual(Either.left([
      { path: "extensions.acme/x.settings.limit", message: `must be a number, got "many"` },
      { path: "extensions.acme/x.settings.colour", message: "unknown setting (known: limit, name)" }
    ]))
  })
})
