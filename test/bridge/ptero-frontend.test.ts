import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, expect, it } from "vitest"
import { slotIds } from "../../src/domain/Slots.js"
import { describeBrowser, type PanelHarness, screenshot, startPanel } from "../support/browser.js"
import { fixture, tempDir } from "../support/cli.js"
import { writeExtension } from "../support/extensions.js"
import { writePanelRoot } from "../support/panel-root.js"
import { startStandin, type StandinPanel } from "../support/panel-pages/server.js"
import { type PanelStandIn, people, type StandInServer, startPanelStandIn } from "../support/pterodactyl-api.js"
import { install } from "../http/helpers.js"
import { writeEverywhere } from "./extensions.js"

// The four findings of issue 35 on the real Pterodactyl frontend (DESIGN §22 "On the real Pterodactyl
// frontend"; docs/panels.md "Slot maps", "Extension pages under a real panel"), on the stand-in of its
// client frontend whose sub-navigation carries the real build's styles, with `host serve` running the
// Pterodactyl driver against the client-API stand-in: the panel names a server by its short identifier in
// its URLs, while Host's server context carries the uuid.

const alicesServer: StandInServer = {
  uuid: "5f0c2a1e-7d3b-4c9a-8e21-6a4f0b9c1d23",
  identifier: "5f0c2a1e",
  name: "Alice's server",
  owner: 2,
  subusers: [{ user: 3, permissions: ["control.console", "user.read"] }]
}
const uuid = alicesServer.uuid

let api: PanelStandIn
let harness: PanelHarness
let router: Server
let ptero: StandinPanel
const folders = tempDir("host-ptero-frontend-")

const readBody = (stream: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    stream.on("data", (chunk: Buffer) => chunks.push(chunk))
    stream.on("end", () => resolve(Buffer.concat(chunks)))
    stream.on("error", reject)
  })

/** test/navigator: a server page whose button moves to its hidden second page with the SDK's useNavigate. */
const writeNavigator = (parent: string) =>
  writeExtension(parent, {
    id: "test/navigator",
    version: "1.0.0",
    files: {
      "resources/frontend/dist/extension.js": `(function () {
  var h = window.React.createElement;
  var sdk = window.__HOST__.sdk;
  function First() {
    var navigate = sdk.useNavigate();
    return h("button", { "data-testid": "navigate", onClick: function () { navigate("/second"); } }, "To the second page");
  }
  function Second() { return h("div", { "data-testid": "second" }, "Second page"); }
  sdk.createExtension({
    id: "test/navigator",
    routes: [
      { area: "server", path: "/", name: "Navigator", component: First },
      { area: "server", path: "/second", name: "Second", hidden: true, component: Second }
    ]
  });
})();
`
    }
  })

/**
 * Behind the stand-in pages: the stand-in app's server list (`/api/client/servers`, the shape the
 * embedded panel answers) from the client-API stand-in's `/api/client`, and everything else to Host with
 * the browser's host passed on as `X-Forwarded-Host` (what the nginx snippet does), so Host's Origin
 * check sees the panel's origin.
 */
