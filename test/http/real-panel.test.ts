import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixture, runHost, tempDir } from "../support/cli.js"
import { writeExtension } from "../support/extensions.js"
import { until } from "../support/wait.js"
import { writePanelRoot } from "../support/panel-root.js"
import { startPelicanStandIn } from "../support/pelican-api.js"
import { machines, type PanelStandIn, people, startPanelStandIn } from "../support/pterodactyl-api.js"
import { install, request, type RunningServer, startServer, waitFor } from "./helpers.js"
import { tooDeepJson } from "../../src/domain/JsonDepth.js"

// `host serve` with `panel.driver: pterodactyl` (and pelican) against stand-ins of the panels' client API
// (docs/http.md "Authentication under a real panel"): sign-in by cookie and Bearer, what is forwarded,
// the identity cache and its single flight, 2FA, server scope, 503 when the panel is down, CSRF, grants.

const alicesServer = machines[0]!
const cookieOf = (session: string, extra = "") => `pterodactyl_session=${session}${extra}`

const serve = async (kind: "pterodactyl" | "pelican") => {
  const root = tempDir(`host-${kind}-`)
  const panelRoot = writePanelRoot(join(root.path, "panel"), { version: kind === "pterodactyl" ? "1.11.8" : "1.0.0" })
  await install(root.path, fixture("runtime", "probe"))
  const standIn = kind === "pterodactyl"
    ? await startPanelStandIn({ users: people, servers: machines })
    : await startPelicanStandIn({ users: people, servers: machines })
  const env = { HOST_PANEL_DRIVER: kind, HOST_PANEL_URL: standIn.url, HOST_PANEL_ROOT: panelRoot }
  const server = await startServer(root.path, { env })
  return { root, standIn, server, env }
}

