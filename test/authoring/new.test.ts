import { execFile } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { request, type RunningServer, startServer, writePanelConfig } from "../http/helpers.js"
import { sessionCookie } from "../support/browser.js"
import { repoRoot, runHost, tempDir } from "../support/cli.js"
import { expectNoReactInside, mustRun, scaffold } from "./helpers.js"

// `host new` for each preset and for the flag combinations that change files, through the author's
// whole loop: new → validate --strict → build → validate --strict → export → add → the route answers
// as a signed-in user on a running panel.

const run = promisify(execFile)

interface Case {
  readonly id: string
  readonly flags: ReadonlyArray<string>
  readonly parts: { frontend: boolean; api: boolean; adminRoutes: boolean; admin: boolean; migrations: boolean; tests: boolean }
}

const cases: ReadonlyArray<Case> = [
  { id: "acme/std", flags: [], parts: { frontend: true, api: true, adminRoutes: false, admin: false, migrations: false, tests: false } },
  { id: "acme/back", flags: ["--preset", "backend"], parts: { frontend: false, api: true, adminRoutes: false, admin: false, migrations: false, tests: false } },
  { id: "acme/whole", flags: ["--preset", "full"], parts: { frontend: true, api: true, adminRoutes: true, admin: true, migrations: true, tests: true } },
  { id: "acme/mini", flags: ["--preset", "minimal"], parts: { frontend: false, api: false, adminRoutes: false, admin: false, migrations: false, tests: false } },
  { id: "acme/std-plain", flags: ["--no-api-routes"], parts: { frontend: true, api: false, adminRoutes: false, admin: false, migrations: false, tests: false } },
  {
    id: "acme/back-admin",
    flags: ["--preset", "backend", "--with-admin-routes", "--with-admin", "--with-migrations"],
    parts: { frontend: false, api: true, adminRoutes: true, admin: true, migrations: true, tests: false }
  },
  {
    id: "acme/mini-api",
    flags: ["--preset", "minimal", "--with-api-routes", "--with-tests"],
    parts: { frontend: false, api: true, adminRoutes: false, admin: false, migrations: false, tests: true }
  }
]

const expectedFiles = (c: Case, name: string, className: string) =>
  [
    ".gitignore",
    "README.md",
    "extension.yaml",
    "package.json",
    "tsconfig.json",
    `src/${className}.ts`,
    ...(c.parts.api || c.parts.adminRoutes ? ["src/types.ts"] : []),
    ...(c.parts.api ? ["src/routes/api-client.ts"] : []),
    ...(c.parts.adminRoutes ? ["src/routes/admin.ts"] : []),
    ...(c.parts.migrations ? [`database/migrations/2026_01_01_000000_create_ext_acme_${name.replace(/-/g, "_")}_visits.ts`] : []),
    ...(c.parts.frontend
      ? [
        "resources/frontend/src/index.tsx",
        `resources/frontend/src/components/${className.replace(/Extension$/, "")}Widget.tsx`,
        "resources/frontend/src/pages/ServerPage.tsx",
        "resources/frontend/src/styles.css"
      ]
      : []),
    ...(c.parts.tests ? ["tests/extension.test.ts", "vitest.config.mjs"] : [])
  ].sort()

const classOf = (name: string) => `${name.split("-").map((part) => part[0]!.toUpperCase() + part.slice(1)).join("")}Extension`

