import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  decodeManifest,
  defaultEntrypointClass,
  extensionIdProblem,
  isExtensionId,
  isolationClass,
  type ManifestDocument,
  psr4Candidates,
  resolveEntrypoint,
  resolveLayout,
  studly
} from "../../src/domain/Manifest.js"
import { decodeInstalledManifest } from "../../src/domain/StoredManifest.js"

const minimal = {
  host: "1.0",
  id: "acme/server-analytics",
  name: "Server Analytics",
  version: "1.4.0",
  description: "Charts",
  license: "MIT"
}

const decodeDocument = (raw: Record<string, unknown>): ManifestDocument => {
  const result = decodeManifest(raw)
  if (result.document === undefined) throw new Error(JSON.stringify(result.errors))
  return result.document
}

describe("extension ids", () => {
  it.each(["acme/analytics", "a1/b2", "my-vendor/my-ext-2", `${"a".repeat(64)}/x`])("accepts %s", (id) => {
    expect(extensionIdProblem(id)).toBeUndefined()
  })

  it.each([
    ["acme", "not a valid extension id"],
    ["Acme/analytics", "not a valid extension id"],
    ["acme/ana_lytics", "not a valid extension id"],
    ["acme/-x", "not a valid extension id"],
    ["acme/x--y", "not a valid extension id"],
    ["acme/x/y", "not a valid extension id"],
    [`${"a".repeat(65)}/x`, "at most 64 characters"],
    ["host/x", `vendor "host" is reserved`],
    ["extensions/x", `vendor "extensions" is reserved`],
    ["slots/x", `vendor "slots" is reserved`],
    ["config/x", `vendor "config" is reserved`]
  ])("rejects %s", (id, message) => {
    expect(extensionIdProblem(id)).toContain(message)
    expect(isExtensionId(id)).toBe(false)
  })

  // isExtensionId is extensionIdProblem's verdict in one regular expression (docs/decisions.md
  // "registry:sync: fewer, larger steps").
  it("isExtensionId agrees with extensionIdProblem on any id", () => {
    const char = fc.constantFrom("a", "z", "0", "9", "-", "/", "A", "_", ".", " ", "\n", "é")
    const word = fc.oneof(fc.constantFrom("host", "extensions", "slots", "config", "hosts", "a".repeat(63), "a".repeat(64), "a".repeat(65)),
      fc.array(char, { maxLength: 12 }).map((chars) => chars.join("")))
    const id = fc.oneof(fc.array(char, { maxLength: 20 }).map((chars) => chars.join("")), fc.tuple(word, word).map(([a, b]) => `${a}/${b}`),
      fc.tuple(word, word, word).map(([a, b, c]) => `${a}/${b}/${c}`))
    fc.assert(fc.property(id, (text) => {
      expect(isExtensionId(text)).toBe(extensionIdProblem(text) === undefined)
    }), { numRuns: 20000 })
    for (const text of ["acme/analytics", "a1/b2", "my-vendor/my-ext-2", `${"a".repeat(64)}/${"b".repeat(64)}`, "host-x/y", "x/host"]) {
      expect(isExtensionId(text)).toBe(true)
    }
    for (const text of ["acme/analytics\n", "\nacme/analytics", `${"a".repeat(64)}/${"b".repeat(65)}`, "/", "a/", "/a"]) expect(isExtensionId(text)).toBe(false)
  })
})

