import { appendFileSync, existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "vitest"
import { install, request, startServer, writePanelConfig } from "../http/helpers.js"
import { runHost, tempDir } from "../support/cli.js"
import { writeExtension } from "../support/extensions.js"
import { until } from "../support/wait.js"

it("the server tells listeners when servers appear in or vanish from config/panel.yaml", async () => {
  const root = tempDir("host-root-")
  const src = tempDir("host-src-")
  const out = join(src.path, "events.log")
  writePanelConfig(root.path)
  await install(root.path, writeExtension(src.path, {
    id: "acme/watcher",
    version: "1.0.0",
    files: {
      "src/WatcherExtension.ts": `import { HostExtension } from "@host/sdk/server"
import { appendFileSync } from "node:fs"
export class WatcherExtension extends HostExtension {
  getEventListeners() {
    return {
      ServerCreated: [(event: { server: { uuid: string } }) => { appendFileSync(${JSON.stringify(out)}, \`created \${event.server.uuid}\\n\`) }],
      ServerDeleted: [(event: { server: { uuid: string } }) => { appendFileSync(${JSON.stringify(out)}, \`deleted \${event.server.uuid}\\n\`) }]
    }
  }
}
`
    }
  }))
  const server = await startServer(root.path)
  try {
    // The poll compares mtime and size, so the appended line is seen whatever the clock's granularity.
    appendFileSync(join(root.path, "config", "panel.yaml"), "  - { uuid: srv-new, name: New server, owner: alice }\n")
    await until(() => existsSync(out) && readFileSync(out, "utf8").includes("created srv-new"), "ServerCreated")
    writePanelConfig(root.path)
    await until(() => readFileSync(out, "utf8").includes("deleted srv-new"), "ServerDeleted")
    expect(readFileSync(out, "utf8")).toBe("created srv-new\ndeleted srv-new\n")
  } finally {
    await server.stop()
  }
  // A change made while no server ran is noticed at the next start; the admin API adds and removes servers.
  appendFileSync(join(root.path, "config", "panel.yaml"), "  - { uuid: srv-late, name: Late server, owner: alice }\n")
  const restarted = await startServer(root.path)
  try {
    await until(() => readFileSync(out, "utf8").includes("created srv-late"), "ServerCreated at start")
    expect(readFileSync(out, "utf8")).toBe("created srv-new\ndeleted srv-new\ncreated srv-late\n")
    const api = `${restarted.url}/admin/host/api/servers`
    const created = await request(api, { as: "admin", method: "POST", body: { uuid: "srv-api", name: "From the API", owner: "alice" } })
    expect(created.status).toBe(201)
    expect(readFileSync(out, "utf8")).toContain("created srv-api")
    expect((await request(api, { as: "admin", method: "POST", body: { uuid: "srv-api", name: "Again", owner: "alice" } })).status).toBe(409)
    expect((await request(api, { as: "admin", method: "POST", body: { uuid: "srv-x", name: "X", owner: "nobody" } })).status).toBe(409)
    expect((await request(api, { as: "alice", method: "POST", body: { uuid: "srv-y", name: "Y", owner: "alice" } })).status).toBe(403)
    expect((await request(`${api}/srv-api`, { as: "admin", method: "DELETE" })).status).toBe(200)
    expect(readFileSync(out, "utf8")).toContain("deleted srv-api")
    expect((await request(`${api}/srv-api`, { as: "admin", method: "DELETE" })).status).toBe(404)
    expect(readFileSync(join(root.path, "config", "panel.yaml"), "utf8")).toContain("srv-late")
    // Concurrent edits of panel.yaml (here with a token issued by the CLI at the same time) all land.
    const burst = await Promise.all([
      ...Array.from({ length: 8 }, (_, index) =>
        request(api, { as: "admin", method: "POST", body: { uuid: `srv-burst-${index}`, name: `Burst ${index}`, owner: "alice" } })),
      runHost(["--root", root.path, "panel:token", "bob"])
    ])
    expect(burst.map((answer) => "status" in answer ? answer.status : answer.code)).toEqual([201, 201, 201, 201, 201, 201, 201, 201, 0])
    const panelFile = readFileSync(join(root.path, "config", "panel.yaml"), "utf8")
    for (let index = 0; index < 8; index++) expect(panelFile).toContain(`srv-burst-${index}`)
  } finally {
    await restarted.stop()
    root.cleanup()
    src.cleanup()
  }
})
