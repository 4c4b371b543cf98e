import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { slotIds } from "../../src/domain/Slots.js"
import { fixture, runHost, tempDir } from "../support/cli.js"
import { install, request, type RunningServer, startServer, waitFor, writePanelConfig } from "../http/helpers.js"

// The reference panel over plain HTTP: the page shell (bootstrap, load order, redirects, 404s) and the
// panel JSON, against a real `host serve`.

const root = tempDir("host-panel-http-")
let server: RunningServer

beforeAll(async () => {
  writePanelConfig(root.path)
  await install(root.path, fixture("extensions", "hello-world"))
  await install(root.path, fixture("extensions", "full"))
  await install(root.path, fixture("runtime", "boot-throws"))
  server = await startServer(root.path)
})

afterAll(async () => {
  await server?.stop()
  root.cleanup()
})

const bootstrapOf = (html: string): Record<string, unknown> => {
  const match = /<script nonce="[^"]+">window\.__HOST__ = (.*);<\/script>/.exec(html)
  if (match === null) throw new Error(`no bootstrap in ${html}`)
  return JSON.parse(match[1]!) as Record<string, unknown>
}

const scriptsOf = (html: string) => [...html.matchAll(/<script defer src="([^"]+)"><\/script>/g)].map((match) => match[1]!)

describe("panel JSON", () => {
  it("answers 401 without a user", async () => {
    for (const path of ["/api/client/account", "/api/client/servers", "/api/client/servers/srv-alice"]) {
      const answer = await request(`${server.url}${path}`)
      expect(answer.status, path).toBe(401)
      expect(answer.json).toEqual({ errors: [{ code: "Unauthorized", status: "401", detail: expect.any(String) }] })
    }
  })

  it("GET /api/client/account is the signed-in user", async () => {
    const answer = await request(`${server.url}/api/client/account`, { as: "bob" })
    expect(answer.status).toBe(200)
    expect(answer.json).toEqual({ data: { id: 3, username: "bob", email: "bob@example.test", admin: false } })
  })

  it("GET /api/client/servers lists only the user's servers, with the user's permissions on each", async () => {
    const bob = await request(`${server.url}/api/client/servers`, { as: "bob" })
    expect(bob.json).toEqual({
      data: [{
        uuid: "srv-alice",
        name: "Alice's server",
        owner: { id: 2, username: "alice" },
        isOwner: false,
        role: "subuser",
        permissions: ["probe.view"]
      }]
    })
    const alice = await request(`${server.url}/api/client/servers`, { as: "alice" })
    expect((alice.json as { data: ReadonlyArray<{ uuid: string; role: string; isOwner: boolean }> }).data.map((entry) => [entry.uuid, entry.role, entry.isOwner]))
      .toEqual([["srv-alice", "owner", true]])
    const dave = await request(`${server.url}/api/client/servers`, { as: "dave" })
    expect(dave.json).toEqual({ data: [] })
    const admin = await request(`${server.url}/api/client/servers`, { as: "admin" })
    expect((admin.json as { data: ReadonlyArray<{ uuid: string; role: string }> }).data.map((entry) => [entry.uuid, entry.role]))
      .toEqual([["srv-alice", "admin"], ["srv-other", "admin"]])
  })

  it("GET /api/client/servers/{uuid} is 404 for a server the user may not see, and lists subusers only to who may manage them", async () => {
    const hidden = await request(`${server.url}/api/client/servers/srv-other`, { as: "bob" })
    expect(hidden.status).toBe(404)
    expect(hidden.json).toEqual({ errors: [{ code: "NotFound", status: "404", detail: "no server srv-other" }] })
    const unknown = await request(`${server.url}/api/client/servers/nope`, { as: "admin" })
    expect(unknown.status).toBe(404)
    const owner = await request(`${server.url}/api/client/servers/srv-alice`, { as: "alice" })
    expect(owner.status).toBe(200)
    expect((owner.json as { data: { subusers: unknown } }).data.subusers).toEqual([
      { id: 3, username: "bob", email: "bob@example.test", permissions: ["probe.view"] },
      { id: 4, username: "carol", email: "carol@example.test", permissions: [] }
    ])
    const subuser = await request(`${server.url}/api/client/servers/srv-alice`, { as: "bob" })
    expect(subuser.json).toEqual({
      data: { uuid: "srv-alice", name: "Alice's server", owner: { id: 2, username: "alice" }, isOwner: false, role: "subuser", permissions: ["probe.view"] }
    })
  })
})

