import { readFileSync } from "node:fs"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, expect, it } from "vitest"
import { pelican } from "../../src/bridge/panels/pelican.js"
import { pterodactyl } from "../../src/bridge/panels/pterodactyl.js"
import { runHost, tempDir } from "../support/cli.js"
import { browserAvailable, describeBrowser, type PanelHarness, screenshot, sessionCookie, startPanel } from "../support/browser.js"
import { startStandin, type StandinPanel } from "../support/panel-pages/server.js"
import type { AccessListing, GrantRequest } from "../../src/http/contracts/Client.js"
import { install } from "../http/helpers.js"
import { writeEverywhere } from "./extensions.js"
import { slotIds } from "../../src/domain/Slots.js"

// The bridge under a panel Host does not render (docs/panels.md "Slot maps", docs/frontend.md
// "/host/boot.js"), in real Chromium: pages shaped like Pterodactyl's and Pelican's with only the include,
// `/host/boot.js` loading Host, the slot map putting containers at the anchors, and a test extension
// registered into all 65 slots.

const slots = slotIds

let harness: PanelHarness
let ptero: StandinPanel
let pelicanPanel: StandinPanel

beforeAll(async () => {
  // Without a browser the suites that use it are skipped (or, when one is required, fail as they are
  // collected): the slot-map test alone runs, and needs none of this.
  if (!browserAvailable) return
  const sources = tempDir("host-real-panels-src-")
  harness = await startPanel({
    extraPanelYaml: "  - { uuid: srv-alice-2, name: Alice's second server, owner: alice }\n",
    setup: async (root) => {
      await install(root, writeEverywhere(sources.path, slots))
    }
  })
  sources.cleanup()
  ptero = await startStandin("pterodactyl", harness.url, { access: accessHandler })
  pelicanPanel = await startStandin("pelican", harness.url)
})

afterAll(async () => {
  await ptero?.stop()
  await pelicanPanel?.stop()
  await harness?.stop()
})

const open = async (panel: StandinPanel, user: "alice" | "bob" | "dave" | undefined, path: string, init?: string) => {
  const context = await harness.browser.newContext({ viewport: { width: 1280, height: 800 } })
  if (user !== undefined) await context.addCookies([{ ...(await sessionCookie(harness.url, user)), url: panel.url }])
  const page = await context.newPage()
  const errors: Array<string> = []
  page.on("pageerror", (error) => errors.push(error.message))
  if (init !== undefined) await page.addInitScript(init)
  await page.goto(`${panel.url}${path}`)
  return { context, page, errors }
}

/**
 * A stand-in of Host's `/api/client/host/servers/{server}/access` under Pterodactyl (docs/panels.md "Extension
 * pages under a real panel"; the harness runs the embedded panel, whose subusers carry their own permissions):
 * subusers bob and carol of srv-alice, grants kept in memory by username, every write recorded. Its answers
 * are typed by the endpoint's contract (http/contracts/Client.ts), so they are the shapes Host sends.
 */
const grants = new Map<string, Set<string>>([["bob", new Set(["everywhere.view"])], ["carol", new Set()]])
const accessWrites: Array<{ method: string; server: string; body: unknown }> = []
const accessHandler = (method: string, server: string, body: unknown) => {
  if (server !== "srv-alice") return { status: 404, body: { errors: [{ code: "NotFound", status: "404", detail: `no server ${server}` }] } }
  if (method === "GET") {
    const listing: AccessListing = {
      server: { uuid: "srv-alice", identifier: null, name: "Alice's server" },
      grants_kept_by: "host",
      subusers: ["bob", "carol"].map((name) => ({
        username: name,
        email: `${name}@example.test`,
        uuid: null,
        panel_permissions: ["control.console"],
        grants: [...grants.get(name)!]
      })),
      permissions: [
        { extension: "test/everywhere", permission: "everywhere.view" },
        { extension: "test/everywhere", permission: "everywhere.manage" }
      ]
    }
    return { status: 200, body: { data: listing } }
  }
  const { permission, user } = body as typeof GrantRequest.Type
  accessWrites.push({ method, server, body })
  if (method === "PUT") grants.get(user)?.add(permission)
  if (method === "DELETE") grants.get(user)?.delete(permission)
  return { status: 200, body: { data: { server, user, permission, granted: method === "PUT", changed: true } } }
}

