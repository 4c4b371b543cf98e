import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "vitest"
import { fixture, tempDir } from "../support/cli.js"
import { install, request, startServer, writePanelConfig } from "./helpers.js"

it("GET /admin/host/extensions renders the admin page for admins only", async () => {
  const root = tempDir("host-root-")
  writePanelConfig(root.path)
  mkdirSync(join(root.path, "desired-state"))
  writeFileSync(
    join(root.path, "desired-state", "extensions.yaml"),
    `host: "1.0"\nextensions:\n  acme/hello-world:\n    source: { path: ${fixture("extensions", "hello-world")} }\n    enabled: false\n`
  )
  await install(root.path, fixture("extensions", "hello-world"))
  const server = await startServer(root.path)
  try {
    const page = `${server.url}/admin/host/extensions`
    const anonymous = await request(page)
    expect(anonymous.status).toBe(303)
    expect(anonymous.headers.get("location")).toBe("/auth/login?redirect=%2Fadmin%2Fhost%2Fextensions")
    expect((await request(page, { as: "alice" })).status).toBe(403)
    const admin = await request(page, { as: "admin" })
    expect(admin.status).toBe(200)
    expect(admin.headers.get("content-type")).toContain("text/html")
    expect(admin.text).toContain(`<tr data-extension="acme/hello-world">`)
    expect(admin.text).toContain(`<button data-action="disable">Disable</button>`)
    expect(admin.text).toContain("~ disable acme/hello-world: enabled, desired disabled")
    expect(admin.text).toContain("Installed v1.0.0")
    expect(admin.text).toContain(`<button id="reconcile">Apply the plan</button>`)
  } finally {
    await server.stop()
    root.cleanup()
  }
})