describe("host serve under Pterodactyl", () => {
  let root: ReturnType<typeof tempDir>
  let standIn: PanelStandIn
  let server: RunningServer
  let env: Record<string, string>

  beforeAll(async () => {
    ;({ env, root, server, standIn } = await serve("pterodactyl"))
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await standIn?.close()
    root?.cleanup()
  })

  const accountCalls = (session: string) =>
    standIn.received.filter((entry) => entry.path === "/api/client/account" && String(entry.headers.cookie ?? "").includes(`=${session}`)).length

  it("signs in by the panel's session cookie, forwarding only it and remember_web_*", async () => {
    const answer = await request(`${server.url}/api/client/host/acme/probe/secret`, {
      headers: { cookie: cookieOf("sess-alice", "; XSRF-TOKEN=abc; remember_web_1a=r1; host_session=h; laravel_token=t") }
    })
    expect(answer.status).toBe(200)
    expect(answer.json).toEqual({ secret: true, user: "alice" })
    const seen = standIn.received.filter((entry) => entry.path === "/api/client/account").at(-1)!
    expect(seen.headers.cookie).toBe("pterodactyl_session=sess-alice; remember_web_1a=r1")
    expect(seen.headers.accept).toBe("application/json")
    expect(seen.headers["x-requested-with"]).toBe("XMLHttpRequest")
    // The panel's rotated cookies are not passed on to the browser.
    expect(answer.headers.get("set-cookie")).toBeNull()
  })

  it("signs in by a Bearer client key; a key the panel refuses is 401", async () => {
    expect((await request(`${server.url}/admin/host/acme/probe/secret`, { headers: { authorization: "Bearer ptlc_admin" } })).status).toBe(200)
    expect((await request(`${server.url}/admin/host/acme/probe/secret`, { headers: { authorization: "Bearer ptlc_alice" } })).status).toBe(403)
    expect((await request(`${server.url}/api/client/host/acme/probe/open`, { headers: { authorization: "Bearer ptlc_nobody" } })).status).toBe(401)
    expect((await request(`${server.url}/api/client/host/acme/probe/open`)).status).toBe(401)
  })

  it("caches identities: repeated requests ask the panel once; the counters reach storage/host/replica/panel.json", async () => {
    for (let i = 0; i < 5; i++) {
      expect((await request(`${server.url}/api/client/host/acme/probe/open`, { headers: { cookie: cookieOf("sess-dave") } })).status).toBe(200)
    }
    expect(accountCalls("sess-dave")).toBe(1)
    const file = join(root.path, "storage", "host", "replica", "panel.json")
    const read = () => {
      try {
        return JSON.parse(readFileSync(file, "utf8")) as { driver: string; identity_cache: { hits: number; misses: number; panel_requests: number } }
      } catch {
        return undefined
      }
    }
    await waitFor(async () => (read()?.identity_cache.hits ?? 0) >= 4, 10_000)
    expect(read()).toMatchObject({ driver: "pterodactyl" })
    expect(read()!.identity_cache.misses).toBeGreaterThanOrEqual(1)
    expect(read()!.identity_cache.panel_requests).toBeGreaterThanOrEqual(2)
  })

  it("200 concurrent first requests with one new session make exactly one panel call", async () => {
    standIn.mode = "slow"
    standIn.slowMs = 300
    const answers = await Promise.all(Array.from({ length: 200 }, () =>
      request(`${server.url}/api/client/host/acme/probe/open`, { headers: { cookie: cookieOf("sess-dave-2") } })))
    standIn.mode = "ok"
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200))
    expect(accountCalls("sess-dave-2")).toBe(1)
  })

  it("a user the panel's 2FA policy stops is not signed in", async () => {
    expect((await request(`${server.url}/api/client/host/acme/probe/open`, { headers: { cookie: cookieOf("sess-erin") } })).status).toBe(401)
  })

  it("server scope: the panel's 404 is Host's 404; short id or uuid; owner yes, subuser only by a grant", async () => {
    const info = (id: string, session: string) =>
      request(`${server.url}/api/client/host/acme/probe/servers/${id}/info`, { headers: { cookie: cookieOf(session) } })
    expect((await info("bbbbbbbb", "sess-bob")).status).toBe(404)
    expect((await info("zzzzzzzz", "sess-alice")).status).toBe(404)
    const owner = await info("aaaaaaaa", "sess-alice")
    expect(owner.status).toBe(200)
    expect(owner.json).toMatchObject({ server: { uuid: alicesServer.uuid, name: alicesServer.name, permissions: ["*"] } })
    expect((await info(alicesServer.uuid, "sess-alice")).status).toBe(200)
    expect((await info("aaaaaaaa", "sess-bob")).status).toBe(403)
    expect((await info("bbbbbbbb", "sess-admin")).status).toBe(200)

    // A grant by the CLI, then taken back over HTTP by the owner.
    const granted = await runHost(["--root", root.path, "permissions:grant", alicesServer.uuid, "bob", "probe.view"], { env })
    expect(granted.code, granted.stderr).toBe(0)
    const listed = await runHost(["--root", root.path, "permissions:list", alicesServer.uuid, "--json"], { env })
    expect(JSON.parse(listed.stdout)).toEqual({ server: alicesServer.uuid, grants: [{ user: "bob", permissions: ["probe.view"] }] })
    expect((await info("aaaaaaaa", "sess-bob")).status).toBe(200)
    // Bad arguments name what was wrong and write nothing.
    const unknownServer = await runHost(["--root", root.path, "permissions:grant", "aaaaaaaa", "bob", "probe.manage"], { env })
    expect(unknownServer.code).not.toBe(0)
    expect(unknownServer.stderr).toContain("<server>")
    const badPermission = await runHost(["--root", root.path, "permissions:grant", alicesServer.uuid, "bob", "Probe"], { env })
    expect(badPermission.code).not.toBe(0)
    expect(badPermission.stderr).toContain("<permission>")
    const text = await runHost(["--root", root.path, "permissions:list", alicesServer.uuid], { env })
    expect(text.stdout).toMatch(/USER\s+PERMISSIONS\nbob\s+probe\.view\n/)
    const revoked = await request(`${server.url}/api/client/host/servers/aaaaaaaa/access`, {
      method: "DELETE",
      headers: { authorization: "Bearer ptlc_alice" },
      body: { user: "bob", permission: "probe.view" }
    })
    expect(revoked.status, revoked.text).toBe(200)
    expect((await info("aaaaaaaa", "sess-bob")).status).toBe(403)
  })

  it("extension access over HTTP: the owner lists the panel's subusers and grants; others 403/404", async () => {
    const url = `${server.url}/api/client/host/servers/aaaaaaaa/access`
    const put = await request(url, { method: "PUT", headers: { authorization: "Bearer ptlc_alice" }, body: { user: "bob", permission: "probe.manage" } })
    expect(put.status, put.text).toBe(200)
    const listing = await request(url, { headers: { authorization: "Bearer ptlc_alice" } })
    expect(listing.status).toBe(200)
    expect(listing.json).toMatchObject({
      data: {
        server: { uuid: alicesServer.uuid, identifier: "aaaaaaaa" },
        grants_kept_by: "host",
        permissions: [{ extension: "acme/probe", permission: "probe.view" }, { extension: "acme/probe", permission: "probe.manage" }],
        subusers: [{ username: "bob", uuid: "u-bob", panel_permissions: ["control.*", "host_acme_probe.probe-view"], grants: ["probe.manage"] }]
      }
    })
    expect((await request(url, { headers: { authorization: "Bearer ptlc_admin" } })).status).toBe(200)
    expect((await request(url, { headers: { authorization: "Bearer ptlc_bob" } })).status).toBe(403)
    expect((await request(url, { headers: { authorization: "Bearer ptlc_dave" } })).status).toBe(404)
    const stranger = await request(url, { method: "PUT", headers: { authorization: "Bearer ptlc_alice" }, body: { user: "dave", permission: "probe.view" } })
    expect(stranger.status).toBe(404)
    const unknown = await request(url, { method: "PUT", headers: { authorization: "Bearer ptlc_alice" }, body: { user: "bob", permission: "nope.none" } })
    expect(unknown.status).toBe(400)
    // A body nested past the JSON depth limit is refused with the limit named, like every other JSON body.
    for (const method of ["PUT", "DELETE"]) {
      const deep = await request(url, { method, headers: { authorization: "Bearer ptlc_alice" }, body: `${"[".repeat(1000)}${"]".repeat(1000)}` })
      expect(deep.status, deep.text).toBe(400)
      expect(deep.json).toEqual({ errors: [{ code: "BadRequest", status: "400", detail: expect.stringContaining(tooDeepJson) }] })
    }
  })

  it("CSRF under the panel: X-XSRF-TOKEN equal to the XSRF-TOKEN cookie, an Origin of the panel; Bearer needs none", async () => {
    const echo = `${server.url}/api/client/host/acme/probe/echo`
    const session = cookieOf("sess-alice", "; XSRF-TOKEN=abc%3D%3D")
    expect((await request(echo, { method: "POST", headers: { cookie: session }, body: { a: 1 } })).status).toBe(403)
    expect((await request(echo, { method: "POST", headers: { cookie: session, "x-xsrf-token": "wrong" }, body: { a: 1 } })).status).toBe(403)
    expect((await request(echo, { method: "POST", headers: { cookie: session, "x-xsrf-token": "abc==" }, body: { a: 1 } })).status).toBe(200)
    expect((await request(echo, { method: "POST", headers: { cookie: session, "x-xsrf-token": "abc==", origin: "http://evil.test" }, body: { a: 1 } })).status).toBe(403)
    expect((await request(echo, { method: "POST", headers: { cookie: session, "x-xsrf-token": "abc==", origin: new URL(server.url).origin }, body: { a: 1 } })).status).toBe(200)
    expect((await request(echo, { method: "POST", headers: { authorization: "Bearer ptlc_alice" }, body: { a: 1 } })).status).toBe(200)
  })

  it("a panel that is down gives 503 (saying nothing internal), never 401", async () => {
    standIn.mode = "down"
    const down = await request(`${server.url}/api/client/host/acme/probe/open`, { headers: { cookie: cookieOf("sess-bob", "; remember_web_x=new") } })
    standIn.mode = "error"
    const failing = await request(`${server.url}/api/client/host/acme/probe/open`, { headers: { cookie: cookieOf("sess-bob", "; remember_web_y=new") } })
    standIn.mode = "ok"
    for (const answer of [down, failing]) {
      expect(answer.status).toBe(503)
      expect(answer.json).toEqual({ errors: [{ code: "PanelUnavailable", status: "503", detail: "the panel is unavailable; try again shortly" }] })
    }
    expect((await request(`${server.url}/api/client/host/acme/probe/open`, { headers: { cookie: cookieOf("sess-bob", "; remember_web_x=new") } })).status).toBe(200)
  })
})