const probe = (page: Page, slot: string) => page.locator(`[data-host-slot="${slot}"] [data-testid="slot-${slot}"]`)
const rendered = (page: Page) => page.$$eval(".everywhere-probe", (elements) => [...new Set(elements.map((element) => element.getAttribute("data-testid")!.slice(5)))])
const mark = (page: Page) => page.evaluate(() => ((window as unknown as { __mark: number }).__mark = 7))
const marked = (page: Page) => page.evaluate(() => (window as unknown as { __mark?: number }).__mark === 7)
/** Waits until the stand-in's one remount after load has happened. */
const settled = (page: Page) => page.waitForFunction(() => ((window as unknown as { __standin?: { epoch: number } }).__standin?.epoch ?? 0) >= 1)

it("each slot map covers the 65 slot ids exactly once (placed or absent with a reason)", () => {
  for (const map of [pterodactyl, pelican]) {
    const ids = [...map.places.map((place) => place.slot), ...map.absent.map((entry) => entry.slot)]
    expect(new Set(ids).size, map.kind).toBe(ids.length)
    expect([...ids].sort(), map.kind).toEqual([...slots].sort())
    for (const entry of map.absent) expect(entry.reason.length).toBeGreaterThan(10)
  }
  // docs/panels.md has a row for each slot in each panel's table.
  const docs = readFileSync(join(__dirname, "../../docs/panels.md"), "utf8")
  const pteroTable = docs.slice(docs.indexOf("### Pterodactyl 1.11"), docs.indexOf("### Pelican 1."))
  const pelicanTable = docs.slice(docs.indexOf("### Pelican 1."), docs.indexOf("## Extension pages under a real panel"))
  for (const slot of slots) {
    expect(pteroTable, slot).toContain(`| \`${slot}\` |`)
    expect(pelicanTable, slot).toContain(`| \`${slot}\` |`)
  }
})

