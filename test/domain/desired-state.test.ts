import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { decodeDesiredState, substituteEnv } from "../../src/domain/DesiredState.js"

describe("decodeDesiredState", () => {
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

  // The object form is tried first (the common case, and the cheaper decode); for an admin, the field
  // that is wrong comes before the summary of the forms an entry may take.
  it("names the wrong field of an object entry first", () => {
    const result = decodeDesiredState({ host: "1.0", extensions: { "acme/x": { enabled: "yes" } } })
    expect(Either.isLeft(result) && result.left[0]).toEqual({ path: "extensions.acme/x.enabled", message: `Expected boolean, actual "yes"` })
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
