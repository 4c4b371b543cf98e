import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tempDir } from "../support/cli.js"
import { writeExtension } from "../support/extensions.js"
import { writePanelRoot } from "../support/panel-root.js"
import { machines, type PanelStandIn, people, startPanelStandIn } from "../support/pterodactyl-api.js"
import { install, request, type RunningServer, startServer } from "./helpers.js"

// Issue 37 under Pterodactyl (a stand-in of its client API; docs/panels.md "Identity", docs/http.md
// "Security"): unsafe requests are authenticated against the panel every time, so a session the panel
// ended cannot change anything; server ids that name no server never reach the panel.

const alicesServer = machines[0]!
const session = (name: string) => ({ cookie: `pterodactyl_session=${name}; XSRF-TOKEN=t0k`, "x-xsrf-token": "t0k" })

let root: ReturnType<typeof tempDir>
let src: ReturnType<typeof tempDir>
let standIn: PanelStandIn
let server: RunningServer

beforeAll(async () => {
  root = tempDir("host-pterodactyl-")
  src = tempDir("host-src-")
  const panelRoot = writePanelRoot(join(root.path, "panel"), { version: "1.11.8" })
  const extension = writeExtension(src.path, {
    id: "acme/acts",
    version: "1.0.0",
    files: {
      "src/routes/api-client.ts": `import { defineRoutes } from "@host/sdk/server"
export default defineRoutes((r) => {
  r.get("/who", ({ user }) => ({ user: user?.username ?? null }))
  r.post("/act", ({ user }) => ({ acted: user?.username ?? null }))
  r.put("/act", ({ user }) => ({ acted: user?.username ?? null }))
  r.patch("/act", ({ user }) => ({ acted: user?.username ?? null }))
  r.delete("/act", ({ user }) => ({ acted: user?.username ?? null }))
  r.get("/servers/{server}/look", ({ server }) => ({ uuid: server?.uuid ?? null }))
  r.post("/servers/{server}/act", ({ server }) => ({ uuid: server?.uuid ?? null }))
})
`
    }
  })
  await install(root.path, extension)
  standIn = await startPanelStandIn({
    users: [...people.map((person) => ({ ...person })), { ...people[4]!, id: 6, uuid: "u-frank", username: "frank", sessions: ["sess-frank"], keys: [] }],
    servers: machines
  })
  server = await startServer(root.path, { env: { HOST_PANEL_DRIVER: "pterodactyl", HOST_PANEL_URL: standIn.url, HOST_PANEL_ROOT: panelRoot } })
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await standIn?.close()
  root?.cleanup()
  src?.cleanup()
})

const accountCalls = (name: string) =>
  standIn.received.filter((entry) => entry.path === "/api/client/account" && String(entry.headers.cookie ?? "").includes(`=${name}`)).length

/** Ends a session at the panel, as signing out of Pterodactyl does. */
const endAtPanel = (name: string) => {
  const index = standIn.users.findIndex((user) => user.sessions.includes(name))
  standIn.users[index] = { ...standIn.users[index]!, sessions: standIn.users[index]!.sessions.filter((entry) => entry !== name) }
}

const api = (path: string) => `${server.url}/api/client/host/acme/acts${path}`