describeBrowser("the bridge under a Pterodactyl-shaped panel", () => {
  it("renders every mapped slot at its anchor across the panel's pages", async () => {
    const { context, errors, page } = await open(ptero, "alice", "/")
    const seen = new Set<string>()
    const visit = async (path: string, shot?: string, action?: () => Promise<void>) => {
      await page.evaluate((target) => {
        history.pushState(null, "", target)
        dispatchEvent(new PopStateEvent("popstate"))
      }, path)
      await probe(page, "navbar").waitFor()
      if (/^\/server\/[^/]+\/(databases|schedules|users|network|startup|settings|backups)/.test(path)) await page.locator(".list-loaded").first().waitFor()
      await action?.()
      // Every place of this path renders (optional ones where their anchor exists).
      const expected = pterodactyl.places.filter((place) => place.routes.some((pattern) => {
        const want = pattern.split("/").filter(Boolean)
        const have = path.split("#")[0]!.split("/").filter(Boolean)
        return want.at(-1) === "*" ? have.length >= want.length - 1 && want.slice(0, -1).every((part, i) => part.startsWith(":") || part === have[i])
          : want.length === have.length && want.every((part, i) => part.startsWith(":") || part === have[i])
      }))
      for (const place of expected) {
        if (place.optional !== undefined && !["server.files.dropdown", "server.backups.dropdown", "dashboard.serverrow.description.before", "dashboard.serverrow.description.after"].includes(place.slot)) continue
        await probe(page, place.slot).first().waitFor({ state: "attached" })
      }
      // Each container sits at its anchor: inside it, or next to it with only Host containers between. Read
      // once the panel's previous page has faded out (its section lingers 150 ms, with anchors of its own) and
      // the bridge has moved its containers after it: until then a container can still be by the old anchor.
      await page.waitForFunction(() => document.querySelector(".fade-exit") === null)
      const misplaced = () => page.evaluate((places) => places.flatMap((place) => {
        const containers = [...document.querySelectorAll(`[data-host-slot="${place.slot}"][data-host-anchored]`)]
        return containers.filter((container) => {
          const matches = (element: Element | null) => element !== null && place.anchors.some((anchor) => anchor.placement === place.placement && element.matches(anchor.selector))
          if (place.placement === "afterbegin" || place.placement === "beforeend") {
            // First (last) in its anchor, Host's containers aside, also once the page's list has arrived.
            let next = place.placement === "beforeend" ? container.nextElementSibling : container.previousElementSibling
            while (next !== null && next.hasAttribute("data-host-anchored")) next = place.placement === "beforeend" ? next.nextElementSibling : next.previousElementSibling
            return !matches(container.parentElement) || next !== null
          }
          let next = place.placement === "beforebegin" ? container.nextElementSibling : container.previousElementSibling
          while (next !== null && next.hasAttribute("data-host-anchored")) next = place.placement === "beforebegin" ? next.nextElementSibling : next.previousElementSibling
          return !matches(next)
        }).map(() => place.slot)
      }), expected.map((place) => ({ slot: place.slot, placement: place.anchors[0]!.placement, anchors: place.anchors })))
      await expect.poll(misplaced, { message: path }).toEqual([])
      for (const slot of await rendered(page)) seen.add(slot)
      if (shot !== undefined) await screenshot(page, shot)
    }
    await settled(page)
    await visit("/", "real-ptero-dashboard")
    await visit("/server/srv-alice", "real-ptero-console")
    await visit("/server/srv-alice/files", "real-ptero-files", async () => {
      await page.locator(".file-row .menu-button").click()
    })
    await visit("/server/srv-alice/files/edit#/server.properties")
    for (const name of ["databases", "schedules", "users", "network", "startup", "settings"]) await visit(`/server/srv-alice/${name}`)
    await visit("/server/srv-alice/backups", undefined, async () => {
      await page.locator(".backup-row .menu-button").click()
    })
    await visit("/server/srv-alice/schedules/1")
    await visit("/account", "real-ptero-account")
    await visit("/account/api")
    await visit("/account/ssh")
    const mapped = pterodactyl.places.map((place) => place.slot)
    expect([...seen].sort()).toEqual([...mapped].sort())
    expect(errors).toEqual([])
    await context.close()
  })

  it("follows client-side navigation: containers move with the page and leave pages they do not belong to", async () => {
    const { context, page } = await open(ptero, "alice", "/")
    await settled(page)
    await probe(page, "dashboard.widgets").waitFor()
    await mark(page)
    // The row's own part (its icon), not the injected UI in it, which keeps its clicks.
    await page.locator(`a[href="/server/srv-alice"] [class*="ServerRow___StyledDiv-sc-"]`).first().click()
    await probe(page, "server.console.header").waitFor()
    await page.waitForFunction(() => document.querySelector('[data-host-slot="dashboard.widgets"]') === null)
    // The page was loaded on the dashboard: the server's context is asked for on the way in.
    await page.locator('[data-testid="slot-server.header"][data-server="srv-alice"]').waitFor()
    await page.locator(`[class*="SubNavigation-sc-"] a[href="/server/srv-alice/files"]`).click()
    await probe(page, "server.files.header").waitFor()
    await page.waitForFunction(() => document.querySelector('[data-host-slot="server.console.header"]') === null)
    await page.locator(".navigation-link[href='/account']").click()
    await probe(page, "account.overview.before").waitFor()
    expect(await page.locator('[data-host-slot^="server."]').count()).toBe(0)
    // Containers are never inside the fading-out section.
    expect(await page.locator(".fade-exit [data-host-anchored]").count()).toBe(0)
    await page.goBack()
    await probe(page, "server.files.header").waitFor()
    expect(await marked(page)).toBe(true)
    // The panel rebuilt its navbar on each move between dashboard, server and account; the navbar's
    // component moved with its container and never mounted again.
    const mounts = await page.evaluate(() => (window as unknown as { __mounts: Record<string, number> }).__mounts)
    expect(mounts["navbar|"]).toBe(1)
    await context.close()
  })

  it("a re-render or a remount of the panel's React puts containers back without re-mounting their components", async () => {
    const { context, page } = await open(ptero, "alice", "/server/srv-alice")
    await settled(page)
    await probe(page, "server.console.sidebar").waitFor()
    await probe(page, "navbar").waitFor()
    const mounts = () => page.evaluate(() => ({ ...(window as unknown as { __mounts: Record<string, number> }).__mounts }))
    const before = await mounts()
    const navbarElement = await page.locator('[data-host-slot="navbar"]').elementHandle()
    await page.evaluate(() => (window as unknown as { __standin: { rerender: () => void } }).__standin.rerender())
    await page.evaluate(() => (window as unknown as { __standin: { remount: () => void } }).__standin.remount())
    await page.waitForFunction(() => (window as unknown as { __standin: { epoch: number } }).__standin.epoch >= 2)
    await probe(page, "server.console.sidebar").waitFor()
    await probe(page, "navbar").waitFor()
    // The same container element is back at the new anchor, and nothing in it mounted again.
    expect(await navbarElement!.evaluate((element) => element.isConnected && element.parentElement?.className.includes("NavigationBar__RightNavigation-sc-"))).toBe(true)
    expect(await mounts()).toEqual(before)
    expect(before["navbar|srv-alice"] ?? before["navbar|"]).toBe(1)
    await context.close()
  })

  it("a user without servers still gets the dashboard's list slots, around the empty-list paragraph", async () => {
    const { context, page } = await open(ptero, "dave", "/")
    await settled(page)
    for (const slot of ["dashboard.widgets", "dashboard.serverlist.before", "dashboard.serverlist.after"]) await probe(page, slot).waitFor()
    const order = await page.$$eval(`[class*="PageContentBlock___StyledContentContainer-sc-"] > *`, (children) =>
      children.map((child) => child.getAttribute("data-host-slot") ?? child.tagName.toLowerCase()))
    expect(order.indexOf("dashboard.serverlist.before")).toBeLessThan(order.indexOf("p"))
    expect(order.indexOf("dashboard.serverlist.after")).toBeGreaterThan(order.indexOf("p"))
    expect(await page.locator('[data-host-slot^="dashboard.serverrow."]').count()).toBe(0)
    await context.close()
  })

  it("per-row slots get their row's server", async () => {
    const { context, page } = await open(ptero, "alice", "/")
    await settled(page)
    await page.locator('[data-testid="slot-dashboard.serverrow.name.after"]').nth(1).waitFor()
    const rows = await page.$$eval('[data-host-slot="dashboard.serverrow.name.after"]', (containers) =>
      containers.map((container) => ({
        link: container.closest("a")?.getAttribute("href"),
        rendered: container.querySelector("[data-testid]")?.getAttribute("data-server")
      })))
    expect(rows).toEqual([
      { link: "/server/srv-alice", rendered: "srv-alice" },
      { link: "/server/srv-alice-2", rendered: "srv-alice-2" }
    ])
    // A click on injected UI inside the row link does not follow the link.
    await page.locator('[data-testid="slot-dashboard.serverrow.name.after"]').first().click()
    expect(new URL(page.url()).pathname).toBe("/")
    await context.close()
  })

  it("an extension page takes over the content area, and its sub-navigation link navigates client-side", async () => {
    const { context, page } = await open(ptero, "alice", "/server/srv-alice")
    await settled(page)
    await mark(page)
    const link = page.locator('[data-host-slot="server.subnav"] a[data-host-extension="test/everywhere"]')
    await link.click()
    await page.waitForURL(`${ptero.url}/server/srv-alice/ext/test/everywhere`)
    await page.getByTestId("everywhere-page").waitFor()
    await expect(page.getByTestId("everywhere-page").textContent()).resolves.toContain("Alice's server")
    // The panel's own 404 block is hidden, not removed (the panel's React still owns it).
    const notFound = page.locator('[class*="ScreenBlock___StyledDiv-sc-"]')
    await expect(notFound.evaluate((element) => getComputedStyle(element).display)).resolves.toBe("none")
    await page.waitForFunction(() => document.querySelector(".fade-exit") === null)
    await screenshot(page, "real-ptero-extension-page")
    expect(await marked(page)).toBe(true)
    // Back to a panel page through the panel's own link: the 404 block and the page go.
    await page.locator(`[class*="SubNavigation-sc-"] a[href="/server/srv-alice/files"]`).click()
    await probe(page, "server.files.header").waitFor()
    expect(await page.getByTestId("everywhere-page").count()).toBe(0)
    await page.locator(".navigation-link[href='/account']").click()
    await page.locator('[data-host-slot="account.subnav"] a[data-host-extension="test/everywhere"]').click()
    await page.getByTestId("everywhere-account-page").waitFor()
    expect(await marked(page)).toBe(true)
    await context.close()
  })

  it("signed in, boot.js brings the bootstrap of the page it is loaded on: no bootstrap request before the bundles", async () => {
    for (const path of ["/", "/server/srv-alice/files"]) {
      const before = ptero.requests.length
      const { context, errors, page } = await open(ptero, "alice", path)
      await probe(page, "navbar").waitFor()
      const asked = ptero.requests.slice(before)
      expect(asked.filter((line) => line.includes("/api/client/host/bootstrap")), path).toHaveLength(0)
      const host = await page.evaluate(() => {
        const global = window as unknown as { __HOST__: { panel: { kind: string }; server: { uuid: string } | null }; __HOST_BOOTSTRAP__?: unknown }
        return { kind: global.__HOST__.panel.kind, server: global.__HOST__.server?.uuid ?? null, left: "__HOST_BOOTSTRAP__" in global }
      })
      expect(host, path).toEqual({ kind: "pterodactyl", server: path === "/" ? null : "srv-alice", left: false })
      expect(errors).toEqual([])
      await context.close()
    }
  })

  it("signed out, boot.js asks nothing and loads nothing more; on the panel's admin pages it asks nothing", async () => {
    const before = ptero.requests.length
    const context = await harness.browser.newContext()
    const page = await context.newPage()
    await page.goto(`${ptero.url}/`)
    await page.waitForLoadState("networkidle")
    const asked = ptero.requests.slice(before)
    // Pterodactyl's page says nobody is signed in (SiteConfiguration without PterodactylUser): not even the bootstrap is asked.
    expect(asked).toContain("GET /host/boot.js")
    expect(asked.filter((line) => line.includes("/api/client/host/bootstrap"))).toHaveLength(0)
    expect(asked.some((line) => line.includes("/host/bridge.js") || line.includes("/host/vendor.js"))).toBe(false)
    expect(await page.evaluate(() => (window as unknown as { __HOST__?: unknown }).__HOST__)).toBeUndefined()
    const adminBefore = ptero.requests.length
    await page.context().addCookies([{ ...(await sessionCookie(harness.url, "alice")), url: ptero.url }])
    await page.goto(`${ptero.url}/admin/servers`)
    await page.waitForLoadState("networkidle")
    const admin = ptero.requests.slice(adminBefore).filter((line) => !line.endsWith("/favicon.ico"))
    expect(admin).toEqual(["GET /admin/servers", "GET /host/boot.js"])
    await context.close()
  })

  it("a registration into a slot Pterodactyl has no place for is reported once, as that extension's", async () => {
    const context = await harness.browser.newContext()
    await context.addCookies([{ ...(await sessionCookie(harness.url, "alice")), url: ptero.url }])
    const page = await context.newPage()
    const warnings: Array<string> = []
    page.on("console", (message) => {
      if (message.type() === "warning") warnings.push(message.text())
    })
    const reports: Array<Record<string, string>> = []
    page.on("request", (request) => {
      if (request.url().endsWith("/api/client/host/diagnostics")) reports.push(JSON.parse(request.postData() ?? "{}") as Record<string, string>)
    })
    const reported = page.waitForRequest((request) => request.url().endsWith("/api/client/host/diagnostics") && (request.postData() ?? "").includes("auth.container.after"))
    await page.goto(`${ptero.url}/`)
    await reported
    await probe(page, "dashboard.widgets").waitFor()
    const slotReports = reports.filter((report) => report.kind === "slot")
    expect(slotReports.map((report) => report.slot).sort()).toEqual(["auth.container.after", "auth.container.before"])
    expect(slotReports[0]).toMatchObject({ extensionId: "test/everywhere" })
    expect(slotReports[0]!.message).toContain("no place on pterodactyl")
    expect(warnings.filter((text) => text.includes("auth.container.before"))).toHaveLength(1)
    // A full page load in the same tab warns again but does not report again (once per browser session).
    const warnedAgain = page.waitForEvent("console", (message) => message.text().includes("auth.container.after"))
    await page.reload()
    await warnedAgain
    await probe(page, "dashboard.widgets").waitFor()
    await page.waitForLoadState("networkidle")
    expect(reports.filter((report) => report.kind === "slot")).toHaveLength(2)
    await context.close()
  })

  it("a missing anchor is reported once to diagnostics and shown by host status; the rest of the page works", async () => {
    const { context, page } = await open(ptero, "alice", "/", "window.__standinBroken = true")
    await settled(page)
    const reported = page.waitForRequest((request) => request.url().endsWith("/api/client/host/diagnostics") && (request.postData() ?? "").includes("account.overview.before"))
    await page.locator(".navigation-link[href='/account']").click()
    await probe(page, "account.header").waitFor()
    const request = await reported
    expect(JSON.parse(request.postData() ?? "{}")).toMatchObject({ kind: "anchor", extensionId: "host/bridge", slot: "account.overview.before" })
    expect((await request.response())?.status()).toBe(202)
    const status = JSON.parse((await runHost(["--root", harness.root, "status", "--json"])).stdout) as { anchors: Array<{ message: string }> }
    expect(status.anchors.some((entry) => entry.message.includes("account.overview.before") && entry.message.includes("/account"))).toBe(true)
    const text = (await runHost(["--root", harness.root, "status"])).stdout
    expect(text).toContain("Slot anchors missing on the panel's pages:")
    await context.close()
  })
})