const startRouter = async (hostUrl: string, apiUrl: string, panelHost: () => string) => {
  const server = createServer((request, response) => {
    void (async () => {
      const path = new URL(request.url ?? "/", "http://router.invalid").pathname
      if (path === "/api/client/servers") {
        const answer = await fetch(`${apiUrl}/api/client`, { headers: { cookie: request.headers.cookie ?? "", accept: "application/json" } })
        const list = (await answer.json()) as { data?: Array<{ attributes: { uuid: string; identifier: string; name: string } }> }
        response.writeHead(answer.status, { "content-type": "application/json" })
        response.end(JSON.stringify({ data: (list.data ?? []).map(({ attributes }) => ({ uuid: attributes.uuid, identifier: attributes.identifier, name: attributes.name })) }))
        return
      }
      const target = new URL(request.url ?? "/", hostUrl)
      const body = await readBody(request)
      const upstream = httpRequest(target, {
        method: request.method,
        headers: { ...request.headers, host: target.host, "x-forwarded-host": panelHost(), "x-forwarded-proto": "http" }
      }, (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(response)
      })
      upstream.on("error", (error) => {
        response.writeHead(502)
        response.end(error.message)
      })
      upstream.end(body)
    })()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

beforeAll(async () => {
  api = await startPanelStandIn({ users: people, servers: [alicesServer] })
  const panelRoot = writePanelRoot(join(folders.path, "panel"))
  harness = await startPanel({
    env: { HOST_PANEL_DRIVER: "pterodactyl", HOST_PANEL_URL: api.url, HOST_PANEL_ROOT: panelRoot },
    setup: async (root) => {
      await install(root, writeEverywhere(folders.path, slotIds))
      // acme/probe declares backend permissions: the grants Host keeps for Pterodactyl's subusers.
      await install(root, fixture("runtime", "probe"))
      await install(root, writeNavigator(folders.path))
    }
  })
  let panelHost = ""
  const started = await startRouter(harness.url, api.url, () => panelHost)
  router = started.server
  ptero = await startStandin("pterodactyl", started.url)
  panelHost = new URL(ptero.url).host
}, 90_000)

afterAll(async () => {
  await ptero?.stop()
  router?.closeAllConnections()
  await new Promise((resolve) => router?.close(resolve))
  await harness?.stop()
  await api?.close()
  folders.cleanup()
})

const open = async (session: string, path: string, viewport = { width: 1280, height: 800 }) => {
  const context = await harness.browser.newContext({ viewport })
  await context.addCookies([
    { name: "pterodactyl_session", value: session, url: ptero.url },
    // Laravel's XSRF-TOKEN cookie, which the panel's HTTP client (and Host's bridge) echo as X-XSRF-TOKEN.
    { name: "XSRF-TOKEN", value: "standin-xsrf", url: ptero.url }
  ])
  const page = await context.newPage()
  const errors: Array<string> = []
  page.on("pageerror", (error) => errors.push(error.message))
  await page.goto(`${ptero.url}${path}`)
  return { context, page, errors }
}

const probe = (page: Page, slot: string) => page.locator(`[data-host-slot="${slot}"] [data-testid="slot-${slot}"]`)
const hostTab = (page: Page) => page.locator('[data-host-slot="server.subnav"] a[data-host-extension="test/everywhere"]')
/** Waits until the stand-in's one remount after load has happened. */
const settled = (page: Page) => page.waitForFunction(() => ((window as unknown as { __standin?: { epoch: number } }).__standin?.epoch ?? 0) >= 1)
const close = (context: BrowserContext) => context.close()

/**
 * Every tab of the sub-navigation and the server.subnav marker, against the bar's row of tabs (centred,
 * at most 1200 px wide, inside its padding): a tab past the row's edge is cut off or spills out of it.
 */
const subnavLayout = (page: Page) =>
  page.evaluate(() => {
    const bar = document.querySelector('[class*="SubNavigation-sc-"]')!
    const row = bar.firstElementChild!
    const box = row.getBoundingClientRect()
    const style = getComputedStyle(row)
    const left = Math.max(0, box.left + parseFloat(style.paddingLeft))
    const right = Math.min(bar.getBoundingClientRect().right, box.right - parseFloat(style.paddingRight))
    const items = [...bar.querySelectorAll('a, [data-testid="slot-server.subnav"]')].map((element) => {
      const rect = element.getBoundingClientRect()
      return { text: element.textContent?.trim() ?? "", visible: rect.width > 0 && rect.left >= left - 0.5 && rect.right <= right + 0.5 }
    })
    return { overflow: bar.scrollWidth - bar.clientWidth, cut: items.filter((item) => !item.visible).map((item) => item.text), count: items.length }
  })

describeBrowser("the bridge on Pterodactyl's frontend (issue 35)", () => {
  it("at 1280 px the sub-navigation shows every panel tab and Host's without cutting one off; Extension access is no tab", async () => {
    const { context, errors, page } = await open("sess-alice", "/server/5f0c2a1e")
    await settled(page)
    await hostTab(page).waitFor()
    await probe(page, "server.subnav").waitFor()
    await page.waitForFunction(() => document.querySelector(".fade-exit") === null)
    const layout = await subnavLayout(page)
    // The panel's ten tabs, Host's links to test/everywhere's and test/navigator's pages, and the marker:
    // more than one row holds at 1280 px, so the row wraps.
    expect(layout.count).toBe(13)
    expect(layout.cut).toEqual([])
    expect(layout.overflow).toBe(0)
    // Host's grants screen lives on the Users page, not in the bar.
    expect(await page.locator('[class*="SubNavigation-sc-"] a[data-host-extension="host/access"]').count()).toBe(0)
    await screenshot(page, "ptero-frontend-subnav")
    // On a phone the bar scrolls sideways inside itself, as the panel's own tabs do there.
    await page.setViewportSize({ width: 390, height: 844 })
    await hostTab(page).waitFor()
    expect(await page.locator('[class*="SubNavigation-sc-"]').evaluate((bar) => bar.getBoundingClientRect().width)).toBeLessThanOrEqual(390)
    await screenshot(page, "ptero-frontend-subnav-phone")
    expect(errors).toEqual([])
    await close(context)
  })

  it("an extension page's tab is marked active on a direct load, and links keep the server id the user came with", async () => {
    const direct = await open("sess-alice", "/server/5f0c2a1e/ext/test/everywhere")
    await direct.page.getByTestId("everywhere-page").waitFor()
    await expect(hostTab(direct.page).getAttribute("href")).resolves.toBe("/server/5f0c2a1e/ext/test/everywhere")
    // Marked the way the panel marks its NavLink (the `active` class), with the panel's underline.
    await direct.page.locator('[data-host-slot="server.subnav"] a.active[data-host-extension="test/everywhere"]').waitFor()
    await expect(hostTab(direct.page).evaluate((element) => getComputedStyle(element).boxShadow)).resolves.toContain("inset")
    await screenshot(direct.page, "ptero-frontend-extension-page-direct")
    await close(direct.context)

    const { context, page } = await open("sess-alice", "/server/5f0c2a1e")
    await settled(page)
    await probe(page, "server.header").waitFor()
    // Moving between the server's own pages keeps Host's server context: no new bootstrap for it.
    const before = ptero.requests.length
    await page.locator('[class*="SubNavigation-sc-"] > div > a[href="/server/5f0c2a1e/files"]').click()
    await probe(page, "server.files.header").waitFor()
    await expect(probe(page, "server.header").getAttribute("data-server")).resolves.toBe(uuid)
    expect(ptero.requests.slice(before).filter((line) => line.includes("/api/client/host/bootstrap"))).toEqual([])
    await hostTab(page).click()
    await page.getByTestId("everywhere-page").waitFor()
    expect(new URL(page.url()).pathname).toBe("/server/5f0c2a1e/ext/test/everywhere")
    // The panel's own tabs follow the URL: still the short id.
    await expect(page.locator('[class*="SubNavigation-sc-"] > div > a').first().getAttribute("href")).resolves.toBe("/server/5f0c2a1e")

    // The SDK's useNavigate keeps the form too.
    await page.locator('[data-host-slot="server.subnav"] a[data-host-extension="test/navigator"]').click()
    await page.getByTestId("navigate").click()
    await page.getByTestId("second").waitFor()
    expect(new URL(page.url()).pathname).toBe("/server/5f0c2a1e/ext/test/navigator/second")
    await close(context)

    // Come by the uuid, stay with the uuid.
    const long = await open("sess-alice", `/server/${uuid}`)
    await hostTab(long.page).waitFor()
    await expect(hostTab(long.page).getAttribute("href")).resolves.toBe(`/server/${uuid}/ext/test/everywhere`)
    await close(long.context)
  })

  it("server.<page>.before comes after server.header on every server page", async () => {
    const { context, page } = await open("sess-alice", "/server/5f0c2a1e")
    await settled(page)
    const pages: ReadonlyArray<readonly [string, string]> = [
      ["/server/5f0c2a1e", "server.console.info.before"],
      ["/server/5f0c2a1e/files", "server.files.header"],
      ...["databases", "schedules", "users", "backups", "network", "startup", "settings"].map((name) => [`/server/5f0c2a1e/${name}`, `server.${name}.before`] as const),
      ["/server/5f0c2a1e/schedules/1", "server.schedules.edit.before"],
      ["/server/5f0c2a1e/files/edit", "server.files.edit.before"]
    ]
    for (const [path, slot] of pages) {
      await page.evaluate((target) => {
        history.pushState(null, "", target)
        dispatchEvent(new PopStateEvent("popstate"))
      }, path)
      await probe(page, slot).waitFor()
      await probe(page, "server.header").waitFor()
      await page.waitForFunction(() => document.querySelector(".fade-exit") === null)
      const order = await page.evaluate((wanted) => {
        const all = [...document.querySelectorAll("[data-host-slot]")].map((element) => element.getAttribute("data-host-slot"))
        return { header: all.indexOf("server.header"), before: all.indexOf(wanted) }
      }, slot)
      expect(order.header, path).toBeGreaterThanOrEqual(0)
      expect(order.before, path).toBeGreaterThan(order.header)
    }
    await close(context)
  })

  it("Extension access lives on the Users page for the owner, writes through Host, and is absent for a subuser", async () => {
    const { context, errors, page } = await open("sess-alice", "/server/5f0c2a1e/users")
    const section = page.locator('[data-host-slot="server.users.after"] .host-access')
    const view = section.locator('input[data-user="bob"][data-permission="probe.view"]')
    await view.waitFor()
    expect(await view.isChecked()).toBe(false)
    const written = page.waitForResponse((response) => response.url().endsWith(`/api/client/host/servers/5f0c2a1e/access`) && response.request().method() === "PUT")
    await view.check()
    expect((await written).status()).toBe(200)
    await page.waitForFunction(() => !(document.querySelector('input[data-user="bob"][data-permission="probe.view"]') as HTMLInputElement).disabled)
    await page.waitForFunction(() => document.querySelector(".fade-exit") === null)
    await screenshot(page, "ptero-frontend-users-access")
    // Kept by Host: a new load shows the grant.
    await page.reload()
    await section.locator('input[data-user="bob"][data-permission="probe.view"]:checked').waitFor()
    await page.setViewportSize({ width: 390, height: 844 })
    await section.waitFor()
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    await screenshot(page, "ptero-frontend-users-access-phone")
    // The address it had keeps working, with the way back to the Users page in the URL's form.
    await page.goto(`${ptero.url}/server/5f0c2a1e/ext/host/access`)
    await page.locator('[data-host-page="host/access"] input[data-user="bob"]').first().waitFor()
    await page.locator(".host-access__back").click()
    await page.waitForURL(`${ptero.url}/server/5f0c2a1e/users`)
    await section.waitFor()
    expect(errors).toEqual([])
    await close(context)

    const subuser = await open("sess-bob", "/server/5f0c2a1e/users")
    await probe(subuser.page, "server.users.after").waitFor()
    expect(await subuser.page.locator(".host-access").count()).toBe(0)
    await close(subuser.context)
  })
})
