import Database from "better-sqlite3"
import { join } from "node:path"
import { afterAll, expect, it } from "vitest"
import { fixture, tempDir } from "../support/cli.js"
import { install, request, type RunningServer, startServer, waitFor, writePanelConfig } from "../http/helpers.js"

// DESIGN.md §23 "Background work is supervised": a first runtime build that fails is logged and tried
// again on a schedule, and the poll runs regardless, so /host/ready turns 200 once the cause is gone
// without a restart (before, the poll never started and ready stayed 503 for good).

const root = tempDir("host-first-build-")
let server: RunningServer | undefined

afterAll(async () => {
  await server?.stop()
  root.cleanup()
})

it("a first build that fails is retried: ready turns 200 once the cause is gone", async () => {
  writePanelConfig(root.path)
  await install(root.path, fixture("extensions", "hello-world"))
  const db = join(root.path, "storage", "host", "host.db")
  const sourceOf = (): string => {
    const database = new Database(db, { readonly: true })
    try {
      return (database.prepare("SELECT source FROM host_extensions WHERE extension_id = 'acme/hello-world'").get() as { source: string }).source
    } finally {
      database.close()
    }
  }
  const setSource = (value: string) => {
    const database = new Database(db)
    try {
      database.prepare("UPDATE host_extensions SET source = ? WHERE extension_id = 'acme/hello-world'").run(value)
    } finally {
      database.close()
    }
  }
  const good = sourceOf()
  // A record that does not decode: reading the installed extensions fails, so no generation can be built.
  setSource(JSON.stringify({ type: "nowhere" }))
  server = await startServer(root.path, { waitReady: false })
  const running = server
  await waitFor(async () => running.stderr().includes("could not build a runtime generation"), 10_000)
  expect((await request(`${running.url}/host/ready`)).status).toBe(503)
  setSource(good)
  await waitFor(async () => (await request(`${running.url}/host/ready`)).status === 200, 15_000)
  expect((await request(`${running.url}/api/client/host/extensions`, { as: "dave" })).status).toBe(200)
})
