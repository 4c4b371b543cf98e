import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "vitest"
import { fixture, tempDir } from "../support/cli.js"
import { inspectDatabase } from "../support/extensions.js"
import { request, startServer, writePanelConfig } from "./helpers.js"

it("POST /admin/host/api/reconcile plans and applies the desired state; GET health reports checks", async () => {
  const root = tempDir("host-root-")
  writePanelConfig(root.path)
  mkdirSync(join(root.path, "desired-state"))
  writeFileSync(
    join(root.path, "desired-state", "extensions.yaml"),
    `host: "1.0"\nextensions:\n  acme/hello-world:\n    source: { path: ${fixture("extensions", "hello-world")} }\n`
  )
  const server = await startServer(root.path)
  try {
    const forbidden = await request(`${server.url}/admin/host/api/reconcile`, { as: "alice", method: "POST", body: {} })
    expect(forbidden.status, forbidden.text).toBe(403)
    const dry = await request(`${server.url}/admin/host/api/reconcile`, { as: "admin", method: "POST", body: { dry_run: true } })
    expect(dry.status).toBe(200)
    expect((dry.json as { data: { summary: { install: number }; apply?: unknown } }).data).toMatchObject({ summary: { install: 1 } })
    expect(inspectDatabase(root.path).extensions).toEqual([])
    const applied = await request(`${server.url}/admin/host/api/reconcile`, { as: "admin", method: "POST", body: {} })
    expect(applied.status).toBe(200)
    const data = (applied.json as { data: { apply: { applied: Array<{ id: string }>; failed: unknown } } }).data
    expect(data.apply.applied.map((action) => action.id)).toEqual(["acme/hello-world"])
    expect(data.apply.failed).toBeNull()
    expect(inspectDatabase(root.path).extensions.map((e) => e.extension_id)).toEqual(["acme/hello-world"])
    const again = await request(`${server.url}/admin/host/reconcile`, { as: "admin", method: "POST", body: { dry_run: true } })
    expect(again.status).toBe(200)
    expect((again.json as { data: { actions: Array<unknown> } }).data.actions).toEqual([])
    const bad = await request(`${server.url}/admin/host/api/reconcile`, { as: "admin", method: "POST", body: { dry_run: "yes" } })
    expect(bad.status).toBe(400)

    const health = await request(`${server.url}/admin/host/api/health`, { as: "admin" })
    expect(health.status).toBe(200)
    expect(health.json).toEqual({ data: { extensions: [{ extensionId: "acme/hello-world", checks: [] }], critical_failures: [] } })
  } finally {
    await server.stop()
    root.cleanup()
  }
})