describe("host new: every preset and part flag through new → validate → build → export → add → a route", () => {
  const work = tempDir("host-authoring-")
  const root = join(work.path, "panel")
  let server: RunningServer
  const scaffolds = new Map<string, string>()

  beforeAll(async () => {
    mkdirSync(root)
    writePanelConfig(root)
    for (const c of cases) {
      const name = c.id.split("/")[1]!
      const result = await scaffold(work.path, c.id, ...c.flags)
      scaffolds.set(c.id, result.path)
      // The files are exactly the parts asked for.
      expect(result.parts, c.id).toEqual(c.parts)
      expect([...result.files].sort(), c.id).toEqual(expectedFiles(c, name, classOf(name)))
      // Valid before anything is built …
      await mustRun(["validate", "--strict", result.path])
      if (c.parts.frontend) {
        const built = JSON.parse((await mustRun(["build", result.path, "--json"])).stdout) as { bundle: string; bytes: number; styles?: string; ms: number }
        expect(built.bundle).toBe("resources/frontend/dist/extension.js")
        expect(built.styles).toBe("resources/frontend/dist/extension.css")
        const bundle = join(result.path, built.bundle)
        expect(statSync(bundle).size).toBe(built.bytes)
        // React comes from the panel: the bundle is the extension's own code only, a few KiB.
        const text = expectNoReactInside(bundle)
        expect(built.bytes).toBeLessThan(6 * 1024)
        expect(text).toContain("window.React")
        expect(text).toContain("//# sourceMappingURL=extension.js.map")
        expect(existsSync(`${bundle}.map`)).toBe(true)
      }
      // … and after.
      await mustRun(["validate", "--strict", result.path])
      const exported = JSON.parse((await mustRun(["export", result.path, "--output", `${work.path}/archives/`, "--json"])).stdout) as { archive: string }
      await mustRun(["--root", root, "add", exported.archive])
    }
    server = await startServer(root)
  }, 240_000)

  afterAll(async () => {
    await server?.stop()
    work.cleanup()
  })

  it("installs every scaffold enabled, none quarantined", async () => {
    const listed = JSON.parse((await mustRun(["--root", root, "list", "--json"])).stdout) as ReadonlyArray<{ id: string; status: string }>
    expect(listed.map((entry) => [entry.id, entry.status]).sort()).toEqual(cases.map((c) => [c.id, "enabled"]).sort())
    const ready = await fetch(`${server.url}/host/ready`)
    expect(ready.status).toBe(200)
  })

  it("answers the api-client route of each scaffold that has one, as a signed-in user", async () => {
    for (const c of cases.filter((c) => c.parts.api)) {
      const response = await request(`${server.url}/api/client/host/${c.id}/hello`, { as: "alice" })
      expect(response.status, c.id).toBe(200)
      expect((response.json as { message: string }).message, c.id).toBe("Hello, alice!")
      const server404 = await request(`${server.url}/api/client/host/${c.id}/servers/srv-alice/status`, { as: "dave" })
      expect(server404.status, c.id).toBe(404)
      const own = await request(`${server.url}/api/client/host/${c.id}/servers/srv-alice/status`, { as: "alice" })
      expect(own.status, c.id).toBe(200)
      const anonymous = await request(`${server.url}/api/client/host/${c.id}/hello`, {})
      expect(anonymous.status, c.id).toBe(401)
    }
    for (const c of cases.filter((c) => !c.parts.api)) {
      const response = await request(`${server.url}/api/client/host/${c.id}/hello`, { as: "alice" })
      expect(response.status, c.id).toBe(404)
    }
  })

  it("counts visits in the migration's table and reads the greeting from the settings", async () => {
    const before = await request(`${server.url}/api/client/host/acme/whole/hello`, { as: "bob" })
    const first = await request(`${server.url}/api/client/host/acme/whole/visits`, { as: "bob", method: "POST" })
    const second = await request(`${server.url}/api/client/host/acme/whole/visits`, { as: "bob", method: "POST" })
    expect((first.json as { visits: number }).visits).toBe((before.json as { visits: number }).visits + 1)
    expect((second.json as { visits: number }).visits).toBe((first.json as { visits: number }).visits + 1)
    const read = await request(`${server.url}/api/client/host/acme/whole/hello`, { as: "bob" })
    expect((read.json as { visits: number }).visits).toBe((second.json as { visits: number }).visits)
    const saved = await request(`${server.url}/admin/host/api/extensions/acme/whole/settings`, {
      as: "admin",
      method: "PUT",
      body: { greeting: "Welcome", show_visits: false }
    })
    expect(saved.status).toBe(200)
    const greeted = await request(`${server.url}/api/client/host/acme/whole/hello`, { as: "bob" })
    expect(greeted.json).toMatchObject({ message: "Welcome, bob!", visits: null })
  })

  it("serves the admin routes to admins only", async () => {
    for (const id of ["acme/whole", "acme/back-admin"]) {
      const admin = await sessionCookie(server.url, "admin")
      const asAdmin = await fetch(`${server.url}/admin/host/${id}/overview`, { headers: { cookie: `${admin.name}=${admin.value}`, accept: "application/json" } })
      expect(asAdmin.status, id).toBe(200)
      expect(await asAdmin.json()).toMatchObject({ extension: id, version: "0.1.0", users: expect.any(Number) })
      const alice = await sessionCookie(server.url, "alice")
      const asAlice = await fetch(`${server.url}/admin/host/${id}/overview`, { headers: { cookie: `${alice.name}=${alice.value}`, accept: "application/json" } })
      expect(asAlice.status, id).toBe(403)
    }
  })

  it("scaffolds typed code: the framework's tsc accepts the scaffold's own tsconfig without npm install", async () => {
    const tsc = join(repoRoot, "node_modules", "typescript", "bin", "tsc")
    // full holds every backend and frontend template with routes; std-plain the frontend without them.
    const results = await Promise.all(["acme/whole", "acme/std-plain", "acme/mini"].map((id) =>
      run(process.execPath, [tsc, "-p", scaffolds.get(id)!], { cwd: scaffolds.get(id)! }).then(
        () => ({ id, ok: true, output: "" }),
        (error: { stdout?: string }) => ({ id, ok: false, output: error.stdout ?? String(error) })
      )
    ))
    for (const result of results) expect(result, result.output).toMatchObject({ ok: true })
    expect(readdirSync(scaffolds.get("acme/whole")!)).not.toContain("node_modules")
  }, 120_000)

  it("writes a README with the five commands and what to edit", () => {
    const readme = readFileSync(join(scaffolds.get("acme/whole")!, "README.md"), "utf8")
    for (const command of ["host build", "host validate --strict", "host export", "host add", "host dev . --link --watch"]) {
      expect(readme).toContain(command)
    }
    expect(readme).toContain("src/routes/api-client.ts")
    expect(readme).toContain("resources/frontend/src/components/WholeWidget.tsx")
  })
})