describeBrowser("Host's Extension access under Pterodactyl", () => {
  it("lists the subusers' grants to the owner on the panel's Users page and toggles them; a subuser gets neither the section nor the page", async () => {
    const { context, page } = await open(ptero, "alice", "/server/srv-alice")
    await settled(page)
    await mark(page)
    // No tab of its own (docs/decisions.md "Extension access on the Users page"): the panel's Users tab.
    expect(await page.locator('a[data-host-extension="host/access"]').count()).toBe(0)
    await page.locator(`[class*="SubNavigation-sc-"] a[href="/server/srv-alice/users"]`).click()
    await page.locator('[data-host-slot="server.users.after"] .host-access').waitFor()
    const bobManage = page.locator('input[data-user="bob"][data-permission="everywhere.manage"]')
    await bobManage.waitFor()
    expect(await page.locator('input[data-user="bob"][data-permission="everywhere.view"]').isChecked()).toBe(true)
    expect(await bobManage.isChecked()).toBe(false)
    await bobManage.check()
    await page.waitForFunction(() => !(document.querySelector('input[data-user="bob"][data-permission="everywhere.manage"]') as HTMLInputElement).disabled)
    expect(await bobManage.isChecked()).toBe(true)
    expect(accessWrites.at(-1)).toEqual({ method: "PUT", server: "srv-alice", body: { user: "bob", permission: "everywhere.manage" } })
    expect(grants.get("bob")?.has("everywhere.manage")).toBe(true)
    await page.locator('input[data-user="bob"][data-permission="everywhere.view"]').uncheck()
    await page.waitForFunction(() => !(document.querySelector('input[data-user="bob"][data-permission="everywhere.view"]') as HTMLInputElement).disabled)
    expect(accessWrites.at(-1)).toEqual({ method: "DELETE", server: "srv-alice", body: { user: "bob", permission: "everywhere.view" } })
    expect(grants.get("bob")?.has("everywhere.view")).toBe(false)
    await page.waitForFunction(() => document.querySelector(".fade-exit") === null)
    await screenshot(page, "real-ptero-access")
    expect(await marked(page)).toBe(true)
    // On a phone the table of toggles stays inside the page: nothing wider than the viewport.
    await page.setViewportSize({ width: 390, height: 844 })
    await page.locator('input[data-user="bob"][data-permission="everywhere.manage"]').waitFor()
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    await screenshot(page, "real-ptero-access-phone")
    await context.close()
    const subuser = await open(ptero, "bob", "/server/srv-alice")
    await probe(subuser.page, "server.subnav").waitFor()
    await subuser.page.locator('[data-host-slot="server.subnav"] a[data-host-extension="test/everywhere"]').waitFor()
    expect(await subuser.page.locator('a[data-host-extension="host/access"]').count()).toBe(0)
    await subuser.page.goto(`${ptero.url}/server/srv-alice/users`)
    await probe(subuser.page, "server.users.after").waitFor()
    expect(await subuser.page.locator(".host-access").count()).toBe(0)
    await subuser.page.goto(`${ptero.url}/server/srv-alice/ext/host/access`)
    await subuser.page.locator("[data-host-notice='403']").waitFor()
    expect(await subuser.page.locator("input[data-permission]").count()).toBe(0)
    await subuser.context.close()
  })
})

