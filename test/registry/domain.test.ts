import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { problemsFromParseError } from "../../src/domain/Problems.js"
import {
  archiveUrl,
  availableVersions,
  cacheStatus,
  expectedSha256,
  parseReference,
  RegistryIndex,
  resolveVersion,
  searchEntries,
  signatureUrl
} from "../../src/domain/Registry.js"
import { resolveRegistryUrl } from "../../src/registry/Registry.js"

const decode = (raw: unknown) => Schema.decodeUnknownEither(RegistryIndex, { errors: "all" })(raw)
const problems = (raw: unknown) => Either.match(decode(raw), { onLeft: problemsFromParseError, onRight: () => [] })

const hex = (char: string) => char.repeat(64)

const entry = (fields: Record<string, unknown> = {}) => ({
  id: "acme/hello-world",
  name: "Hello World",
  latest_version: "1.2.5",
  versions: ["1.0.0", "1.2.3", "1.2.5", "2.0.0-beta.1"],
  ...fields
})

const decoded = (fields: Record<string, unknown> = {}) =>
  Either.getOrThrow(decode({ version: "1.0", extensions: [entry(fields)] })).extensions[0]!

describe("index schema", () => {
  it("decodes a full index, fills defaults and ignores unknown keys", () => {
    const index = Either.getOrThrow(decode({
      version: "1.0",
      updated_at: "2026-01-01T00:00:00Z",
      mirror: "ignored",
      extensions: [entry({ homepage: "ignored", tags: ["Greeting"], sha256: hex("A") })]
    }))
    expect(index.extensions[0]).toMatchObject({
      id: "acme/hello-world",
      description: "",
      license: "",
      authors: [],
      tags: ["Greeting"],
      requires: {},
      dependencies: {},
      sha256: hex("a")
    })
    expect(index.extensions[0]).not.toHaveProperty("homepage")
  })

  it("tolerates a numeric format version and refuses another major", () => {
    expect(Either.getOrThrow(decode({ version: 1.0, extensions: [] })).version).toBe("1.0")
    expect(Either.getOrThrow(decode({ version: 1.1, extensions: [] })).version).toBe("1.1")
    expect(problems({ version: "2.0", extensions: [] })).toEqual([
      { path: "version", message: "registry format 2.0 is not supported (this Host reads 1.x)" }
    ])
  })

  it("names every missing or wrong key by its path", () => {
    const found = problems({ extensions: [{ id: "Acme", versions: ["one"] }] })
    expect(found).toEqual(expect.arrayContaining([
      { path: "version", message: "is missing" },
      { path: "extensions[0].name", message: "is missing" },
      { path: "extensions[0].latest_version", message: "is missing" },
      expect.objectContaining({ path: "extensions[0].id" }),
      { path: "extensions[0].versions[0]", message: `"one" is not a semantic version (like 1.2.0)` }
    ]))
  })

  it("refuses a listed id twice and a sha256 that is not 64 hex characters", () => {
    expect(problems({ version: "1.0", extensions: [entry(), entry()] })).toEqual([
      { path: "extensions[1].id", message: `"acme/hello-world" is listed twice` }
    ])
    expect(problems({ version: "1.0", extensions: [entry({ sha256: { "1.2.5": "abc" } })] })[0]?.path).toBe(`extensions[0].sha256`)
  })
})

describe("references and versions", () => {
  it("parses vendor/name, exact versions, ranges and latest", () => {
    expect(parseReference("acme/hello-world")).toEqual(Either.right({ id: "acme/hello-world", range: undefined }))
    expect(parseReference("acme/hello-world@latest")).toEqual(Either.right({ id: "acme/hello-world", range: undefined }))
    expect(parseReference("acme/hello-world@1.2.3")).toEqual(Either.right({ id: "acme/hello-world", range: "1.2.3" }))
    expect(parseReference("acme/hello-world@^1.2")).toEqual(Either.right({ id: "acme/hello-world", range: "^1.2" }))
    expect(Either.isLeft(parseReference("acme/hello-world@"))).toBe(true)
    expect(Either.isLeft(parseReference("acme/hello-world@banana"))).toBe(true)
    expect(Either.isLeft(parseReference("Acme/Hello"))).toBe(true)
  })

  it("picks latest_version, an offered exact version, or the highest match of a range", () => {
    const hello = decoded()
    expect(availableVersions(hello)).toEqual(["2.0.0-beta.1", "1.2.5", "1.2.3", "1.0.0"])
    expect(resolveVersion(hello, undefined)).toEqual(Either.right("1.2.5"))
    expect(resolveVersion(hello, "1.2.3")).toEqual(Either.right("1.2.3"))
    expect(resolveVersion(hello, "^1.2")).toEqual(Either.right("1.2.5"))
    expect(resolveVersion(hello, "~1.0")).toEqual(Either.right("1.0.0"))
    expect(resolveVersion(hello, "1.1.0")).toEqual(
      Either.left("version 1.1.0 of acme/hello-world is not in the registry (available: 2.0.0-beta.1, 1.2.5, 1.2.3, 1.0.0)")
    )
    expect(resolveVersion(hello, "^3")).toEqual(
      Either.left("no version of acme/hello-world satisfies ^3 (available: 2.0.0-beta.1, 1.2.5, 1.2.3, 1.0.0)")
    )
  })

  it("reads the sha256 per version, or a single one as latest_version's", () => {
    expect(expectedSha256(decoded({ sha256: hex("b") }), "1.2.5")).toBe(hex("b"))
    expect(expectedSha256(decoded({ sha256: hex("b") }), "1.0.0")).toBeUndefined()
    expect(expectedSha256(decoded({ sha256: { "1.0.0": hex("c") } }), "1.0.0")).toBe(hex("c"))
    expect(expectedSha256(decoded({ sha256: { "1.0.0": hex("c") } }), "1.2.5")).toBeUndefined()
    expect(expectedSha256(decoded(), "1.2.5")).toBeUndefined()
  })
})

