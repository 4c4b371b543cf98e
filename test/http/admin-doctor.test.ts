import { appendFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runHost, tempDir } from "../support/cli.js"
import { writeExtension } from "../support/extensions.js"
import { install, request, type RunningServer, startServer, writePanelConfig } from "./helpers.js"

// `GET /admin/host/api/extensions/{vendor}/{name}/doctor` (docs/http.md): the report `host doctor <id>`
// prints, from the running server, over real HTTP.

const root = tempDir("host-doctor-http-")
const src = tempDir("host-doctor-http-src-")
let server: RunningServer

beforeAll(async () => {
  writePanelConfig(root.path)
  const folder = writeExtension(src.path, {
    id: "acme/broken",
    version: "1.0.0",
    files: {
      "src/BrokenExtension.js": `export class BrokenExtension { getId() { return "acme/broken" } register() {} boot() {} getHealthChecks() { return [{ id: "db", status: "fail", message: "no database" }] } }\n`,
      "src/routes/api.js": "export default () => {}\n"
    }
  })
  appendFileSync(join(folder, "extension.yaml"), "health:\n  checks:\n    - { id: db, label: Database, severity: critical }\n")
  await install(root.path, folder)
  server = await startServer(root.path)
}, 60_000)

afterAll(async () => {
  await server?.stop()
  root.cleanup()
  src.cleanup()
})

const api = (path: string) => `${server.url}/admin/host/api${path}`

describe("the doctor endpoint", () => {
  it("answers an admin with the report host doctor prints for the same extension", async () => {
    const answer = await request(api("/extensions/acme/broken/doctor"), { as: "admin" })
    expect(answer.status, answer.text).toBe(200)
    const { data } = answer.json as { data: { sections: Array<{ subject: string; checks: Array<{ id: string; verdict: string; evidence: string }> }>; healthy: boolean } }
    expect(data.healthy).toBe(false)
    const checks = new Map(data.sections[0]!.checks.map((check) => [check.id, check]))
    expect(checks.get("routes")).toMatchObject({ verdict: "fail", evidence: expect.stringContaining("src/routes/api.js") })
    expect(checks.get("health")).toMatchObject({ verdict: "fail", evidence: "critical: db error: no database" })
    expect(checks.get("loaded")).toMatchObject({ verdict: "ok", evidence: "enabled and booted" })
    // The CLI computes the same report from its own boot.
    const cli = await runHost(["doctor", "acme/broken", "--json", "--root", root.path])
    expect(cli.code).toBe(1)
    expect(JSON.parse(cli.stdout)).toEqual(data)
  })

  it("is for admins only, and 404 for an extension that is not installed", async () => {
    expect((await request(api("/extensions/acme/broken/doctor"), { as: "alice" })).status).toBe(403)
    expect((await request(api("/extensions/acme/broken/doctor"))).status).toBe(401)
    const missing = await request(api("/extensions/acme/nothing/doctor"), { as: "admin" })
    expect(missing.status).toBe(404)
    expect(missing.text).toContain("extension acme/nothing is not installed")
  })
})
