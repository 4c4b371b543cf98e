import Database from "better-sqlite3"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gz, packageEntries, rawTar } from "../archive/helpers.js"
import { type BuiltArchive, entryFor, exportArchives, index, writeIndex } from "../registry/helpers.js"
import { tempDir } from "../support/cli.js"
import { request, type RunningServer, startServer, writePanelConfig } from "./helpers.js"

// The admin API additions the admin screens call (docs/http.md "Admin screens"), over real HTTP against a
// real `host serve`, a file:// registry built by `host export`, and the panel's SQLite database.

const root = tempDir("host-screens-")
const registry = tempDir("host-screens-registry-")
let server: RunningServer
let archives: ReadonlyMap<string, BuiltArchive>
const desiredFile = () => join(root.path, "desired-state", "extensions.yaml")

beforeAll(async () => {
  archives = await exportArchives(registry.path, [
    { fixture: "hello-world" },
    { fixture: "hello-world", version: "1.1.0" },
    { fixture: "full" }
  ])
  const url = writeIndex(registry.path, index([entryFor(archives, "acme/hello-world"), entryFor(archives, "acme/full")]))
  writePanelConfig(root.path)
  writeFileSync(join(root.path, "config", "host.yaml"), `registry_url: ${url}\n`)
  mkdirSync(join(root.path, "desired-state"), { recursive: true })
  writeFileSync(desiredFile(), `# managed by CI\nhost: "1.0"\nextensions:\n  acme/full:\n    version: "^1.2"\n    settings:\n      refreshRate: 45 # tuned\n`)
  server = await startServer(root.path)
}, 120_000)

afterAll(async () => {
  await server?.stop()
  root.cleanup()
  registry.cleanup()
})

const api = (path: string) => `${server.url}/admin/host/api${path}`
type Json = Record<string, unknown> & { data: Record<string, unknown> & Array<Record<string, unknown>> }
const admin = async (path: string, init: { method?: string; body?: unknown } = {}) => {
  const answer = await request(api(path), { as: "admin", ...init })
  return { ...answer, body: answer.json as Json }
}

const uploadForm = (bytes: Uint8Array, name: string) => {
  const form = new FormData()
  form.append("archive", new Blob([new Uint8Array(bytes)]), name)
  return form
}

