import { afterAll, beforeAll, expect, it } from "vitest"
import { slotIds } from "../../src/domain/Slots.js"
import { describeBrowser, openPage, type PanelHarness, screenshot, slotIdsOnPage, startPanel, tokens, viewports } from "../support/browser.js"

// The reference panel in real Chromium: signing in, deep links, every slot container, navigation
// without reloads, 404/403 pages, and screenshots of the main pages at desktop and phone sizes.

let panel: PanelHarness

describeBrowser("reference panel in Chromium", () => {
  beforeAll(async () => {
    panel = await startPanel()
  })

  afterAll(async () => {
    await panel?.stop()
  })

  it("signs in through the form and lands on the page a signed-out deep link asked for", async () => {
    const { context, errors, page } = await openPage(panel)
    await page.goto(`${panel.url}/server/srv-alice/files`)
    expect(new URL(page.url()).pathname).toBe("/auth/login")
    expect(new URL(page.url()).searchParams.get("redirect")).toBe("/server/srv-alice/files")
    await screenshot(page, "panel-sign-in-1280x800")
    // A wrong token keeps the user on the form, told why, with the way back kept.
    await page.fill("input[name=username]", "alice")
    await page.fill("input[name=password]", "not-the-token")
    await Promise.all([page.waitForLoadState("load"), page.click("button[type=submit]")])
    expect(await page.textContent("[role=alert]")).toContain("Unknown username or wrong token")
    expect(await page.inputValue("input[name=redirect]")).toBe("/server/srv-alice/files")
    errors.length = 0
    await page.fill("input[name=password]", tokens.alice)
    await Promise.all([page.waitForURL(`${panel.url}/server/srv-alice/files`), page.click("button[type=submit]")])
    await page.waitForSelector("[data-testid=file-list]")
    expect(await page.textContent("h1")).toContain("Alice's server")
    expect(errors).toEqual([])
    await context.close()
  })

  it("has a container for each of the 65 slots on some page", async () => {
    const found = new Set<string>()
    const signedOut = await openPage(panel, { path: "/auth/login" })
    for (const id of await slotIdsOnPage(signedOut.page)) found.add(id)
    await signedOut.context.close()
    const { context, errors, page } = await openPage(panel, { user: "admin" })
    const paths = [
      ["/", "[data-testid=server-list]"],
      ["/server/srv-alice", ".host-terminal"],
      ["/server/srv-alice/files", "[data-testid=file-list]"],
      ["/server/srv-alice/files/edit/server.properties", ".host-editor"],
      ["/server/srv-alice/databases", "[data-host-slot='server.databases.before']"],
      ["/server/srv-alice/schedules", "[data-testid=schedule-list]"],
      ["/server/srv-alice/schedules/1", "[data-host-slot='server.schedules.edit.before']"],
      ["/server/srv-alice/users", "[data-host-slot='server.users.before']"],
      ["/server/srv-alice/backups", "[data-testid=backup-list]"],
      ["/server/srv-alice/network", "[data-host-slot='server.network.before']"],
      ["/server/srv-alice/startup", "[data-host-slot='server.startup.before']"],
      ["/server/srv-alice/settings", "[data-host-slot='server.settings.before']"],
      ["/account", "[data-host-slot='account.overview.before']"],
      ["/account/api", "[data-host-slot='account.api.before']"],
      ["/account/ssh", "[data-host-slot='account.ssh.before']"]
    ] as const
    for (const [path, ready] of paths) {
      await page.goto(`${panel.url}${path}`)
      await page.waitForSelector(ready, { state: "attached" })
      const ids = await slotIdsOnPage(page)
      for (const id of ids) found.add(id)
      // The top bar's slots are on every page, and each area's outlet on every page of the area.
      expect(ids, path).toEqual(expect.arrayContaining(["navbar", "navbar.left", "navbar.before", "navbar.after"]))
      if (path.startsWith("/server/")) expect(ids, path).toEqual(expect.arrayContaining(["server.page", "server.subnav", "server.header", "server.footer"]))
      if (path.startsWith("/account")) expect(ids, path).toEqual(expect.arrayContaining(["account.page", "account.subnav", "account.header"]))
      if (path === "/" || path.startsWith("/ext/")) expect(ids, path).toContain("dashboard.page")
    }
    expect([...found].sort()).toEqual([...slotIds].sort())
    expect(errors).toEqual([])
    await context.close()
  })

  it("gives per-row slots their row's context and keeps dropdown slots in hidden menus until opened", async () => {
    const { context, page } = await openPage(panel, { user: "alice", path: "/" })
    await page.waitForSelector("[data-testid=server-list]")
    const rows = await page.$$eval("[data-host-slot='dashboard.serverrow.limits']", (elements) =>
      elements.map((element) => JSON.parse(element.getAttribute("data-host-context") ?? "null") as unknown))
    expect(rows).toEqual([{ server: { uuid: "srv-alice", name: "Alice's server" } }])
    await page.goto(`${panel.url}/server/srv-alice/files`)
    await page.waitForSelector("[data-testid=file-list]")
    const dropdowns = page.locator("[data-host-slot='server.files.dropdown']")
    expect(await dropdowns.count()).toBeGreaterThan(3)
    const contexts = await dropdowns.evaluateAll((elements) => elements.map((element) => JSON.parse(element.getAttribute("data-host-context") ?? "null") as { file: { name: string } }))
    expect(contexts.map((entry) => entry.file.name)).toContain("server.properties")
    const menu = page.locator("[role=menu]").filter({ has: page.locator("[data-host-slot='server.files.dropdown']") }).first()
    expect(await menu.isHidden()).toBe(true)
    await page.click("button[aria-label='Actions for config']")
    await menu.waitFor({ state: "visible" })
    expect(await page.getAttribute("button[aria-label='Actions for config']", "aria-expanded")).toBe("true")
    // The first entry takes the focus; Escape closes the menu and gives it back to the button.
    await page.waitForFunction(() => document.activeElement?.getAttribute("role") === "menuitem")
    await page.keyboard.press("Escape")
    await menu.waitFor({ state: "hidden" })
    expect(await page.getAttribute("button[aria-label='Actions for config']", "aria-expanded")).toBe("false")
    expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("Actions for config")
    await context.close()
  })

  it("navigates between panel pages without reloading, and tells the bridge each new context", async () => {
    const { context, errors, page } = await openPage(panel, { user: "alice", path: "/" })
    await page.waitForSelector("[data-testid=server-list]")
    await page.evaluate(() => {
      const host = (window as unknown as { __HOST__: { setContext?: (context: unknown) => void } }).__HOST__
      const previous = host.setContext
      const calls: Array<unknown> = []
      Object.assign(window, { __panelMarker: "still here", __contextCalls: calls })
      host.setContext = (context) => {
        calls.push(JSON.parse(JSON.stringify(context)))
        previous?.(context)
      }
    })
    const steps = [
      ["a[aria-label=\"Open Alice's server\"]", "/server/srv-alice", ".host-terminal"],
      [".host-subnav a[href$='/files']", "/server/srv-alice/files", "[data-testid=file-list]"],
      ["a[href$='/files/edit/server.properties']", "/server/srv-alice/files/edit/server.properties", ".host-editor"],
      [".host-subnav a[href$='/schedules']", "/server/srv-alice/schedules", "[data-testid=schedule-list]"],
      ["a[href$='/schedules/1']", "/server/srv-alice/schedules/1", "[data-host-slot='server.schedules.edit.before']"],
      ["a.host-toplink[href='/account']", "/account", "[data-host-slot='account.overview.before']"],
      [".host-subnav a[href='/account/ssh']", "/account/ssh", "[data-host-slot='account.ssh.before']"],
      ["a.host-toplink[href='/']", "/", "[data-testid=server-list]"]
    ] as const
    for (const [link, path, ready] of steps) {
      await page.click(link)
      await page.waitForURL(`${panel.url}${path}`)
      await page.waitForSelector(ready, { state: "attached" })
      expect(await page.evaluate(() => (window as unknown as { __panelMarker?: string }).__panelMarker), path).toBe("still here")
    }
    // Back and forward are History API navigations too.
    await page.goBack()
    await page.waitForURL(`${panel.url}/account/ssh`)
    expect(await page.evaluate(() => (window as unknown as { __panelMarker?: string }).__panelMarker)).toBe("still here")
    const calls = await page.evaluate(() => (window as unknown as { __contextCalls: Array<{ server: { uuid: string } | null; user: { username: string } }> }).__contextCalls)
    expect(calls.length).toBeGreaterThanOrEqual(steps.length)
    expect(calls[0]).toEqual({
      server: { uuid: "srv-alice", name: "Alice's server", permissions: ["*"], isOwner: true },
      user: { id: 2, username: "alice", email: "alice@example.test", admin: false }
    })
    expect(calls.at(-1)).toMatchObject({ server: null, user: { username: "alice" } })
    expect(errors).toEqual([])
    // Signing out from the user menu ends the session: the panel sends the user to sign in again.
    await page.click("[data-testid=user-menu]")
    await Promise.all([page.waitForURL(`${panel.url}/auth/login`), page.click("text=Sign out")])
    await page.goto(`${panel.url}/account`)
    expect(new URL(page.url()).pathname).toBe("/auth/login")
    await context.close()
  })

  it("shows a server's pages at once, from the bootstrap or the dashboard's list, while its detail loads", async () => {
    const { context, page } = await openPage(panel, { user: "alice" })
    // Records whether the "Loading server…" placeholder is ever in the document.
    await page.addInitScript(() => {
      const seen = { loading: false }
      Object.assign(window, { __seen: seen })
      new MutationObserver(() => {
        if (document.body?.textContent?.includes("Loading server…")) seen.loading = true
      }).observe(document, { childList: true, subtree: true, characterData: true })
    })
    await page.goto(`${panel.url}/server/srv-alice/users`)
    await page.waitForSelector("[data-host-slot='server.users.before']", { state: "attached" })
    expect(await page.textContent("main")).toContain("bob")
    expect(await page.evaluate(() => (window as unknown as { __seen: { loading: boolean } }).__seen.loading), "direct load").toBe(false)
    await page.click("a.host-toplink[href='/']")
    await page.waitForSelector("[data-testid=server-list]")
    await page.click("a[aria-label=\"Open Alice's server\"]")
    await page.waitForSelector(".host-terminal")
    expect(await page.evaluate(() => (window as unknown as { __seen: { loading: boolean } }).__seen.loading)).toBe(false)
    await context.close()
  })

  it("shows the 404 page for a server the user may not see and for unknown paths, and the 403 page for a page without permission", async () => {
    const { context, page } = await openPage(panel, { user: "bob" })
    for (const path of ["/server/srv-other", "/server/srv-other/files", "/nope", "/server/srv-alice/nope"]) {
      const response = await page.goto(`${panel.url}${path}`)
      expect(response?.status(), path).toBe(404)
      await page.waitForSelector("[data-host-error='404']")
      expect(await page.textContent("body"), path).not.toContain("Someone else")
    }
    // The page of an extension that is not enabled: status 404, the bridge's say in the outlet.
    const extensionPage = await page.goto(`${panel.url}/ext/acme/not-installed/page`)
    expect(extensionPage?.status()).toBe(404)
    await page.waitForSelector("[data-host-slot='dashboard.page']", { state: "attached" })
    // bob is a subuser of srv-alice with probe.view only: the console, and no other section.
    await page.goto(`${panel.url}/server/srv-alice`)
    await page.waitForSelector(".host-terminal")
    const sections = await page.$$eval(".host-subnav > a", (links) => links.map((link) => link.textContent?.trim()))
    expect(sections).toEqual(["Console"])
    await page.goto(`${panel.url}/server/srv-alice/files`)
    await page.waitForSelector("[data-host-error='403']")
    expect(await page.textContent("[data-host-error='403']")).toContain("file.read")
    expect(await page.locator("[data-host-slot='server.files.header']").count()).toBe(0)
    // No admin link for a non-admin; admins get one.
    expect(await page.locator("a[href='/admin/host/extensions']").count()).toBe(0)
    await context.close()
    const admin = await openPage(panel, { user: "admin", path: "/" })
    await admin.page.waitForSelector("[data-testid=server-list]")
    expect(await admin.page.locator("a.host-toplink[href='/admin/host/extensions']").count()).toBe(1)
    // Admins see every server; the filter narrows the list by name.
    expect(await admin.page.locator("[data-server]").count()).toBe(2)
    await admin.page.fill("input[aria-label='Filter servers']", "someone")
    await admin.page.waitForFunction(() => document.querySelectorAll("[data-server]").length === 1)
    expect(await admin.page.$$eval("[data-server]", (rows) => rows.map((row) => row.getAttribute("data-server")))).toEqual(["srv-other"])
    await admin.page.fill("input[aria-label='Filter servers']", "zzz")
    await admin.page.waitForSelector("text=No server matches")
    expect(await admin.page.locator("[data-server]").count()).toBe(0)
    await admin.context.close()
  })

  it("fits desktop and phone screens, saving screenshots of the dashboard, the console and the files page", async () => {
    for (const viewport of ["desktop", "phone"] as const) {
      const { context, page } = await openPage(panel, { user: "alice", viewport })
      for (const [name, path, ready] of [
        ["dashboard", "/", "[data-testid=server-list]"],
        ["console", "/server/srv-alice", ".host-terminal"],
        ["files", "/server/srv-alice/files", "[data-testid=file-list]"],
        ["schedule", "/server/srv-alice/schedules/1", "[data-host-slot='server.schedules.edit.before']"],
        ["account", "/account", "[data-host-slot='account.overview.before']"],
        ["not-found", "/nope", "[data-host-error='404']"]
      ] as const) {
        await page.goto(`${panel.url}${path}`)
        await page.waitForSelector(ready, { state: "attached" })
        await page.evaluate(() => document.fonts.ready)
        // Nothing wider than the screen: the sub-navigation scrolls inside itself on a phone.
        const width = await page.evaluate(() => document.documentElement.scrollWidth)
        expect(width, `${name} at ${viewport}`).toBeLessThanOrEqual(viewports[viewport].width)
        await screenshot(page, `panel-${name}-${viewports[viewport].width}x${viewports[viewport].height}`)
      }
      await context.close()
    }
  })
})
