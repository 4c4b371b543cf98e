import Database from "better-sqlite3"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import { expect, it } from "vitest"
import { entryFor, exportArchives, index, writeIndex } from "../registry/helpers.js"
import { fixture, runHost, tempDir } from "../support/cli.js"
import { inspectDatabase } from "../support/extensions.js"
import { request, startServer, writePanelConfig } from "./helpers.js"

// DESIGN.md §23 "One rule in one place": the actor recorded, how long an operation waits for the lock and
// registry version pinning are the same whether the CLI, the admin API or the webhook asks
// (src/usecases/FrontDoor.ts).

const desiredHelloWorld = (root: string) => {
  mkdirSync(join(root, "desired-state"), { recursive: true })
  writeFileSync(
    join(root, "desired-state", "extensions.yaml"),
    `host: "1.0"\nextensions:\n  acme/hello-world:\n    source: { path: ${fixture("extensions", "hello-world")} }\n`
  )
}

it("a reconcile an admin starts in the UI names that admin in the activity log", async () => {
  const root = tempDir("host-root-")
  writePanelConfig(root.path)
  desiredHelloWorld(root.path)
  const server = await startServer(root.path)
  try {
    const applied = await request(`${server.url}/admin/host/api/reconcile`, { as: "admin", method: "POST", body: {} })
    expect(applied.status, applied.text).toBe(200)
    const activity = inspectDatabase(root.path).activity.filter((row) => row.extension_id === "acme/hello-world")
    expect(activity.length).toBeGreaterThan(0)
    const actors = activity.map((row) => (JSON.parse(row.context) as { actor: unknown }).actor)
    // The admin signed in with the test's admin token: the same actor any other admin change records.
    expect(actors).toEqual(activity.map(() => ({ type: "admin", user: "admin" })))
  } finally {
    await server.stop()
    root.cleanup()
  }
})

it("an upload install and a UI reconcile wait for the lock as every other admin operation does", async () => {
  const root = tempDir("host-root-")
  const work = tempDir("host-work-")
  writePanelConfig(root.path)
  desiredHelloWorld(root.path)
  const exported = await runHost(["--root", root.path, "export", fixture("extensions", "hello-world"), "--output", `${work.path}/`, "--json"])
  expect(exported.code, exported.stderr).toBe(0)
  const archive = (JSON.parse(exported.stdout) as { archive: string }).archive
  const server = await startServer(root.path)
  // A live holder (this test's process) keeps the lock for the whole of each request.
  const db = new Database(join(root.path, "storage", "host", "host.db"))
  const lock = { id: "held-by-test", holder: "cli", pid: process.pid, hostname: hostname(), operation: "add acme/x", acquired_at: new Date().toISOString() }
  db.prepare("INSERT INTO host_settings (extension_id, key, value, created_at, updated_at) VALUES ('host/core', 'lock', ?, '', '')").run(JSON.stringify(lock))
  try {
    const form = new FormData()
    form.append("archive", new Blob([readFileSync(archive)]), archive.split("/").pop()!)
    const uploaded = await request(`${server.url}/admin/host/api/extensions`, { as: "admin", method: "POST", body: form })
    const reconciled = await request(`${server.url}/admin/host/api/reconcile`, { as: "admin", method: "POST", body: {} })
    for (const refused of [uploaded, reconciled]) {
      expect(refused.status, refused.text).toBe(409)
      // The refusal says how long it waited: the server's one lock wait (5 s), not "at once".
      expect(refused.json).toMatchObject({ errors: [{ code: "LockHeld", detail: expect.stringContaining("waited 5s") }] })
    }
  } finally {
    db.prepare("DELETE FROM host_settings WHERE extension_id = 'host/core' AND key = 'lock'").run()
    db.close()
    await server.stop()
    root.cleanup()
    work.cleanup()
  }
})

it("the admin API's registry install pins the version as host add does", async () => {
  const registry = tempDir("host-registry-")
  const root = tempDir("host-root-")
  const archives = await exportArchives(registry.path, [{ fixture: "hello-world" }, { fixture: "hello-world", version: "1.1.0" }])
  const url = writeIndex(registry.path, index([entryFor(archives, "acme/hello-world")]))
  writePanelConfig(root.path)
  mkdirSync(join(root.path, "config"), { recursive: true })
  writeFileSync(join(root.path, "config", "host.yaml"), `registry_url: ${url}\n`)
  expect((await runHost(["add", "acme/hello-world@1.0.0", "--root", root.path])).code).toBe(0)
  // The CLI pins acme/hello-world to the version the registry resolves now, and names it.
  const cli = await runHost(["add", "acme/hello-world", "--root", root.path, "--json"])
  expect(cli.code).not.toBe(0)
  expect(cli.stderr + cli.stdout).toContain("--source acme/hello-world@1.1.0")
  const server = await startServer(root.path)
  try {
    const again = await request(`${server.url}/admin/host/api/registry/install`, { as: "admin", method: "POST", body: { id: "acme/hello-world" } })
    expect(again.status, again.text).toBe(409)
    expect(again.text).toContain("--source acme/hello-world@1.1.0")
  } finally {
    await server.stop()
    root.cleanup()
    registry.cleanup()
  }
})