describe("host serve under Pelican", () => {
  let root: ReturnType<typeof tempDir>
  let standIn: PanelStandIn
  let server: RunningServer

  beforeAll(async () => {
    ;({ root, server, standIn } = await serve("pelican"))
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await standIn?.close()
    root?.cleanup()
  })

  it("an administrator is the panel's root_admin; the session cookie is pelican_session", async () => {
    const admin = await request(`${server.url}/admin/host/acme/probe/secret`, { headers: { cookie: "pelican_session=sess-admin" } })
    expect(admin.status).toBe(200)
    expect((await request(`${server.url}/admin/host/acme/probe/secret`, { headers: { cookie: "pelican_session=sess-alice" } })).status).toBe(403)
    expect((await request(`${server.url}/admin/host/acme/probe/secret`, { headers: { cookie: "pterodactyl_session=sess-admin" } })).status).toBe(401)
  })

  it("subusers hold extension permissions through the panel's own subuser permissions; Host's grant writes are refused", async () => {
    const info = (session: string) =>
      request(`${server.url}/api/client/host/acme/probe/servers/aaaaaaaa/info`, { headers: { cookie: `pelican_session=${session}` } })
    expect((await info("sess-bob")).status).toBe(200)
    const put = await request(`${server.url}/api/client/host/servers/aaaaaaaa/access`, {
      method: "PUT",
      headers: { authorization: "Bearer ptlc_alice" },
      body: { user: "bob", permission: "probe.manage" }
    })
    expect(put.status).toBe(409)
  })
})

