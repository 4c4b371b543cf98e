import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { decodeDesiredDocument, decodeDesiredState, decodeFolderDocument, substituteEnv } from "../../src/domain/DesiredState.js"

describe("decodeDesiredState", () => {
  it("decodes a file of folder sources without the Schema only to what the Schema gives", () => {
    const folder = { source: { path: "./x" } }
    const documents: ReadonlyArray<Record<string, unknown>> = [
      { host: "1.0", extensions: { "acme/a": folder, "acme/b": { source: { path: "/abs/b" } } } },
      { host: "1.0", prune: true, extensions: { "acme/a": folder } },
      { host: "1.0", prune: false, extensions: {} },
      { host: "1.0", prune: undefined, extensions: { "acme/a": folder } },
      { host: "1.0" }, { host: "1", extensions: { "acme/a": folder } }, { host: 1, extensions: {} }, { host: "2.0", extensions: {} },
      { host: "1.0", prune: "yes", extensions: {} }, { host: "1.0", extensions: null }, { host: "1.0", extensions: [] },
      { host: "1.0", extensions: { "acme/a": folder }, other: 1 },
      { host: "1.0", extensions: { "acme/a": { source: { path: "" } } } },
      { host: "1.0", extensions: { "acme/a": { source: { path: 1 } } } },
      { host: "1.0", extensions: { "acme/a": { source: { path: "./x", sha256: "a".repeat(64) } } } },
      { host: "1.0", extensions: { "acme/a": { source: { path: "./x" }, enabled: false } } },
      { host: "1.0", extensions: { "acme/a": { source: "registry" } } },
      { host: "1.0", extensions: { "acme/a": { source: { archive: "./x.host" } } } },
      { host: "1.0", extensions: { "acme/a": null, "acme/b": "absent", "acme/c": "^1.0", "acme/d": folder } },
      { host: "1.0", extensions: { "acme/a": Object.assign(Object.create(null) as object, folder) } },
      { host: "1.0", extensions: JSON.parse('{"__proto__": {"source": {"path": "./x"}}}') as unknown },
      { host: "1.0", extensions: { "acme/a": JSON.parse('{"source": {"path": "./x"}, "__proto__": {}}') as unknown } }
    ]
    let taken = 0
    for (const document of documents) {
      const fast = decodeFolderDocument(document)
      if (fast === undefined) continue
      taken++
      const bySchema = decodeDesiredDocument(document)
      expect(Either.isRight(bySchema), JSON.stringify(document)).toBe(true)
      expect(fast, JSON.stringify(document)).toStrictEqual(Either.getOrThrow(bySchema))
    }
    expect(taken).toBe(4)
  })

  it("decodes shorthand, full and absent entries", () => {
    const result = decodeDesiredState({
      host: "1.0",
      prune: true,
      extensions: {
        "acme/analytics": "^1.4",
        "acme/backups": {
          version: "1.1.0",
          source: "registry",
          enabled: false,
          settings: { retention_days: 14, api_key: "${BACKUPS_API_KEY}" },
          protect: true
        },
        "acme/local": { source: { path: "./fixtures/x" } },
        "acme/packed": { source: { archive: "./x.host", sha256: "a".repeat(64) } },
        "acme/old-thing": "absent"
      }
    })
    expect(result).toEqual(Either.right({
      prune: true,
      extensions: [
        { _tag: "Present", id: "acme/analytics", version: "^1.4", source: { _tag: "Registry" }, enabled: true, settings: undefined, protect: false },
        {
          _tag: "Present",
          id: "acme/backups",
          version: "1.1.0",
          source: { _tag: "Registry" },
          enabled: false,
          settings: { retention_days: 14, api_key: "${BACKUPS_API_KEY}" },
          protect: true
        },
        { _tag: "Present", id: "acme/local", version: undefined, source: { _tag: "Path", path: "./fixtures/x" }, enabled: true, settings: undefined, protect: false },
        { _tag: "Absent", id: "acme/old-thing" },
        {
          _tag: "Present",
          id: "acme/packed",
          version: undefined,
          source: { _tag: "Archive", archive: "./x.host", sha256: "a".repeat(64) },
          enabled: true,
          settings: undefined,
          protect: false
        }
      ]
    }))
  })

  it.each<[string, unknown, string]>([
    ["bad id", { host: "1.0", extensions: { NotAnId: "^1" } }, "extensions.NotAnId"],
    ["bad range", { host: "1.0", extensions: { "acme/x": "banana" } }, "extensions.acme/x"],
    ["bad source", { host: "1.0", extensions: { "acme/x": { source: "ftp" } } }, "extensions.acme/x"],
    ["bad sha256", { host: "1.0", extensions: { "acme/x": { source: { archive: "x.host", sha256: "zz" } } } }, "extensions.acme/x"],
    ["bad version of the file", { host: "2.0", extensions: {} }, "host"],
    ["missing host", { extensions: {} }, "host"],
    ["not a mapping", ["x"], "(root)"]
  ])("%s is an error at its path", (_, raw, path) => {
    const result = decodeDesiredState(raw)
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) expect(result.left.some((p) => p.path.startsWith(path))).toBe(true)
  })
})

describe("substituteEnv", () => {
  it("replaces references deeply", () => {
    expect(substituteEnv({ a: "${X}-${Y}", b: ["${X}"], c: 1 }, { X: "1", Y: "2" })).toEqual(Either.right({ a: "1-2", b: ["1"], c: 1 }))
  })

  it("names every missing variable", () => {
    expect(substituteEnv({ a: "${X}", b: "${Y}" }, {})).toEqual(Either.left("environment variables X, Y not set"))
  })
})