describe("page shell", () => {
  it("redirects a signed-out panel path to the sign-in form with the path to come back to", async () => {
    for (const path of ["/", "/server/srv-alice/files?x=1", "/account/api", "/ext/acme/full/stats", "/nope"]) {
      const answer = await request(`${server.url}${path}`, { headers: { accept: "text/html" } })
      expect(answer.status, path).toBe(303)
      expect(answer.headers.get("location")).toBe(`/auth/login?redirect=${encodeURIComponent(path)}`)
    }
  })

  it("renders the bootstrap and loads styles, React, the bridge, the bundles in boot order and the app, in that order", async () => {
    const answer = await request(`${server.url}/server/srv-alice/files`, { as: "alice" })
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toContain("text/html")
    expect(answer.headers.get("cache-control")).toBe("no-store")
    const bootstrap = bootstrapOf(answer.text)
    expect(bootstrap).toMatchObject({
      csrfToken: null,
      user: { id: 2, username: "alice", email: "alice@example.test", admin: false },
      server: { uuid: "srv-alice", name: "Alice's server", permissions: ["*"], isOwner: true },
      slots: slotIds
    })
    // acme/full depends on acme/hello-world: boot order, not alphabetical. boot-throws is quarantined.
    const extensions = bootstrap.extensions as ReadonlyArray<{ id: string; bundle: string | null; styles: string | null; cssIsolation: unknown }>
    expect(extensions.map((extension) => extension.id)).toEqual(["acme/hello-world", "acme/full"])
    const full = extensions[1]!
    expect(full.bundle).toMatch(/^\/host\/ext\/acme\/full\/resources\/frontend\/dist\/extension\.js\?v=/)
    expect(full.cssIsolation).toEqual({ mode: "root-class", class: expect.any(String) })
    const scripts = scriptsOf(answer.text)
    expect(scripts).toEqual(["/host/vendor.js", "/host/bridge.js", extensions[0]!.bundle, full.bundle, "/host/panel.js"])
    const styles = [...answer.text.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)].map((match) => match[1]!.replace(/&amp;/g, "&"))
    expect(styles).toEqual(["/host/utility.css", "/host/panel.css", full.styles])
    // The bootstrap comes before every script.
    expect(answer.text.indexOf("window.__HOST__")).toBeLessThan(answer.text.indexOf("/host/vendor.js"))
  })

  it("carries the session's CSRF token for a signed-in browser", async () => {
    const login = await request(`${server.url}/auth/login`, { method: "POST", body: { username: "alice", token: "host_test_alice_token" } })
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!
    const page = await request(`${server.url}/`, { headers: { cookie } })
    expect(page.status).toBe(200)
    expect(bootstrapOf(page.text).csrfToken).toBe((login.json as { data: { csrfToken: string } }).data.csrfToken)
  })

  it("answers every page of the panel with the shell", async () => {
    const paths = [
      "/", "/ext/acme/full/stats", "/account", "/account/api", "/account/ssh", "/account/ext/acme/full/profile",
      "/server/srv-alice", "/server/srv-alice/files", "/server/srv-alice/files/edit/server.properties",
      "/server/srv-alice/databases", "/server/srv-alice/schedules", "/server/srv-alice/schedules/1",
      "/server/srv-alice/users", "/server/srv-alice/backups", "/server/srv-alice/network", "/server/srv-alice/startup",
      "/server/srv-alice/settings", "/server/srv-alice/ext/acme/full/players/steve"
    ]
    for (const path of paths) {
      const answer = await request(`${server.url}${path}`, { as: "alice" })
      expect(answer.status, path).toBe(200)
      expect(answer.text, path).toContain(`<div id="app"></div>`)
    }
  })

  it("is the 404 page (status 404) for unknown paths and for every path of a server the user may not see", async () => {
    for (const [user, path] of [
      ["alice", "/nope"],
      ["alice", "/server/srv-alice/nope"],
      ["alice", "/account/nope"],
      ["bob", "/server/srv-other"],
      ["bob", "/server/srv-other/files"],
      ["bob", "/server/srv-other/ext/acme/full/x"],
      ["admin", "/server/does-not-exist"],
      ["alice", "/ext/acme/not-installed"],
      ["alice", "/server/srv-alice/ext/acme/not-installed/page"],
      ["alice", "/account/ext/acme/not-installed/x"]
    ] as const) {
      const answer = await request(`${server.url}${path}`, { as: user, headers: { accept: "text/html,application/xhtml+xml" } })
      expect(answer.status, `${user} ${path}`).toBe(404)
      expect(answer.text).toContain(`<div id="app"></div>`)
      if (!path.includes("/ext/")) expect(bootstrapOf(answer.text).server, path).toBeNull()
      // Nothing of the hidden server's name leaks into the page.
      expect(answer.text).not.toContain("Someone else")
    }
  })

  it("answers a path that is no panel page with the JSON 404 to clients that do not ask for HTML", async () => {
    for (const path of ["/nope", "/server/srv-alice/nope"]) {
      for (const user of ["alice", undefined] as const) {
        const answer = await request(`${server.url}${path}`, user === undefined ? {} : { as: user })
        expect(answer.status, path).toBe(404)
        expect(answer.json, path).toEqual({ errors: [{ code: "NotFound", status: "404", detail: "not found" }] })
      }
    }
  })

  it("leaves the framework's own paths to JSON errors", async () => {
    for (const path of ["/api/nope", "/admin/nope", "/host/nope", "/auth/nope"]) {
      const answer = await request(`${server.url}${path}`, { as: "alice" })
      expect(answer.status, path).toBe(404)
      expect(answer.json, path).toEqual({ errors: [expect.objectContaining({ status: "404" })] })
    }
  })

  it("serves the app's files with ETags", async () => {
    for (const file of ["vendor.js", "panel.js", "panel.css", "utility.css"]) {
      const first = await request(`${server.url}/host/${file}`)
      expect(first.status, file).toBe(200)
      const etag = first.headers.get("etag")!
      expect(etag).toMatch(/^".+"$/)
      const again = await request(`${server.url}/host/${file}`, { headers: { "if-none-match": etag } })
      expect(again.status, file).toBe(304)
    }
  })

  it("bundles React once, in the vendor script; the panel app uses the page's globals", async () => {
    const vendor = (await request(`${server.url}/host/vendor.js`)).text
    const app = (await request(`${server.url}/host/panel.js`)).text
    expect(vendor).toContain("__SECRET_INTERNALS")
    expect(app).not.toContain("__SECRET_INTERNALS")
    expect(app).not.toContain("react.element")
    for (const global of ["window.React", "window.ReactDOM", "window.ReactJSXRuntime"]) expect(app).toContain(global)
  })

  it("builds the utility sheet from the panel's classes and the safelist, with the theme colours", async () => {
    const sheet = (await request(`${server.url}/host/utility.css`)).text
    // Used by the panel app.
    for (const selector of [".text-host-text-muted", ".lg\\:grid-cols-\\[minmax\\(0\\,1fr\\)_18rem\\]", ".truncate"]) {
      expect(sheet, selector).toContain(selector)
    }
    // Safelisted though the panel does not use them.
    for (const selector of [".md\\:grid-cols-12", ".bg-host-info", ".border-host-danger", ".rounded-host-lg", ".font-host-mono", ".text-indigo-400", ".p-16"]) {
      expect(sheet, selector).toContain(selector)
    }
    // Theme colours resolve to the live variables, so an extension theme's overrides reach them.
    expect(sheet).toContain(".bg-host-info{background-color:var(--host-info)}")
  })

  it("drops a disabled extension's bundle from the next page", async () => {
    const disable = await runHost(["--root", root.path, "disable", "acme/full"])
    expect(disable.code, disable.stderr).toBe(0)
    await waitFor(async () => {
      const page = await request(`${server.url}/`, { as: "alice" })
      return !page.text.includes("/host/ext/acme/full/")
    }, 10_000)
    const page = await request(`${server.url}/`, { as: "alice" })
    expect((bootstrapOf(page.text).extensions as ReadonlyArray<{ id: string }>).map((extension) => extension.id)).toEqual(["acme/hello-world"])
  })
})
