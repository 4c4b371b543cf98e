import Database from "better-sqlite3"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixture, runHost, tempDir } from "../support/cli.js"
import { writeExtension } from "../support/extensions.js"
import { install, request, type RunningServer, startServer, waitFor, writePanelConfig } from "../http/helpers.js"

// Quarantine (docs/http.md "Runtime generations, quarantine, live state"): an extension whose boot throws, whose route file throws, or whose route
// needs an undeclared permission is skipped with a reason — visible in `host list`/`status` — and
// everything else keeps answering. And the live swap: a CLI change shows in the server within 2 s.

const root = tempDir("host-quarantine-")
let server: RunningServer

beforeAll(async () => {
  writePanelConfig(root.path)
  await install(root.path, fixture("runtime", "probe"))
  await install(root.path, fixture("runtime", "boot-throws"))
  await install(root.path, fixture("runtime", "route-throws"))
  await install(root.path, fixture("runtime", "undeclared-permission"))
  await install(root.path, fixture("extensions", "hello-world"))
  // The default poll interval (1 s): a change made elsewhere must show within 2 s.
  server = await startServer(root.path, { pollMs: 1000 })
})

afterAll(async () => {
  await server?.stop()
  root.cleanup()
})

describe("quarantine", () => {
  it("skips the broken extensions and keeps serving the others", async () => {
    expect((await request(`${server.url}/api/client/host/acme/probe/open`, { as: "dave" })).status).toBe(200)
    const extensions = await request(`${server.url}/api/client/host/extensions`, { as: "dave" })
    expect((extensions.json as { data: Array<{ id: string }> }).data.map((e) => e.id)).toEqual(["acme/hello-world", "acme/probe"])
    const slots = await request(`${server.url}/api/client/host/slots`, { as: "dave" })
    expect(JSON.stringify(slots.json)).not.toContain("boot-throws")
    expect((await request(`${server.url}/api/client/host/acme/route-throws/ping`, { as: "dave" })).status).toBe(404)
    expect((await request(`${server.url}/api/client/host/acme/undeclared-permission/ok`, { as: "admin" })).status).toBe(404)
  })

  it("logs one clear line per quarantined extension", () => {
    const log = server.stderr()
    expect(log).toContain("quarantined acme/boot-throws: boot() failed: cannot reach the upstream service")
    expect(log).toMatch(/quarantined acme\/route-throws: route file src\/routes\/api-client\.ts failed to load: .*route file misconfigured: no endpoint/)
    expect(log).toContain(
      `quarantined acme/undeclared-permission: route GET /admin-only in src/routes/api-client.ts requires permission "undeclared.superpower", which backend.permissions does not declare`
    )
  })

  it("shows in host list and host status, and in the admin API", async () => {
    const list = await runHost(["--root", root.path, "list", "--json"])
    const views = JSON.parse(list.stdout) as Array<{ id: string; status: string; quarantine?: string }>
    const byId = Object.fromEntries(views.map((view) => [view.id, view]))
    expect(byId["acme/boot-throws"]).toMatchObject({ status: "quarantined", quarantine: expect.stringContaining("boot() failed") })
    expect(byId["acme/route-throws"]).toMatchObject({ status: "quarantined" })
    expect(byId["acme/undeclared-permission"]).toMatchObject({ status: "quarantined" })
    expect(byId["acme/probe"]).toMatchObject({ status: "enabled" })
    expect(byId["acme/probe"]!.quarantine).toBeUndefined()

    const table = await runHost(["--root", root.path, "list"])
    expect(table.stdout).toMatch(/^acme\/boot-throws +Boot Throws +\S+ +quarantined +\S+$/m)
    expect(table.stdout).toContain("acme/boot-throws is quarantined: boot() failed: cannot reach the upstream service")
    const status = await runHost(["--root", root.path, "status"])
    expect(status.stdout).toContain("3 quarantined")

    const admin = await request(`${server.url}/admin/host/api/extensions`, { as: "admin" })
    const rows = (admin.json as { data: Array<{ id: string; status: string; quarantine: string | null }> }).data
    expect(rows.find((row) => row.id === "acme/route-throws")).toMatchObject({ status: "quarantined", quarantine: expect.any(String) })
  })

  it("a disabled quarantined extension is just disabled", async () => {
    expect((await runHost(["--root", root.path, "disable", "acme/boot-throws"])).code).toBe(0)
    const list = await runHost(["--root", root.path, "list", "--json"])
    const view = (JSON.parse(list.stdout) as Array<{ id: string; status: string }>).find((v) => v.id === "acme/boot-throws")
    expect(view?.status).toBe("disabled")
  })
})