describe("host serve with an application key", () => {
  it("polls the application API's server list and tells listeners of created and deleted servers", async () => {
    const root = tempDir("host-appkey-")
    const src = tempDir("host-src-")
    const out = join(src.path, "events.log")
    const panelRoot = writePanelRoot(join(root.path, "panel"))
    mkdirSync(join(root.path, "config"), { recursive: true })
    writeFileSync(join(root.path, "config", "host.yaml"), "panel:\n  cache_seconds: 1\n")
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
    const standIn = await startPanelStandIn({ users: people, servers: machines })
    const server = await startServer(root.path, {
      env: { HOST_PANEL_DRIVER: "pterodactyl", HOST_PANEL_URL: standIn.url, HOST_PANEL_ROOT: panelRoot, HOST_PANEL_APPLICATION_KEY: standIn.applicationKey }
    })
    try {
      standIn.servers.push({ uuid: "cccccccc-3333-4000-8000-000000000003", identifier: "cccccccc", name: "New", owner: 2, subusers: [] })
      await until(() => existsSync(out) && readFileSync(out, "utf8").includes("created cccccccc-3333"), "ServerCreated")
      standIn.servers.splice(0, 1)
      await until(() => readFileSync(out, "utf8").includes(`deleted ${alicesServer.uuid}`), "ServerDeleted")
      expect(readFileSync(out, "utf8")).toBe(`created cccccccc-3333-4000-8000-000000000003\ndeleted ${alicesServer.uuid}\n`)
      expect(standIn.received.some((entry) => entry.path.startsWith("/api/application/servers") && entry.headers.authorization === `Bearer ${standIn.applicationKey}`)).toBe(true)
    } finally {
      await server.stop()
      await standIn.close()
      root.cleanup()
      src.cleanup()
    }
  }, 60_000)
})

it("an unreadable panel.root stops host serve with an error naming panel.root", async () => {
  const root = tempDir("host-badroot-")
  try {
    const run = await runHost(["--root", root.path, "serve", "--port", "0"], {
      env: { HOST_PANEL_DRIVER: "pterodactyl", HOST_PANEL_URL: "http://127.0.0.1:9", HOST_PANEL_ROOT: join(root.path, "missing") }
    })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("panel.root")
    expect(run.stderr).toContain(join(root.path, "missing", "config", "app.php"))
  } finally {
    root.cleanup()
  }
})
