import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { fixture, runHost } from "../support/cli.js"

interface Expected {
  readonly path: string
  readonly message: string
}

const invalidCases = readdirSync(fixture("invalid")).sort()

describe("host validate", () => {
  it("accepts fixtures/extensions/hello-world", async () => {
    const run = await runHost(["validate", fixture("extensions", "hello-world")])
    expect(run.stdout).toBe("Manifest is valid.\n")
    expect(run.code).toBe(0)
  })

  it("accepts fixtures/extensions/full, warning about its permission on a route without {server}", async () => {
    const run = await runHost(["validate", fixture("extensions", "full")])
    expect(run.stdout).toBe(
      "Manifest is valid.\nWarnings:\n - backend.routes.api-client: route GET /stats in src/routes/api-client.ts requires permission \"full.view\" but has no {server} in its path: " +
        "under a real panel every server owner holds it (the permission is checked against any server the user owns); put {server} in the path to check it on one server (docs/authoring.md \"Routes\")\n"
    )
    expect(run.code).toBe(0)
  })

  it("warns when a route's permission guards a path without {server} (not for {server} or :server paths, nor the admin group)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "host-validate-permission-"))
    try {
      mkdirSync(join(dir, "src", "routes"), { recursive: true })
      writeFileSync(
        join(dir, "extension.yaml"),
        "host: \"1.0\"\nid: acme/guarded\nname: Guarded\nversion: 1.0.0\ndescription: Guarded routes\nlicense: MIT\nbackend:\n  permissions:\n    - stats.view\n    - stats.manage\n"
      )
      writeFileSync(
        join(dir, "src", "routes", "api-client.ts"),
        `import { defineRoutes } from "@host/sdk/server"
export default defineRoutes((r) => {
  // r.get("/commented", () => 1, { permission: "stats.view" })
  r.get("/stats", ({ user }) => ({ user, note: "a (paren), a {brace}" }), { permission: "stats.view" })
  r.post('/servers/{server}/reset', () => ({ permission: "not-an-option" }), { permission: "stats.manage" })
  r.get("/servers/:server/stats", () => ({}), { permission: "stats.view" })
  r.delete("/everything", async () => {
    return { done: true }
  }, {
    permission: "stats.manage"
  })
  r.get("/open", () => ({ open: true }))
})
`
      )
      writeFileSync(
        join(dir, "src", "routes", "admin.ts"),
        `import { defineRoutes } from "@host/sdk/server"\nexport default defineRoutes((r) => { r.get("/all", () => 1, { permission: "stats.view" }) })\n`
      )
      const run = await runHost(["validate", dir, "--json"])
      expect(run.code).toBe(0)
      const report = JSON.parse(run.stdout) as { valid: boolean; warnings: Array<{ path: string; message: string }> }
      expect(report.valid).toBe(true)
      expect(report.warnings.map((warning) => warning.message.split(":")[0])).toEqual([
        "route GET /stats in src/routes/api-client.ts requires permission \"stats.view\" but has no {server} in its path",
        "route DELETE /everything in src/routes/api-client.ts requires permission \"stats.manage\" but has no {server} in its path"
      ])
      expect(report.warnings[0]).toEqual({
        path: "backend.routes.api-client",
        message: expect.stringContaining("under a real panel every server owner holds it")
      })
      // --strict makes the warning fail the check.
      expect((await runHost(["validate", dir, "--strict"])).code).toBe(1)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("has an invalid fixture for every validation error", () => {
    expect(invalidCases.length).toBeGreaterThanOrEqual(45)
  })

  it.each(invalidCases)("rejects fixtures/invalid/%s with the field path", async (name) => {
    const expected = JSON.parse(readFileSync(fixture("invalid", name, "expected.json"), "utf8")) as Expected
    const run = await runHost(["validate", fixture("invalid", name), "--json"])
    expect(run.code).toBe(1)
    const report = JSON.parse(run.stdout) as { valid: boolean; errors: Array<Expected>; warnings: Array<Expected> }
    expect(Object.keys(report)).toEqual(["valid", "errors", "warnings"])
    expect(report.valid).toBe(false)
    expect(report.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: expected.path, message: expect.stringContaining(expected.message) })])
    )
  })

  it("prints the text form of failures", async () => {
    const run = await runHost(["validate", fixture("invalid", "bad-permission")])
    expect(run.code).toBe(1)
    expect(run.stdout).toBe(
      "Validation failed:\n - backend.permissions[0]: permission \"ViewStats\" must have the shape <area>.<action> (lowercase, like analytics.view)\n"
    )
  })

  it("lists warnings, and fails on them only with --strict", async () => {
    const expected = JSON.parse(readFileSync(fixture("warnings", "deprecated", "expected.json"), "utf8")) as { warnings: Array<Expected> }
    const lenient = await runHost(["validate", fixture("warnings", "deprecated"), "--json"])
    expect(lenient.code).toBe(0)
    const report = JSON.parse(lenient.stdout) as { valid: boolean; errors: Array<Expected>; warnings: Array<Expected> }
    expect(report.valid).toBe(true)
    expect(report.errors).toEqual([])
    for (const warning of expected.warnings) {
      expect(report.warnings).toEqual(
        expect.arrayContaining([expect.objectContaining({ path: warning.path, message: expect.stringContaining(warning.message) })])
      )
    }
    expect(report.warnings).toHaveLength(expected.warnings.length)

    const text = await runHost(["validate", fixture("warnings", "deprecated")])
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^Manifest is valid\.\nWarnings:\n - homepage: /)

    const strict = await runHost(["validate", fixture("warnings", "deprecated"), "--strict", "--json"])
    expect(strict.code).toBe(1)
    expect(JSON.parse(strict.stdout)).toMatchObject({ valid: false, errors: [] })
  })

  it("accepts the manifest file itself and defaults to the current folder", async () => {
    expect((await runHost(["validate", fixture("extensions", "full", "extension.yaml")])).code).toBe(0)
    const here = await runHost(["validate", "--json"], { cwd: fixture("extensions", "hello-world") })
    expect(JSON.parse(here.stdout)).toEqual({ valid: true, errors: [], warnings: [] })
  })

  it("reports a folder without a manifest", async () => {
    const run = await runHost(["validate", fixture(), "--json"])
    expect(run.code).toBe(1)
    expect(JSON.parse(run.stdout).errors).toEqual([{ path: "extension.yaml", message: `not found in ${fixture()}` }])
  })

  it("does not follow symbolic links out of the extension", async () => {
    const dir = mkdtempSync(join(tmpdir(), "host-link-"))
    writeFileSync(join(dir, "extension.yaml"), readFileSync(fixture("extensions", "hello-world", "extension.yaml"), "utf8") + "frontend:\n  bundle: dist/extension.js\n")
    mkdirSync(join(dir, "dist"))
    symlinkSync("/etc/hostname", join(dir, "dist", "extension.js"))
    const run = await runHost(["validate", dir, "--json"])
    rmSync(dir, { recursive: true, force: true })
    expect(JSON.parse(run.stdout).errors).toEqual([
      { path: "frontend.bundle", message: `bundle "dist/extension.js" does not exist (build the frontend first)` }
    ])
  })

  it("reports a path that does not exist", async () => {
    const run = await runHost(["validate", "/nonexistent/ext"])
    expect(run.code).toBe(1)
    expect(run.stdout).toContain(" - (path): /nonexistent/ext does not exist")
  })
})