describe("decodeManifest", () => {
  it("decodes the six minimal fields", () => {
    const result = decodeManifest(minimal)
    expect(result.errors).toEqual([])
    expect(result.warnings).toEqual([])
    expect(result.manifest).toMatchObject({ id: "acme/server-analytics", vendor: "acme", name: "server-analytics", version: "1.4.0", settings: [], schedules: [] })
  })

  it("tolerates host: 1.0 read as a number", () => {
    expect(decodeManifest({ ...minimal, host: 1 }).errors).toEqual([])
  })

  it("reports every problem at once, with paths", () => {
    const result = decodeManifest({ host: "1.0", id: "Bad", version: "x", license: "MIT", description: "" })
    expect(result.manifest).toBeUndefined()
    expect(result.errors.map((p) => p.path).sort()).toEqual(["id", "name", "version"])
  })

  it("warns about unknown top-level keys and unknown requirements", () => {
    const result = decodeManifest({ ...minimal, homepage: "x", requires: { python: "^3" } })
    expect(result.errors).toEqual([])
    expect(result.warnings.map((p) => p.path)).toEqual(["homepage", "requires.python"])
  })

  it("reads tags and repository for the registry, without a warning", () => {
    const result = decodeManifest({ ...minimal, tags: ["charts", "Server stats"], repository: "https://github.com/acme/server-analytics" })
    expect(result.errors).toEqual([])
    expect(result.warnings).toEqual([])
    expect(result.manifest?.document).toMatchObject({ tags: ["charts", "Server stats"], repository: "https://github.com/acme/server-analytics" })
    expect(decodeManifest(minimal).manifest?.document.tags).toBeUndefined()
  })

  it("refuses a bad tag or repository, naming the field", () => {
    const errors = (fields: Record<string, unknown>) => decodeManifest({ ...minimal, ...fields }).errors
    expect(errors({ tags: ["charts", ""] })).toEqual([{ path: "tags[1]", message: "a tag must not be empty" }])
    expect(errors({ tags: [" charts"] })).toEqual([
      { path: "tags[0]", message: `tag " charts" must not start or end with spaces or hold control characters` }
    ])
    expect(errors({ tags: ["x".repeat(33)] })).toEqual([{ path: "tags[0]", message: `tag "${"x".repeat(32)}…" is longer than 32 characters` }])
    expect(errors({ tags: Array.from({ length: 21 }, (_, n) => `t${n}`) })).toEqual([{ path: "tags", message: "at most 20 tags (there are 21)" }])
    expect(errors({ tags: "charts" })).toEqual([{ path: "tags", message: expect.stringContaining("Expected ReadonlyArray<") }])
    expect(errors({ tags: [3] })).toEqual([{ path: "tags[0]", message: expect.stringContaining("Expected string") }])
    expect(errors({ repository: "git@github.com:acme/server-analytics.git" })).toEqual([
      { path: "repository", message: `"git@github.com:acme/server-analytics.git" is not a URL (like https://github.com/acme/hello-world)` }
    ])
    expect(errors({ repository: "ftp://example.org/acme" })).toEqual([
      { path: "repository", message: `"ftp://example.org/acme" must be an http(s) URL (like https://github.com/acme/hello-world)` }
    ])
    expect(errors({ repository: 1 })).toEqual([{ path: "repository", message: expect.stringContaining("Expected string") }])
  })

  it("reads a stored manifest from before tags and repository were fields without them, not as corrupt", () => {
    // Installed when these keys were ignored: whatever they held was stored as it was.
    const stored = decodeInstalledManifest({ ...minimal, tags: "charts", repository: "git@github.com:acme/server-analytics.git" })
    expect(stored._tag).toBe("Decoded")
    expect(stored._tag === "Decoded" ? stored.manifest.document : undefined).toMatchObject({ id: "acme/server-analytics", version: "1.4.0" })
    expect(stored._tag === "Decoded" ? [stored.manifest.document.tags, stored.manifest.document.repository] : []).toEqual([undefined, undefined])
    // Valid values are kept, and any other problem still reads as corrupt, naming it.
    const kept = decodeInstalledManifest({ ...minimal, tags: ["charts"] })
    expect(kept._tag === "Decoded" ? kept.manifest.document.tags : undefined).toEqual(["charts"])
    expect(decodeInstalledManifest({ ...minimal, tags: "charts", version: "one" })).toMatchObject({ _tag: "Corrupt", reason: expect.stringContaining("version") })
  })

  it("warns when requires.host excludes this framework", () => {
    const result = decodeManifest({ ...minimal, requires: { host: "^2.0" } }, "1.2.3")
    expect(result.warnings).toEqual([{ path: "requires.host", message: expect.stringContaining("does not satisfy") }])
  })

  it("collects scheduled tasks with their cron", () => {
    const result = decodeManifest({
      ...minimal,
      schedules: { tasks: [{ id: "a", label: "A", command: "x:a", schedule: { type: "everyHours", interval: 2 }, without_overlapping: true }] }
    })
    expect(result.manifest?.schedules).toEqual([{ id: "a", label: "A", command: "x:a", cron: "0 */2 * * *", withoutOverlapping: true }])
  })

  it("warns about deprecated capabilities, and about schedules missing from them", () => {
    const result = decodeManifest({
      ...minimal,
      capabilities: { routes: "^1" },
      schedules: { tasks: [{ id: "a", label: "A", command: "x:a", cron: "* * * * *" }] }
    })
    expect(result.errors).toEqual([])
    expect(result.warnings.map((p) => p.message)).toEqual([
      expect.stringContaining("capabilities is deprecated"),
      expect.stringContaining(`without "schedules: ^1", so the scheduled tasks are ignored`)
    ])
    // Without the capability the tasks are ignored, so they never run.
    expect(result.manifest?.schedules).toEqual([])
    const declared = decodeManifest({
      ...minimal,
      capabilities: { routes: "^1", schedules: "^1" },
      schedules: { tasks: [{ id: "a", label: "A", command: "x:a", cron: "* * * * *" }] }
    })
    expect(declared.manifest?.schedules.map((task) => task.id)).toEqual(["a"])
  })

  it("deduplicates permissions with a warning", () => {
    const result = decodeManifest({ ...minimal, backend: { permissions: ["a.view", "a.view"] } })
    expect(result.manifest?.permissions).toEqual(["a.view"])
    expect(result.warnings).toEqual([{ path: "backend.permissions[1]", message: `duplicate permission "a.view"` }])
  })
})

