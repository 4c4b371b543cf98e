import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { AdminBootstrap } from "../../src/http/contracts/Admin.js"
import { tempDir } from "../support/cli.js"
import { writePanelRoot } from "../support/panel-root.js"
import { startPelicanStandIn } from "../support/pelican-api.js"
import { machines, type PanelStandIn, people, startPanelStandIn } from "../support/pterodactyl-api.js"
import { request, type RunningServer, startServer, writePanelConfig } from "./helpers.js"

// Finding Host's admin screens (docs/panels.md "Finding Host's admin screens", docs/admin.md): the address
// an admin is told, `/admin/host/`, leads to the first screen on every driver, and under a real panel the
// screens' page says which panel it is (its name from the panel's .env, its kind for the palette) and which
// CSRF rule the admin API applies there.

type Driver = "embedded" | "pterodactyl" | "pelican"

interface Running {
  readonly server: RunningServer
  readonly admin: Readonly<Record<string, string>>
  readonly stop: () => Promise<void>
}

const start = async (driver: Driver): Promise<Running> => {
  const root = tempDir(`host-admin-entry-${driver}-`)
  if (driver === "embedded") {
    writePanelConfig(root.path)
    const server = await startServer(root.path)
    return { server, admin: { authorization: "Bearer host_test_admin_token" }, stop: async () => (await server.stop(), root.cleanup()) }
  }
  const panelRoot = writePanelRoot(join(root.path, "panel"), { version: driver === "pterodactyl" ? "1.11.8" : "1.0.0", appName: "Acme Games", sessionCookie: `${driver}_session` })
  const standIn: PanelStandIn = driver === "pterodactyl"
    ? await startPanelStandIn({ users: people, servers: machines })
    : await startPelicanStandIn({ users: people, servers: machines })
  const server = await startServer(root.path, { env: { HOST_PANEL_DRIVER: driver, HOST_PANEL_URL: standIn.url, HOST_PANEL_ROOT: panelRoot } })
  return {
    server,
    admin: { cookie: `${driver}_session=sess-admin` },
    stop: async () => {
      await server.stop()
      await standIn.close()
      root.cleanup()
    }
  }
}

const bootstrapOf = (html: string): AdminBootstrap => JSON.parse(/window\.__HOST__ = (\{.*\});<\/script>/.exec(html)![1]!) as AdminBootstrap

describe.each(["embedded", "pterodactyl", "pelican"] as const)("the admin screens' address under the %s driver", (driver) => {
  let running: Running

  beforeAll(async () => {
    running = await start(driver)
  }, 60_000)
  afterAll(async () => {
    await running?.stop()
  })

  it("/admin/host and /admin/host/ redirect (302) to /admin/host/extensions, signed in or not", async () => {
    for (const path of ["/admin/host", "/admin/host/"]) {
      for (const headers of [{}, running.admin]) {
        const answer = await request(`${running.server.url}${path}`, { headers })
        expect(answer.status, `${path} ${JSON.stringify(headers)}`).toBe(302)
        expect(answer.headers.get("location")).toBe("/admin/host/extensions")
      }
    }
    // Only those two: a screen's own path is not redirected, and an unknown one is still not found.
    expect((await request(`${running.server.url}/admin/host/extensions`, { headers: running.admin })).status).toBe(200)
    expect((await request(`${running.server.url}/admin/host/nothing-here`, { headers: running.admin })).status).toBe(404)
  })

  it("the screens' page names the panel, its kind and the CSRF rule of its API", async () => {
    const page = await request(`${running.server.url}/admin/host/extensions`, { headers: running.admin })
    expect(page.status).toBe(200)
    expect(page.text).toContain(`<html lang="en" data-host-panel="${driver}">`)
    const bootstrap = bootstrapOf(page.text)
    const name = driver === "embedded" ? bootstrap.panel.name : "Acme Games"
    expect(bootstrap.panel).toMatchObject({ kind: driver, name })
    expect(page.text).toContain(`<title>Extensions · ${name}</title>`)
    expect(bootstrap.csrf).toBe(driver === "embedded" ? "host" : "panel")
    // Under a real panel there is no Host session, so no token of Host's: the panel's XSRF-TOKEN rule applies.
    if (driver !== "embedded") expect(bootstrap.csrfToken).toBeNull()
  })
})
