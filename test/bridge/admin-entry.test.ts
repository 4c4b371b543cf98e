import { copyFileSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, expect, it } from "vitest"
import { fixture, tempDir } from "../support/cli.js"
import { describeBrowser, launchBrowser, type PanelHarness, screenshot, sessionCookie, startPanel, viewports, type ViewportName } from "../support/browser.js"
import { pterodactylAdminPage } from "../support/panel-pages/pterodactyl-admin.js"
import { startStandin, type StandinPanel } from "../support/panel-pages/server.js"
import { writePanelRoot } from "../support/panel-root.js"
import { startPelicanStandIn } from "../support/pelican-api.js"
import { machines, type PanelStandIn, people, startPanelStandIn } from "../support/pterodactyl-api.js"
import { install, type RunningServer, startServer } from "../http/helpers.js"

// Finding Host's admin screens in a real panel (docs/panels.md "Finding Host's admin screens"), in
// Chromium: the "Extensions" item /host/boot.js adds to Pterodactyl's admin sidebar (on a page shaped as
// the panel's admin layout renders, test/support/panel-pages/pterodactyl-admin.ts), the link a root admin
// gets beside the panel's admin link in the client area, and Host's admin screens under the pterodactyl
// and pelican drivers wearing the panel's name, palette and way back.

const patient = { timeout: 20_000, interval: 50 }
const shots = process.env.HOST_SHOTS_DIR

/** A screenshot under test-results/, copied to HOST_SHOTS_DIR when set (to look at). */
const shoot = async (page: Page, name: string) => {
  const file = await screenshot(page, `admin-entry-${name}`)
  if (shots !== undefined) {
    mkdirSync(shots, { recursive: true })
    copyFileSync(file, join(shots, `${name}.png`))
  }
}