describe("entrypoint resolution", () => {
  it.each([
    ["acme/analytics", "Acme\\Analytics\\AnalyticsExtension"],
    ["acme/server-analytics", "Acme\\ServerAnalytics\\ServerAnalyticsExtension"],
    ["my-co/backup-extension", "MyCo\\BackupExtension\\BackupExtension"]
  ])("default class of %s is %s", (id, className) => {
    expect(defaultEntrypointClass(id)).toBe(className)
  })

  it("studly-cases ids", () => {
    expect(studly("server-analytics")).toBe("ServerAnalytics")
  })

  it("maps a class through the longest PSR-4 prefix", () => {
    expect(psr4Candidates("Acme\\Analytics\\Http\\Kernel", { "Acme\\": "lib/", "Acme\\Analytics\\": "src/" }))
      .toEqual(["src/Http/Kernel.ts", "src/Http/Kernel.js", "src/Http/Kernel.mjs"])
    expect(psr4Candidates("Other\\Thing", { "Acme\\": "src" })).toEqual([])
  })

  const files = (...paths: Array<string>) => (path: string) => paths.includes(path)

  it("finds the default class through the inferred src/ mapping", () => {
    const document = decodeDocument(minimal)
    expect(resolveEntrypoint(document, files("src/ServerAnalyticsExtension.js"), undefined)).toEqual({
      _tag: "Class",
      className: "Acme\\ServerAnalytics\\ServerAnalyticsExtension",
      exportName: "ServerAnalyticsExtension",
      module: "src/ServerAnalyticsExtension.js"
    })
  })

  it("uses autoload for an explicit entrypoint and reports a missing module", () => {
    const document = decodeDocument({ ...minimal, entrypoint: "Vendor\\Pkg\\Main", autoload: { "psr-4": { "Vendor\\Pkg\\": "backend" } } })
    expect(resolveEntrypoint(document, files("backend/Main.ts"), undefined)).toMatchObject({ _tag: "Class", module: "backend/Main.ts", exportName: "Main" })
    expect(resolveEntrypoint(document, files(), "dist/server.js")).toEqual({
      _tag: "Missing",
      className: "Vendor\\Pkg\\Main",
      candidates: ["backend/Main.ts", "backend/Main.js", "backend/Main.mjs"]
    })
  })

  it("falls back to package.json host.entrypoint, then to none", () => {
    const document = decodeDocument(minimal)
    expect(resolveEntrypoint(document, files(), "dist/server.js")).toEqual({ _tag: "PackageJson", module: "dist/server.js" })
    expect(resolveEntrypoint(document, files(), undefined)).toEqual({ _tag: "None" })
  })
})

describe("layout", () => {
  it("finds conventional route files, migrations, bundle and styles", () => {
    const document = decodeDocument(minimal)
    const layout = resolveLayout(
      document,
      (path) => ["src/routes/web.ts", "src/routes/admin.js", "dist/bundle.js", "dist/extension.css"].includes(path),
      (path) => path === "database/migrations"
    )
    expect(layout).toEqual({
      routes: { admin: "src/routes/admin.js", web: "src/routes/web.ts" },
      migrations: "database/migrations",
      bundle: "dist/bundle.js",
      styles: "dist/extension.css"
    })
  })

  it("prefers the first default bundle location and declared paths", () => {
    const document = decodeDocument({ ...minimal, backend: { routes: { web: "routes/web.js" } } })
    const layout = resolveLayout(
      document,
      (path) => ["resources/frontend/dist/extension.js", "dist/extension.js", "src/routes/admin.ts"].includes(path),
      () => false
    )
    expect(layout.routes).toEqual({ web: "routes/web.js" })
    expect(layout.bundle).toBe("resources/frontend/dist/extension.js")
    expect(layout.migrations).toBeUndefined()
  })

  it("names the CSS isolation class", () => {
    expect(isolationClass(decodeDocument(minimal))).toBe("host-ext--acme-server-analytics")
    expect(isolationClass(decodeDocument({ ...minimal, frontend: { css_isolation: { mode: "root-class", class: "mine" } } }))).toBe("mine")
  })
})