describe("unsafe requests under a real panel", () => {
  it("are authenticated against the panel every time: a session the panel ended changes nothing, at once", async () => {
    expect((await request(api("/who"), { headers: session("sess-frank") })).json).toEqual({ user: "frank" })
    const before = accountCalls("sess-frank")
    // Reads come from the identity cache.
    expect((await request(api("/who"), { headers: session("sess-frank") })).status).toBe(200)
    expect(accountCalls("sess-frank")).toBe(before)
    // Each write asks the panel who it is — the account only: the session passed the 2FA probe already.
    const probes = () => standIn.received.filter((entry) => entry.path === "/api/client/permissions" && String(entry.headers.cookie ?? "").includes("=sess-frank")).length
    const probesBefore = probes()
    for (let i = 1; i <= 3; i++) {
      expect((await request(api("/act"), { method: "POST", headers: session("sess-frank"), body: {} })).json).toEqual({ acted: "frank" })
      expect(accountCalls("sess-frank")).toBe(before + i)
    }
    expect(probes()).toBe(probesBefore)
    endAtPanel("sess-frank")
    const write = await request(api("/act"), { method: "POST", headers: session("sess-frank"), body: {} })
    expect(write.status).toBe(401)
    for (const method of ["PUT", "PATCH", "DELETE"]) {
      expect((await request(api("/act"), { method, headers: session("sess-frank"), body: {} })).status, method).toBe(401)
    }
    // The write's answer replaced the cached one: reads see the sign-out now too.
    expect((await request(api("/who"), { headers: session("sess-frank") })).status).toBe(401)
  })

  it("a write on one server asks the panel for the caller's permissions on it each time", async () => {
    const scopeCalls = () => standIn.received.filter((entry) => entry.path === `/api/client/servers/${alicesServer.identifier}`).length
    expect((await request(api(`/servers/${alicesServer.identifier}/look`), { headers: session("sess-alice") })).status).toBe(200)
    const before = scopeCalls()
    expect((await request(api(`/servers/${alicesServer.identifier}/look`), { headers: session("sess-alice") })).status).toBe(200)
    expect(scopeCalls()).toBe(before)
    expect((await request(api(`/servers/${alicesServer.identifier}/act`), { method: "POST", headers: session("sess-alice"), body: {} })).status).toBe(200)
    expect((await request(api(`/servers/${alicesServer.identifier}/act`), { method: "POST", headers: session("sess-alice"), body: {} })).status).toBe(200)
    expect(scopeCalls()).toBe(before + 2)
  })

  it("what a write costs against a panel that answers in 50 ms (measured, printed; docs/panels.md)", async () => {
    const time = async (method: string) => {
      const started = performance.now()
      const answer = await request(api(method === "GET" ? "/who" : "/act"), { method, headers: session("sess-dave"), ...(method === "GET" ? {} : { body: {} }) })
      expect(answer.status).toBe(200)
      return performance.now() - started
    }
    await time("GET")
    standIn.slowMs = 50
    standIn.mode = "slow"
    try {
      const reads: Array<number> = []
      const writes: Array<number> = []
      for (let i = 0; i < 20; i++) reads.push(await time("GET"))
      for (let i = 0; i < 20; i++) writes.push(await time("POST"))
      const p50 = (values: Array<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!.toFixed(1)
      console.log(`panel answering in 50 ms: read p50 ${p50(reads)} ms, write p50 ${p50(writes)} ms (20 each)`)
    } finally {
      standIn.mode = "ok"
    }
  })
})

describe("server ids that name no server", () => {
  it("are 404 before any request to the panel: empty, '.', '..', '/', backslash, '%' after decoding", async () => {
    const headers = session("sess-admin")
    expect((await request(api(`/servers/${alicesServer.identifier}/look`), { headers })).status).toBe(200)
    const seen = standIn.received.length
    const ids = ["%2e", "%2E%2E", "..%2F..", "a%2Fb", "a%5Cb", "%255c", "%2525", "%2e%2e%2f"]
    for (const id of ids) {
      for (const path of [`/api/client/host/acme/acts/servers/${id}/look`, `/api/client/host/servers/${id}/access`]) {
        const answer = await fetch(`${server.url}${path}`, { headers })
        expect(answer.status, path).toBe(404)
      }
    }
    // (`..` decoded is a dot segment of the path itself, which the router resolves: `/servers/../act` is `/act`.)
    for (const id of ["%2e", "a%2Fb", "a%5Cb", "%2525"]) {
      const write = await fetch(`${server.url}/api/client/host/acme/acts/servers/${id}/act`, { method: "POST", headers })
      expect(write.status, id).toBe(404)
    }
    // A server-area page's context: /host/boot.js inlines the bootstrap of the page its Referer names.
    for (const id of ["a%2Fb", "a%5Cb", "%2525", "%252e%252e"]) {
      const boot = await fetch(`${server.url}/host/boot.js`, { headers: { ...headers, referer: `${server.url}/server/${id}/files` } })
      expect(boot.status, id).toBe(200)
      expect(await boot.text(), id).not.toContain(alicesServer.uuid)
    }
    expect(standIn.received.slice(seen).filter((entry) => entry.path !== "/api/client/account" && entry.path !== "/api/client/permissions"))
      .toEqual([])
  })
})