describeBrowser("Host's entries in a Pterodactyl-shaped panel", () => {
  let harness: PanelHarness
  let ptero: StandinPanel
  let pelicanPanel: StandinPanel

  beforeAll(async () => {
    harness = await startPanel()
    ptero = await startStandin("pterodactyl", harness.url)
    pelicanPanel = await startStandin("pelican", harness.url)
  }, 60_000)
  afterAll(async () => {
    await ptero?.stop()
    await pelicanPanel?.stop()
    await harness?.stop()
  })

  const open = async (panel: StandinPanel, user: "admin" | "alice", path: string, viewport: ViewportName = "desktop") => {
    const context = await harness.browser.newContext({ viewport: viewports[viewport] })
    await context.addCookies([{ ...(await sessionCookie(harness.url, user)), url: panel.url }])
    const page = await context.newPage()
    const errors: Array<string> = []
    page.on("pageerror", (error) => errors.push(error.message))
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text())
    })
    await page.goto(`${panel.url}${path}`)
    return { context, page, errors }
  }

  /** The sidebar as a person reads it: each row's text, whether it is Host's, active, and where it leads. */
  const sidebar = (page: Page) =>
    page.$$eval("ul.sidebar-menu > li", (items) =>
      items.map((item) => ({
        text: (item.textContent ?? "").trim().replace(/\s+/g, " "),
        host: item.hasAttribute("data-host-admin"),
        active: item.classList.contains("active"),
        href: item.querySelector("a")?.href ?? null
      })))

  it("adds one Extensions item to the admin sidebar, after Application API, asking and loading nothing", async () => {
    const before = ptero.requests.length
    const { context, errors, page } = await open(ptero, "admin", "/admin")
    await page.locator("[data-host-admin]").waitFor()
    await page.waitForLoadState("networkidle")
    const rows = await sidebar(page)
    expect(rows.map((row) => row.text)).toEqual([
      "BASIC ADMINISTRATION", "Overview", "Settings", "Application API", "Extensions",
      "MANAGEMENT", "Databases", "Locations", "Nodes", "Servers", "Users",
      "SERVICE MANAGEMENT", "Mounts", "Nests"
    ])
    expect(rows.filter((row) => row.host)).toEqual([{ text: "Extensions", host: true, active: false, href: `${ptero.url}/admin/host/extensions` }])
    // The panel's own marking is untouched: Overview is the current page.
    expect(rows.filter((row) => row.active).map((row) => row.text)).toEqual(["Overview"])
    // Shaped as the layout's own items: an icon of the panel's icon font, then the label.
    expect(await page.locator("[data-host-admin] > a").innerHTML()).toBe(`<i class="fa fa-puzzle-piece"></i> <span>Extensions</span>`)
    // No extension code and no question to Host on the panel's admin pages: the page and boot.js only.
    expect(ptero.requests.slice(before).filter((line) => !line.endsWith("/favicon.ico"))).toEqual(["GET /admin", "GET /host/boot.js"])
    await shoot(page, "ptero-admin-sidebar-1280")
    // It leads to Host's first admin screen.
    await page.locator("[data-host-admin] > a").click()
    await page.waitForURL(`${ptero.url}/admin/host/extensions`)
    await page.getByRole("heading", { name: "Extensions" }).waitFor()
    expect(errors).toEqual([])
    await context.close()
  })

  it("marks the item active under /admin/host/ and adds it once on every admin page", async () => {
    const { context, page } = await open(ptero, "admin", "/admin/servers")
    await page.locator("[data-host-admin]").waitFor()
    expect((await sidebar(page)).filter((row) => row.active).map((row) => row.text)).toEqual(["Servers"])
    // A page of the panel's layout under /admin/host/ (the stand-in sends that prefix to Host, so the
    // layout is served here directly, as a panel would render it there).
    await page.route(`${ptero.url}/admin/host/acme/tool`, (route) =>
      route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body: pterodactylAdminPage("/admin/host/acme/tool") }))
    await page.goto(`${ptero.url}/admin/host/acme/tool`)
    await page.locator("[data-host-admin]").waitFor()
    const rows = await sidebar(page)
    expect(rows.filter((row) => row.active)).toEqual([{ text: "Extensions", host: true, active: true, href: `${ptero.url}/admin/host/extensions` }])
    // boot.js run a second time on the same page (a theme including the layout's scripts twice) adds nothing more.
    await page.addScriptTag({ url: `${ptero.url}/host/boot.js` })
    await page.waitForLoadState("networkidle")
    expect(await page.locator("[data-host-admin]").count()).toBe(1)
    await context.close()
  })

  it("on an admin page without AdminLTE's sidebar (Pelican's Filament admin) adds nothing and asks nothing", async () => {
    const before = pelicanPanel.requests.length
    const { context, errors, page } = await open(pelicanPanel, "admin", "/admin")
    await page.waitForLoadState("networkidle")
    expect(await page.locator("[data-host-admin]").count()).toBe(0)
    expect(pelicanPanel.requests.slice(before).filter((line) => !line.endsWith("/favicon.ico"))).toEqual(["GET /admin", "GET /host/boot.js"])
    expect(errors).toEqual([])
    await context.close()
  })

  it("gives a root admin an Extensions link right after the panel's admin link, kept through remounts and navigation", async () => {
    for (const viewport of ["desktop", "phone"] as const) {
      const { context, errors, page } = await open(ptero, "admin", "/", viewport)
      const link = page.getByRole("link", { name: "Extensions", exact: true })
      await link.waitFor()
      // Pterodactyl's router remounts once after load: the link is back beside the admin link after it.
      await page.waitForFunction(() => ((window as unknown as { __standin?: { epoch: number } }).__standin?.epoch ?? 0) >= 1)
      const where = () =>
        page.$$eval("a[data-host-admin]", (links) =>
          links.map((element) => ({
            previous: element.previousElementSibling?.getAttribute("href") ?? null,
            parent: /NavigationBar__RightNavigation-sc-/.test(element.parentElement?.className ?? ""),
            href: element.getAttribute("href"),
            title: element.getAttribute("title")
          })))
      const expected = [{ previous: "/admin", parent: true, href: "/admin/host/extensions", title: "Extensions" }]
      await expect.poll(where, patient).toEqual(expected)
      await shoot(page, `ptero-client-admin-link-${viewport === "desktop" ? 1280 : 390}`)
      // A remount of the whole router and a client-side navigation: the same one link, in the same place.
      await page.evaluate(() => (window as unknown as { __standin: { remount: () => void } }).__standin.remount())
      await page.waitForFunction(() => (window as unknown as { __standin: { epoch: number } }).__standin.epoch >= 2)
      await expect.poll(where, patient).toEqual(expected)
      await page.getByRole("link", { name: "Account", exact: true }).click()
      await page.waitForURL(`${ptero.url}/account`)
      await expect.poll(where, patient).toEqual(expected)
      if (viewport === "desktop") {
        await link.click()
        await page.waitForURL(`${ptero.url}/admin/host/extensions`)
        await page.getByRole("heading", { name: "Extensions" }).waitFor()
      }
      expect(errors).toEqual([])
      await context.close()
    }
  })

  it("gives no such link to a user who is not a root admin", async () => {
    const { context, errors, page } = await open(ptero, "alice", "/")
    await page.waitForFunction(() => (window as unknown as { __HOST__?: { sdk?: unknown } }).__HOST__?.sdk !== undefined)
    await page.waitForFunction(() => ((window as unknown as { __standin?: { epoch: number } }).__standin?.epoch ?? 0) >= 1)
    await page.locator('[data-host-slot="navbar"]').waitFor({ state: "attached" })
    expect(await page.locator("a[data-host-admin]").count()).toBe(0)
    expect(errors).toEqual([])
    await context.close()
  })

  it("leaves the embedded panel's admin screens as they are: its own name, back to its home, its palette", async () => {
    const context = await harness.browser.newContext({ viewport: viewports.desktop })
    await context.addCookies([{ ...(await sessionCookie(harness.url, "admin")), url: harness.url }])
    const page = await context.newPage()
    await page.goto(`${harness.url}/admin/host`)
    await page.waitForURL(`${harness.url}/admin/host/extensions`)
    await page.getByRole("heading", { name: "Extensions" }).waitFor()
    const back = page.locator(".ha-user a.host-toplink")
    expect({ href: await back.getAttribute("href"), text: await back.textContent(), title: await back.getAttribute("title") })
      .toEqual({ href: "/", text: "Panel", title: "Back to the panel" })
    expect(await page.locator(".ha-app").evaluate((element) => getComputedStyle(element).backgroundColor)).toBe("rgb(11, 14, 20)")
    await context.close()
  })
})