describe("admin screens API", () => {
  it("refuses non-admins every new endpoint (403) and anonymous requests (401)", async () => {
    const endpoints: Array<[string, string]> = [
      ["GET", "/extensions/overview"],
      ["POST", "/extensions/preview"],
      ["GET", "/extensions/acme/full"],
      ["GET", "/extensions/acme/full/impact"],
      ["POST", "/extensions/acme/full/health"],
      ["GET", "/registry?q=x"],
      ["POST", "/registry/install"],
      ["GET", "/desired-state"],
      ["POST", "/desired-state/adopt"],
      ["GET", "/activity/page"]
    ]
    for (const [method, path] of endpoints) {
      expect((await request(api(path), { method, as: "alice", body: method === "POST" ? {} : undefined })).status, `${method} ${path}`).toBe(403)
      expect((await request(api(path), { method, body: method === "POST" ? {} : undefined })).status, `${method} ${path}`).toBe(401)
    }
    for (const page of ["/admin/host/extensions", "/admin/host/extensions/acme/full", "/admin/host/registry", "/admin/host/desired-state", "/admin/host/activity"]) {
      expect((await request(`${server.url}${page}`, { as: "alice" })).status, page).toBe(403)
      const anonymous = await request(`${server.url}${page}`)
      expect(anonymous.status, page).toBe(303)
      expect(anonymous.headers.get("location")).toBe(`/auth/login?redirect=${encodeURIComponent(page)}`)
      const shell = await request(`${server.url}${page}`, { as: "admin" })
      expect(shell.status, page).toBe(200)
      expect(shell.text).toContain(`<script defer src="/host/admin.js"></script>`)
      expect(shell.text).not.toContain("/host/bridge.js")
    }
  })

  it("searches the registry by tag, with requires checked, and installs a pinned version", async () => {
    const found = await admin("/registry?q=widgets")
    expect(found.status, found.text).toBe(200)
    expect(found.body.data.map((entry) => entry.id)).toEqual(["acme/full"])
    expect(found.body.data[0]).toMatchObject({ latest: "1.2.0", requires: { ok: true }, installed: null, versions: [{ version: "1.2.0", requires: true }] })
    const hello = await admin("/registry?q=greeting")
    expect(hello.body.data[0]).toMatchObject({ id: "acme/hello-world", versions: [{ version: "1.1.0" }, { version: "1.0.0" }] })

    const bad = await admin("/registry/install", { method: "POST", body: { version: "1.0.0" } })
    expect(bad.status).toBe(400)
    expect(JSON.stringify(bad.json)).toContain("id")
    const pinned = await admin("/registry/install", { method: "POST", body: { id: "acme/hello-world", version: "1.0.0" } })
    expect(pinned.status, pinned.text).toBe(201)
    expect(pinned.body.data).toMatchObject({ id: "acme/hello-world", version: "1.0.0", action: "installed" })
    const overview = await admin("/extensions/overview")
    expect(overview.body.data).toEqual([expect.objectContaining({ id: "acme/hello-world", version: "1.0.0", updateAvailable: "1.1.0", managed: false })])
    const again = await admin("/registry?q=greeting")
    expect(again.body.data[0]).toMatchObject({ installed: { version: "1.0.0" }, updateAvailable: "1.1.0" })
    expect((await admin("/registry/install", { method: "POST", body: { id: "acme/full" } })).status).toBe(201)
  })

  it("shows an extension's detail: manifest, capabilities, migrations, schedules with next run, dependents, desired-state facts", async () => {
    const detail = await admin("/extensions/acme/full")
    expect(detail.status, detail.text).toBe(200)
    const data = detail.body.data as Record<string, any>
    expect(data).toMatchObject({ id: "acme/full", version: "1.2.0", status: "enabled", license: "MIT", source: { type: "registry" } })
    expect(data.dependencies).toEqual([{ id: "acme/hello-world", range: "^1.0", installed: "1.0.0", enabled: true, ok: true }])
    expect(data.capabilities.migrations.map((m: { name: string; status: string }) => [m.name, m.status])).toEqual([
      ["2024_01_01_000000_create_ext_full_visits", "ran"],
      ["2024_02_01_000000_create_ext_full_notes", "ran"]
    ])
    const prune = data.capabilities.schedules.find((task: { id: string }) => task.id === "prune-visits")
    expect(prune).toMatchObject({ cron: "15 3 * * *", command: "full:prune" })
    expect(new Date(prune.nextRun).getTime()).toBeGreaterThan(Date.now())
    expect(data.capabilities.healthChecks.map((check: { id: string }) => check.id)).toEqual(["upstream", "cache"])
    expect(data.managed).toMatchObject({ absent: false, enabled: true, settings: ["refreshRate"] })
    const hello = await admin("/extensions/acme/hello-world")
    expect(hello.body.data).toMatchObject({ dependents: [{ id: "acme/full", enabled: true }], managed: null, updateAvailable: "1.1.0" })
    expect((await admin("/extensions/acme/nope")).status).toBe(404)
  })

  it("shows the frontend errors the bridge reported, on the row and the detail", async () => {
    const reported = await request(`${server.url}/api/client/host/diagnostics`, {
      as: "dave",
      method: "POST",
      body: { extensionId: "acme/full", message: "Cannot read properties of undefined (reading 'name')", slot: "dashboard.widgets" }
    })
    expect(reported.status, reported.text).toBe(202)
    const overview = await admin("/extensions/overview")
    expect(overview.body.data.find((row) => row.id === "acme/full")).toMatchObject({
      frontendErrors: [{ message: "Cannot read properties of undefined (reading 'name')", slot: "dashboard.widgets", count: 1, user: "dave" }]
    })
    expect((await admin("/extensions/acme/full")).body.data).toMatchObject({ frontendErrors: [{ count: 1 }] })
  })

  it("runs one extension's health checks now", async () => {
    const health = await admin("/extensions/acme/full/health", { method: "POST", body: {} })
    expect(health.status, health.text).toBe(200)
    expect(health.body.data).toMatchObject({ extensionId: "acme/full", checks: [{ id: "upstream" }, { id: "cache" }] })
    expect(typeof health.body.data.checkedAt).toBe("string")
  })

  it("previews a removal: dependents, and the tables with their row counts", async () => {
    const db = new Database(join(root.path, "storage", "host", "host.db"))
    try {
      db.prepare("INSERT INTO ext_full_notes (body) VALUES ('one'), ('two')").run()
    } finally {
      db.close()
    }
    const impact = await admin("/extensions/acme/full/impact")
    expect(impact.status, impact.text).toBe(200)
    expect(impact.body.data).toMatchObject({
      id: "acme/full",
      dependents: [],
      tables: expect.arrayContaining([{ name: "ext_full_notes", rows: 2 }, { name: "ext_full_visits", rows: 0 }])
    })
    const hello = await admin("/extensions/acme/hello-world/impact")
    expect(hello.body.data).toMatchObject({ dependents: ["acme/full"], tables: [] })
  })

  it("serves the settings form's data without echoing secrets, and marks each invalid field", async () => {
    const form = await admin("/extensions/acme/full/settings")
    expect(form.body.data).toMatchObject({ title: "Full Example settings", managed: ["refreshRate"], secrets: { api_key: false } })
    expect((form.body.data as unknown as { values: Record<string, unknown> }).values.api_key).toBeNull()
    const saved = await admin("/extensions/acme/full/settings", { method: "PUT", body: { api_key: "k-123456", support_email: "ops@example.com" } })
    expect(saved.status, saved.text).toBe(200)
    expect(saved.text).not.toContain("k-123456")
    expect(saved.body.data).toMatchObject({ secrets: { api_key: true }, values: { api_key: null, support_email: "ops@example.com" } })
    const invalid = await admin("/extensions/acme/full/settings", { method: "PUT", body: { support_email: "not-an-email", region: "mars" } })
    expect(invalid.status).toBe(422)
    const errors = (invalid.json as { errors: Array<{ code: string; detail: string; source: { pointer: string } }> }).errors
    expect(errors.map((error) => error.source.pointer).sort()).toEqual(["/settings/region", "/settings/support_email"])
    expect(errors.find((error) => error.source.pointer === "/settings/region")!.detail).toContain(`must be one of "eu", "us", "asia"`)
    // Nothing of a refused save is written.
    expect((await admin("/extensions/acme/full/settings")).body.data).toMatchObject({ values: { support_email: "ops@example.com", region: "eu" } })
  })

  it("previews an upload: signature status, capabilities, and the failing check of a modified archive", async () => {
    const hello = archives.get("acme/hello-world@1.1.0")!
    const preview = await admin("/extensions/preview", { method: "POST", body: uploadForm(readFileSync(hello.file), hello.name) })
    expect(preview.status, preview.text).toBe(200)
    expect(preview.body.data).toMatchObject({
      id: "acme/hello-world",
      version: "1.1.0",
      action: "update",
      installed: { version: "1.0.0" },
      signature: { status: "unsigned" },
      installable: true,
      refusal: null
    })
    expect((preview.body.data.capabilities as { slots: Array<string> }).slots.length).toBeGreaterThan(0)
    // Nothing was installed by the preview.
    expect((await admin("/extensions/acme/hello-world")).body.data).toMatchObject({ version: "1.0.0" })

    const modified = gz(rawTar(packageEntries({ "README.md": "hello\n" }, { listed: { "README.md": "something else\n" } })))
    const refused = await admin("/extensions/preview", { method: "POST", body: uploadForm(modified, "acme-evil-1.0.0.host") })
    expect(refused.status, refused.text).toBe(200)
    expect(refused.body.data).toMatchObject({
      id: "acme/evil",
      signature: { status: "modified" },
      installable: false,
      refusal: { check: "integrity (checksum-mismatch)", detail: expect.stringContaining("README.md") }
    })
    const garbage = await admin("/extensions/preview", { method: "POST", body: uploadForm(new TextEncoder().encode("not a tar"), "x.host") })
    expect(garbage.status).toBe(422)
    expect((garbage.json as { errors: Array<{ code: string; detail: string }> }).errors[0]).toMatchObject({ code: "ArchiveRefused" })
  })

  it("pages and filters the activity", async () => {
    const all = await admin("/activity/page?limit=1")
    expect(all.status, all.text).toBe(200)
    expect(all.body.data).toHaveLength(1)
    const total = (all.body.meta as { total: number }).total
    expect(total).toBeGreaterThanOrEqual(2)
    const second = await admin("/activity/page?limit=1&offset=1")
    const firstTwo = await admin("/activity/page?limit=2")
    expect(firstTwo.body.data.map((row) => row.id)).toEqual([all.body.data[0]!.id, second.body.data[0]!.id])
    const filtered = await admin("/activity/page?extension=acme/full&action=installed")
    expect(filtered.body.data.map((row) => [row.extensionId, row.action])).toEqual([["acme/full", "installed"]])
    expect(filtered.body.meta).toMatchObject({ total: 1, extension: "acme/full", action: "installed" })
    expect((await admin("/activity/page?action=exploded")).status).toBe(400)
    // The query is the contract's (setUrlParams), decoded after the caller is known: a refusal names the field.
    const fractional = await admin("/activity/page?limit=1.5")
    expect([fractional.status, (fractional.json as { errors: Array<{ code: string; detail: string }> }).errors[0]]).toEqual([400, {
      code: "BadRequest",
      status: "400",
      detail: "the request does not fit the endpoint's contract: limit: Expected an integer, actual 1.5"
    }])
    expect((await request(api("/activity/page?limit=1.5"))).status).toBe(401)
    expect((await request(api("/activity/page?action=exploded"), { as: "alice" })).status).toBe(403)
  })

  it("shows the plan and the drift, and adopts only after the diff was seen", async () => {
    const state = await admin("/desired-state")
    expect(state.status, state.text).toBe(200)
    const plan = state.body.data.plan as { actions: Array<{ type: string; id: string }>; text: string }
    // refreshRate 45 is not what the panel has: configure; hello-world is installed but not listed.
    expect(plan.actions.map((action) => `${action.type} ${action.id}`)).toEqual(["configure acme/full"])
    expect(state.body.data.drift).toEqual(expect.arrayContaining([
      expect.objectContaining({ id: "acme/full", type: "configure" }),
      expect.objectContaining({ id: "acme/hello-world", type: "unlisted" })
    ]))
    const sha = state.body.data.sha256 as string

    const diff = await admin("/desired-state/adopt", { method: "POST", body: {} })
    expect(diff.status, diff.text).toBe(200)
    expect(diff.body.data).toMatchObject({ changed: true, written: false })
    expect(diff.body.data.diff).toContain("-      refreshRate: 45 # tuned")
    expect(diff.body.data.diff).toContain("+  acme/hello-world: 1.0.0")
    expect(diff.body.data.diff).not.toContain("k-123456")
    const stale = await admin("/desired-state/adopt", { method: "POST", body: { write: true, expected_sha256: "0".repeat(64) } })
    expect(stale.status).toBe(409)
    expect(readFileSync(desiredFile(), "utf8")).toContain("refreshRate: 45")
    const written = await admin("/desired-state/adopt", { method: "POST", body: { write: true, expected_sha256: sha } })
    expect(written.body.data).toMatchObject({ written: true })
    const text = readFileSync(desiredFile(), "utf8")
    expect(text).toContain("# managed by CI")
    expect(text).not.toContain("k-123456")
    const after = await admin("/desired-state")
    expect((after.body.data.plan as { actions: Array<unknown> }).actions).toEqual([])
    expect(after.body.data.drift).toEqual([])
  })
})

it("a missing desired-state file is said plainly; an unsigned upload's preview names the signature policy", async () => {
  const other = tempDir("host-screens-empty-")
  writePanelConfig(other.path)
  const running = await startServer(other.path, { env: { HOST_REQUIRE_SIGNATURES: "1" } })
  try {
    const hello = archives.get("acme/hello-world@1.0.0")!
    const preview = await request(`${running.url}/admin/host/api/extensions/preview`, { as: "admin", method: "POST", body: uploadForm(readFileSync(hello.file), hello.name) })
    expect(preview.json).toMatchObject({
      data: { action: "install", installable: false, signature: { status: "unsigned" }, refusal: { check: "signature", detail: expect.stringMatching(/sign/i) } }
    })
    const state = await request(`${running.url}/admin/host/api/desired-state`, { as: "admin" })
    expect(state.json).toMatchObject({ data: { exists: false, plan: null, drift: [] } })
    const registryState = await request(`${running.url}/admin/host/api/registry`, { as: "admin" })
    expect(registryState.status).toBe(409)
    expect(registryState.json).toMatchObject({ errors: [{ code: "RegistryNotConfigured" }] })
  } finally {
    await running.stop()
    other.cleanup()
  }
})

