import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "vitest"
import { entryFor, exportArchives, index, writeIndex } from "../registry/helpers.js"
import { runHost, tempDir } from "../support/cli.js"
import { request, startServer, writePanelConfig } from "./helpers.js"

it("the admin API updates an extension from the registry (latest, or a given version), and lists and applies all updates", async () => {
  const registry = tempDir("host-registry-")
  const root = tempDir("host-root-")
  const archives = await exportArchives(registry.path, [{ fixture: "hello-world" }, { fixture: "hello-world", version: "1.1.0" }])
  const url = writeIndex(registry.path, index([entryFor(archives, "acme/hello-world")]))
  writePanelConfig(root.path)
  mkdirSync(join(root.path, "config"), { recursive: true })
  writeFileSync(join(root.path, "config", "host.yaml"), `registry_url: ${url}\n`)
  expect((await runHost(["add", "acme/hello-world@1.0.0", "--root", root.path])).code).toBe(0)
  const server = await startServer(root.path)
  try {
    const update = `${server.url}/admin/host/api/extensions/acme/hello-world/update`
    const latest = await request(update, { as: "admin", method: "POST", body: {} })
    expect(latest.status, latest.text).toBe(200)
    expect(latest.json).toMatchObject({ data: { action: "updated", fromVersion: "1.0.0", version: "1.1.0" } })
    const pinned = await request(update, { as: "admin", method: "POST", body: { version: "1.0.0" } })
    expect(pinned.json).toMatchObject({ data: { action: "updated", fromVersion: "1.1.0", version: "1.0.0" } })
    const unknown = await request(update, { as: "admin", method: "POST", body: { version: "^9" } })
    expect(unknown.status).toBe(422)
    expect(unknown.json).toMatchObject({ errors: [{ code: "SourceRejected", detail: expect.stringContaining("^9") }] })

    const updates = `${server.url}/admin/host/api/updates`
    expect((await request(updates, { as: "alice" })).status).toBe(403)
    expect((await request(updates, { as: "admin" })).json).toEqual({ data: [{ id: "acme/hello-world", current: "1.0.0", available: "1.1.0" }] })
    const all = await request(updates, { as: "admin", method: "POST", body: {} })
    expect(all.status, all.text).toBe(200)
    expect(all.json).toMatchObject({ data: [{ id: "acme/hello-world", action: "updated", fromVersion: "1.0.0", version: "1.1.0" }] })
    expect((await request(updates, { as: "admin" })).json).toEqual({ data: [] })
  } finally {
    await server.stop()
    root.cleanup()
    registry.cleanup()
  }
})