describeBrowser("the bridge under a Pelican-shaped panel", () => {
  it("renders into the plugin's containers and follows livewire:navigated", async () => {
    const { context, errors, page } = await open(pelicanPanel, "alice", "/")
    await probe(page, "dashboard.widgets").waitFor()
    await probe(page, "navbar").waitFor()
    // Filament's colours became the theme's defaults.
    await expect(page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue("--host-primary").trim())).resolves.toBe("rgb(59, 130, 246)")
    await screenshot(page, "real-pelican-dashboard")
    await mark(page)
    await page.locator('a[href="/profile"]').click()
    await probe(page, "account.overview.after").waitFor()
    expect(await page.locator('[data-host-slot="dashboard.widgets"]').count()).toBe(0)
    expect(await page.evaluate(() => (window as unknown as { __HOST__: { context: () => { area: string; path: string } } }).__HOST__.context().path)).toBe("/profile")
    expect(await marked(page)).toBe(true)
    await page.goto(`${pelicanPanel.url}/server/srv-alice/console`)
    await probe(page, "server.console.info.before").waitFor()
    await page.locator('a[href="/server/srv-alice/files"]').click()
    await probe(page, "server.files.header").waitFor()
    await expect(probe(page, "server.files.header").getAttribute("data-server")).resolves.toBe("srv-alice")
    expect(errors).toEqual([])
    await context.close()
  })

  it("extension pages are the plugin's Filament pages: the sub-navigation link goes through Livewire, the page fills the outlet", async () => {
    const { context, errors, page } = await open(pelicanPanel, "alice", "/server/srv-alice/console")
    await probe(page, "server.console.info.before").waitFor()
    await mark(page)
    const link = page.locator('[data-host-slot="server.subnav"] a[data-host-extension="test/everywhere"]')
    await link.click()
    await page.waitForURL(`${pelicanPanel.url}/server/srv-alice/ext/test/everywhere`)
    await page.locator('[data-host-slot="server.page"] [data-testid="everywhere-page"]').waitFor()
    await expect(page.getByTestId("everywhere-page").textContent()).resolves.toContain("Alice's server")
    // Livewire swapped the page (no document load), and the page's other containers came with it.
    expect(await marked(page)).toBe(true)
    await probe(page, "server.header").waitFor()
    await expect(link.getAttribute("aria-current")).resolves.toBe("page")
    await screenshot(page, "real-pelican-extension-page")
    await page.setViewportSize({ width: 390, height: 844 })
    await page.getByTestId("everywhere-page").waitFor()
    await screenshot(page, "real-pelican-extension-page-phone")
    await page.setViewportSize({ width: 1280, height: 800 })
    // Loaded directly (a bookmark, a reload) the outlet is there as well, as are the other areas' outlets.
    await page.goto(`${pelicanPanel.url}/server/srv-alice/ext/test/everywhere`)
    await page.getByTestId("everywhere-page").waitFor()
    await page.goto(`${pelicanPanel.url}/account/ext/test/everywhere`)
    await page.locator('[data-host-slot="account.page"] [data-testid="everywhere-account-page"]').waitFor()
    // A panel page has no outlet: back on the console the extension page is gone.
    await page.goto(`${pelicanPanel.url}/server/srv-alice/console`)
    await probe(page, "server.console.info.before").waitFor()
    expect(await page.getByTestId("everywhere-page").count()).toBe(0)
    expect(errors).toEqual([])
    await context.close()
  })

  it("without Livewire on the page, an extension-page link is an ordinary link the browser follows", async () => {
    const { context, page } = await open(pelicanPanel, "alice", "/server/srv-alice/console", "Object.defineProperty(window, 'Livewire', { value: undefined, writable: false })")
    await probe(page, "server.console.info.before").waitFor()
    await mark(page)
    await page.locator('[data-host-slot="server.subnav"] a[data-host-extension="test/everywhere"]').click()
    await page.waitForURL(`${pelicanPanel.url}/server/srv-alice/ext/test/everywhere`)
    await page.getByTestId("everywhere-page").waitFor()
    // A document load: the page's script state is new.
    expect(await marked(page)).toBe(false)
    await context.close()
  })
})
