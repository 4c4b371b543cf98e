import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "vitest"
import { fixture, tempDir } from "../support/cli.js"
import { install, request, startServer, writePanelConfig } from "./helpers.js"

it("GET /admin/host/extensions serves the admin app's page for admins only", async () => {
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
    // The admin app's shell: the page's React, the theme, the app, and the session's CSRF token for its API calls.
    for (const asset of ["/host/vendor.js", "/host/admin.js", "/host/panel.css", "/host/admin.css"]) expect(admin.text).toContain(asset)
    expect(admin.text).toMatch(/window\.__HOST__ = \{.*"csrfToken":/)
    expect(admin.text).toContain(`"desiredState":`)
  } finally {
    await server.stop()
    root.cleanup()
  }
})