describe("quarantine without a server", () => {
  it("a CLI that boots the extensions (commands, listeners, health) logs and records what it quarantines", async () => {
    const other = tempDir("host-quarantine-cli-")
    try {
      writePanelConfig(other.path)
      await install(other.path, fixture("runtime", "boot-throws"))
      const commands = await runHost(["--root", other.path, "commands"])
      expect(commands.stderr).toContain("warning: quarantined acme/boot-throws: boot() failed: cannot reach the upstream service")
      const list = JSON.parse((await runHost(["--root", other.path, "list", "--json"])).stdout) as Array<{ id: string; status: string }>
      expect(list.find((view) => view.id === "acme/boot-throws")).toMatchObject({ status: "quarantined" })
    } finally {
      other.cleanup()
    }
  })

  it("a row whose stored manifest no longer decodes is quarantined, listed as corrupt, and cannot be enabled", async () => {
    const other = tempDir("host-quarantine-corrupt-")
    try {
      writePanelConfig(other.path)
      await install(other.path, fixture("extensions", "hello-world"))
      // What a hand edit or an older framework could leave behind: valid JSON, not a valid manifest.
      const database = new Database(join(other.path, "storage", "host", "host.db"))
      const row = database.prepare("SELECT manifest FROM host_extensions WHERE extension_id = 'acme/hello-world'").get() as { manifest: string }
      database.prepare("UPDATE host_extensions SET manifest = ? WHERE extension_id = 'acme/hello-world'")
        .run(JSON.stringify({ ...JSON.parse(row.manifest), version: "one" }))
      database.close()

      const reason = /its stored manifest does not decode \(version: .*\); reinstall it/
      const commands = await runHost(["--root", other.path, "commands"])
      expect(commands.stderr).toMatch(new RegExp(`quarantined acme/hello-world: ${reason.source}`))
      const list = JSON.parse((await runHost(["--root", other.path, "list", "--json"])).stdout) as Array<{ id: string; status: string; quarantine?: string }>
      expect(list).toMatchObject([{ id: "acme/hello-world", status: "corrupt", quarantine: expect.stringMatching(reason) }])
      const table = await runHost(["--root", other.path, "list"])
      expect(table.stdout).toMatch(/^acme\/hello-world +.+ +corrupt +\S+$/m)
      expect(table.stdout).toMatch(new RegExp(`acme/hello-world is corrupt: ${reason.source}`))
      const status = await runHost(["--root", other.path, "status"])
      expect(status.stdout).toContain("1 installed, 1 enabled, 0 disabled, 1 corrupt")
      expect(status.stdout).not.toContain("quarantined")

      // Disabled it is still corrupt (nothing can load it), and enabling it is refused with the reason.
      expect((await runHost(["--root", other.path, "disable", "acme/hello-world"])).code).toBe(0)
      const disabled = JSON.parse((await runHost(["--root", other.path, "list", "--json"])).stdout) as Array<{ status: string }>
      expect(disabled[0]?.status).toBe("corrupt")
      const enable = await runHost(["--root", other.path, "enable", "acme/hello-world"])
      expect(enable.code).not.toBe(0)
      expect(enable.stderr).toMatch(reason)
    } finally {
      other.cleanup()
    }
  })

  it("a dependency forced out of its range quarantines the extension that needs it", async () => {
    const other = tempDir("host-quarantine-range-")
    const src = tempDir("host-quarantine-src-")
    try {
      writePanelConfig(other.path)
      await install(other.path, fixture("extensions", "hello-world"))
      await install(other.path, fixture("extensions", "full"))
      const next = writeExtension(src.path, { id: "acme/hello-world", version: "2.0.0" })
      expect((await runHost(["--root", other.path, "update", "acme/hello-world", "--source", next, "--force"])).code).toBe(0)
      const commands = await runHost(["--root", other.path, "commands"])
      expect(commands.stderr).toContain("quarantined acme/full: dependency acme/hello-world is at 2.0.0, which does not satisfy ^1.0")
    } finally {
      other.cleanup()
      src.cleanup()
    }
  })
})

describe("live state", () => {
  it("a CLI disable / enable shows in the running server within 2 s", async () => {
    const before = (await request(`${server.url}/host/ready`)).json as { generation: number }
    expect((await request(`${server.url}/api/client/host/acme/probe/open`, { as: "dave" })).status).toBe(200)
    expect((await runHost(["--root", root.path, "disable", "acme/probe"])).code).toBe(0)
    const took = await waitFor(async () => (await request(`${server.url}/api/client/host/acme/probe/open`, { as: "dave" })).status === 404, 2_000)
    expect(took).toBeLessThan(2_000)
    const after = (await request(`${server.url}/host/ready`)).json as { generation: number }
    expect(after.generation).toBeGreaterThan(before.generation)
    const extensions = await request(`${server.url}/api/client/host/extensions`, { as: "dave" })
    expect((extensions.json as { data: Array<{ id: string }> }).data.map((e) => e.id)).toEqual(["acme/hello-world"])

    expect((await runHost(["--root", root.path, "enable", "acme/probe"])).code).toBe(0)
    await waitFor(async () => (await request(`${server.url}/api/client/host/acme/probe/open`, { as: "dave" })).status === 200, 2_000)
  })

  it("requests in flight during a swap are answered", async () => {
    const generation = async () => ((await request(`${server.url}/host/ready`)).json as { generation: number }).generation
    const before = await generation()
    const toggle = runHost(["--root", root.path, "disable", "acme/hello-world"])
    // Four clients ask back to back until the server runs a newer generation, so requests are in
    // flight before, across and after the swap (not merely spread over a fixed time).
    let swapped = false
    const client = async () => {
      const statuses: Array<number> = []
      while (!swapped) statuses.push((await request(`${server.url}/api/client/host/slots`, { as: "dave" })).status)
      return statuses
    }
    const clients = Promise.all([client(), client(), client(), client()])
    await waitFor(async () => (await generation()) > before, 5_000).finally(() => (swapped = true))
    const statuses = (await clients).flat()
    expect((await toggle).code).toBe(0)
    expect(statuses.length).toBeGreaterThanOrEqual(4)
    expect(statuses.filter((status) => status !== 200)).toEqual([])
  })
})