describeBrowser("Host's admin screens under a real panel's driver", () => {
  let browser: Browser

  beforeAll(async () => {
    browser = await launchBrowser()
  })
  afterAll(async () => {
    await browser?.close()
  })

  const serve = async (kind: "pterodactyl" | "pelican") => {
    const root = tempDir(`host-admin-screens-${kind}-`)
    const panelRoot = writePanelRoot(join(root.path, "panel"), {
      version: kind === "pterodactyl" ? "1.11.8" : "1.0.0",
      appName: "Acme Games",
      sessionCookie: `${kind}_session`
    })
    await install(root.path, fixture("runtime", "probe"))
    const standIn: PanelStandIn = kind === "pterodactyl"
      ? await startPanelStandIn({ users: people, servers: machines })
      : await startPelicanStandIn({ users: people, servers: machines })
    let server: RunningServer
    try {
      server = await startServer(root.path, { env: { HOST_PANEL_DRIVER: kind, HOST_PANEL_URL: standIn.url, HOST_PANEL_ROOT: panelRoot } })
    } catch (error) {
      await standIn.close()
      root.cleanup()
      throw error
    }
    return {
      server,
      stop: async () => {
        await server.stop()
        await standIn.close()
        root.cleanup()
      }
    }
  }

  const palettes = {
    // Pterodactyl's admin area: content #33404d, header #1f2933, .btn-primary #0967d3.
    pterodactyl: { page: "rgb(51, 64, 77)", topbar: "rgb(31, 41, 51)", primary: "rgb(9, 103, 211)" },
    // Pelican (Filament, Pelican's Zinc and Blue): zinc-950, zinc-900, blue-500.
    pelican: { page: "oklch(0.141 0.005 285.823)", topbar: "oklch(0.21 0.006 285.885)", primary: "oklch(0.623 0.214 259.815)" }
  } as const

  for (const kind of ["pterodactyl", "pelican"] as const) {
    it(`under ${kind}: the panel's name, a link back to its admin area, its palette, and writes with its CSRF rule`, async () => {
      const running = await serve(kind)
      try {
        for (const viewport of ["desktop", "phone"] as const) {
          const context = await browser.newContext({ viewport: viewports[viewport] })
          // The panel's session and its XSRF-TOKEN cookie (URL-encoded, as Laravel sets it).
          await context.addCookies([
            { name: `${kind}_session`, value: "sess-admin", url: running.server.url },
            { name: "XSRF-TOKEN", value: "eyJpdiI6%3D%3D", url: running.server.url }
          ])
          const page = await context.newPage()
          const errors: Array<string> = []
          page.on("pageerror", (error) => errors.push(error.message))
          await page.goto(`${running.server.url}/admin/host/`)
          await page.waitForURL(`${running.server.url}/admin/host/extensions`)
          await page.getByTestId("disable-acme/probe").waitFor()
          expect(await page.title()).toBe("Extensions · Acme Games")
          expect(await page.locator(".ha-brand strong").textContent()).toBe("Acme Games")
          expect(await page.locator(".ha-brand").getAttribute("href")).toBe("/admin")
          const back = page.locator(".ha-user a.host-toplink")
          expect({ href: await back.getAttribute("href"), title: await back.getAttribute("title") })
            .toEqual({ href: "/admin", title: "Back to Acme Games's admin area" })
          const colours = await page.evaluate(() => ({
            page: getComputedStyle(document.querySelector(".ha-app")!).backgroundColor,
            topbar: getComputedStyle(document.querySelector(".ha-topbar")!).backgroundColor,
            primary: getComputedStyle(document.documentElement).getPropertyValue("--host-primary").trim()
          }))
          expect({ page: colours.page, topbar: colours.topbar }).toEqual({ page: palettes[kind].page, topbar: palettes[kind].topbar })
          expect(await page.evaluate((value) => {
            const probe = document.createElement("div")
            probe.style.color = value
            document.body.appendChild(probe)
            const computed = getComputedStyle(probe).color
            probe.remove()
            return computed
          }, colours.primary)).toBe(palettes[kind].primary)
          await shoot(page, `${kind}-admin-screens-${viewport === "desktop" ? 1280 : 390}`)
          if (viewport === "desktop") {
            // A change through the admin API passes the panel's CSRF rule (X-XSRF-TOKEN = the cookie).
            await page.getByTestId("disable-acme/probe").click()
            await page.getByTestId("confirm-operation").click()
            await page.getByTestId("enable-acme/probe").waitFor(patient)
            await page.getByTestId("enable-acme/probe").click()
            await page.getByTestId("confirm-operation").click()
            await page.getByTestId("disable-acme/probe").waitFor(patient)
          }
          expect(errors).toEqual([])
          await context.close()
        }
      } finally {
        await running.stop()
      }
    }, 60_000)
  }
})