describe("URLs", () => {
  const base = "https://registry.example/host"

  it("expands {id}, {version} and {archive}, relative to the registry", () => {
    expect(archiveUrl(decoded({ archive_url: "https://cdn.example/{id}/{version}/{archive}" }), "1.2.3", base)).toEqual(
      Either.right("https://cdn.example/acme/hello-world/1.2.3/acme-hello-world-1.2.3.host")
    )
    expect(archiveUrl(decoded({ archive_url: "archives/{archive}" }), "1.2.3", `${base}/`)).toEqual(
      Either.right("https://registry.example/host/archives/acme-hello-world-1.2.3.host")
    )
    expect(signatureUrl(decoded({ archive_url: "archives/{archive}" }), "1.2.3", base)).toEqual(
      Either.right("https://registry.example/host/archives/acme-hello-world-1.2.3.host.sig")
    )
    expect(signatureUrl(decoded({ archive_url: "a/{archive}", signature_url: "sigs/{id}@{version}" }), "1.2.3", base)).toEqual(
      Either.right("https://registry.example/host/sigs/acme/hello-world@1.2.3")
    )
  })

  it("falls back to the repository's release convention", () => {
    expect(archiveUrl(decoded({ repository: "https://github.com/acme/hello-world/" }), "1.2.3", base)).toEqual(
      Either.right("https://github.com/acme/hello-world/releases/download/v1.2.3/acme-hello-world-1.2.3.host")
    )
    expect(Either.isLeft(archiveUrl(decoded(), "1.2.3", base))).toBe(true)
  })

  it("lets only a file:// registry point at files", () => {
    expect(archiveUrl(decoded({ archive_url: "file:///etc/{archive}" }), "1.2.3", base)).toEqual(
      Either.left(`acme/hello-world: archive_url "file:///etc/acme-hello-world-1.2.3.host" is a file:// URL, which only a file:// registry may use`)
    )
    expect(archiveUrl(decoded({ archive_url: "archives/{archive}" }), "1.2.3", "file:///srv/registry")).toEqual(
      Either.right("file:///srv/registry/archives/acme-hello-world-1.2.3.host")
    )
    expect(Either.isLeft(archiveUrl(decoded({ archive_url: "ftp://x/{archive}" }), "1.2.3", base))).toBe(true)
  })

  it("reads file://./dir relative to the panel root", () => {
    expect(resolveRegistryUrl("file://./storage/demo-registry/", "/srv/panel")).toBe("file:///srv/panel/storage/demo-registry")
    expect(resolveRegistryUrl("file:///abs/registry", "/srv/panel")).toBe("file:///abs/registry")
    expect(resolveRegistryUrl("https://r.example/", "/srv/panel")).toBe("https://r.example")
  })
})

describe("search and cache status", () => {
  it("matches id, name, description and tags case-insensitively", () => {
    const index = Either.getOrThrow(decode({
      version: "1.0",
      extensions: [
        entry(),
        entry({ id: "acme/backups", name: "Backups", description: "Nightly SNAPSHOTS", tags: ["Storage"] })
      ]
    }))
    const ids = (query: string) => searchEntries(index.extensions, query).map((e) => e.id)
    expect(ids("HELLO")).toEqual(["acme/hello-world"])
    expect(ids("snapshots")).toEqual(["acme/backups"])
    expect(ids("storage")).toEqual(["acme/backups"])
    expect(ids("acme/")).toEqual(["acme/hello-world", "acme/backups"])
    expect(ids("  ")).toEqual(["acme/hello-world", "acme/backups"])
    expect(ids("nothing")).toEqual([])
  })

  it("is fresh within the TTL, expired after, never expires with 0, missing without a cache", () => {
    const now = new Date("2026-01-01T01:00:00Z")
    expect(cacheStatus(new Date("2026-01-01T00:30:00Z"), now, 3600)).toBe("fresh")
    expect(cacheStatus(new Date("2025-12-31T23:59:59Z"), now, 3600)).toBe("expired")
    expect(cacheStatus(new Date("2020-01-01T00:00:00Z"), now, 0)).toBe("no-expiry")
    expect(cacheStatus(undefined, now, 3600)).toBe("missing")
  })
})