describe("host new refusals", () => {
  const work = tempDir("host-authoring-refuse-")
  afterAll(() => work.cleanup())

  it("refuses a non-empty folder and writes nothing", async () => {
    const target = join(work.path, "taken")
    mkdirSync(target)
    writeFileSync(join(target, "notes.txt"), "mine\n")
    const result = await runHost(["new", "acme/taken", "--path", target])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^error: new: .*taken: the folder is not empty \(1 entry\); choose another --path; nothing was written\n/)
    expect(readdirSync(target)).toEqual(["notes.txt"])
    expect(readdirSync(work.path)).toEqual(["taken"])
  })

  it("accepts an empty existing folder", async () => {
    const target = join(work.path, "empty")
    mkdirSync(target)
    await mustRun(["new", "acme/empty", "--path", target, "--preset", "minimal"])
    expect(readdirSync(target).sort()).toEqual([".gitignore", "README.md", "extension.yaml", "package.json", "src", "tsconfig.json"])
  })

  it("refuses an invalid or reserved id, and contradictory flags, writing nothing", async () => {
    const before = readdirSync(work.path).sort()
    const invalid = await runHost(["new", "Acme/Bad_Name"], { cwd: work.path })
    expect(invalid.code).toBe(1)
    expect(invalid.stderr).toContain("is not a valid extension id")
    const reserved = await runHost(["new", "host/thing"], { cwd: work.path })
    expect(reserved.code).toBe(1)
    expect(reserved.stderr).toContain('vendor "host" is reserved')
    const both = await runHost(["new", "acme/both", "--with-api-routes", "--no-api-routes"], { cwd: work.path })
    expect(both.code).toBe(2)
    expect(both.stderr).toContain("--with-api-routes and --no-api-routes contradict each other")
    const preset = await runHost(["new", "acme/what", "--preset", "huge"], { cwd: work.path })
    expect(preset.code).toBe(2)
    expect(readdirSync(work.path).sort()).toEqual(before)
  })

  it("defaults to ./<name> in the current folder and prints the next steps", async () => {
    const result = await mustRun(["new", "acme/defaulted"], { cwd: work.path })
    expect(result.stdout).toContain(`Created acme/defaulted (preset standard) in ${join(work.path, "defaulted")}`)
    expect(result.stdout).toContain("host validate --strict")
    expect(existsSync(join(work.path, "defaulted", "resources", "frontend", "src", "index.tsx"))).toBe(true)
  })
})
