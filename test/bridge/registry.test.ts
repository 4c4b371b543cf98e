import type { Page } from "playwright-core"
import { afterAll, beforeAll, expect, it } from "vitest"
import { tempDir } from "../support/cli.js"
import { describeBrowser, openPage, type PanelHarness, startPanel } from "../support/browser.js"
import { install } from "../http/helpers.js"
import { writeExtension } from "../support/extensions.js"

// The registry's rules in a real page (docs/frontend.md "Registering"): several components per slot and
// their order, replacing a registration, `permission` and `when` gating (with the Notur-style booleans
// and pathStartsWith), theme priorities, the event bus, setContext following the panel, and the SDK
// major check. Registrations are made from the page (as a bundle would), against enabled extensions.

let harness: PanelHarness

const empty = (id: string) => ({
  id,
  version: "1.0.0",
  files: { "resources/frontend/dist/extension.js": `window.__HOST__.sdk.createExtension({ id: ${JSON.stringify(id)} });\n` }
})

beforeAll(async () => {
  const sources = tempDir("host-bridge-registry-")
  harness = await startPanel({
    setup: async (root) => {
      await install(root, writeExtension(sources.path, empty("test/alpha")))
      await install(root, writeExtension(sources.path, empty("test/beta")))
    }
  })
  sources.cleanup()
})

afterAll(async () => {
  await harness?.stop()
})

/** Registers from the page: `slots` items are `[slot, text, order, extra]`; components print their text. */
const register = (page: Page, id: string, slots: ReadonlyArray<readonly [string, string, number, Record<string, unknown>?]>, extra: Record<string, unknown> = {}) =>
  page.evaluate(({ extra, id, slots }) => {
    const host = (window as unknown as { __HOST__: { sdk: { createExtension: (config: unknown) => void } } }).__HOST__
    const h = (window as unknown as { React: { createElement: (...args: Array<unknown>) => unknown } }).React.createElement
    host.sdk.createExtension({
      id,
      ...extra,
      slots: slots.map(([slot, text, order, more]) => ({
        slot,
        order,
        ...more,
        component: () => h("span", { className: "probe", "data-text": text }, text)
      }))
    })
  }, { extra, id, slots })

const texts = (page: Page, slot: string) =>
  page.$$eval(`[data-host-slot='${slot}'] .probe`, (elements) => elements.map((element) => element.getAttribute("data-text")))

describeBrowser("bridge registry", () => {
  it("orders by order, then extension id, then registration order; a second createExtension replaces the first", async () => {
    const { page } = await openPage(harness, { user: "alice", path: "/" })
    await page.locator("[data-host-slot='dashboard.header']").waitFor({ state: "attached" })
    await register(page, "test/beta", [["dashboard.header", "beta-1", 1], ["dashboard.header", "beta-0a", 0], ["dashboard.header", "beta-0b", 0]])
    await register(page, "test/alpha", [["dashboard.header", "alpha-1", 1], ["dashboard.header", "alpha-5", 5]])
    await page.waitForFunction(() => document.querySelectorAll("[data-host-slot='dashboard.header'] .probe").length === 5)
    expect(await texts(page, "dashboard.header")).toEqual(["beta-0a", "beta-0b", "alpha-1", "beta-1", "alpha-5"])
    await register(page, "test/alpha", [["dashboard.header", "alpha-again", 0]])
    await page.waitForFunction(() => document.querySelectorAll("[data-host-slot='dashboard.header'] .probe").length === 4)
    expect(await texts(page, "dashboard.header")).toEqual(["alpha-again", "beta-0a", "beta-0b", "beta-1"])
    await page.context().close()
  })

  it("gates by permission and by when (area, path, booleans, pathStartsWith)", async () => {
    const { page } = await openPage(harness, { user: "bob", path: "/server/srv-alice" })
    await page.locator("[data-host-slot='server.footer']").waitFor({ state: "attached" })
    await register(page, "test/alpha", [
      ["server.footer", "always", 0],
      ["server.footer", "probe-view", 1, { permission: "probe.view" }],
      ["server.footer", "manage", 2, { permission: "full.manage" }],
      ["server.footer", "server-area", 3, { when: { area: "server" } }],
      ["server.footer", "dashboard-only", 4, { when: { dashboard: true } }],
      ["server.footer", "not-server", 5, { when: { server: false } }],
      ["server.footer", "files-only", 6, { when: { pathStartsWith: "/server/srv-alice/files" } }],
      ["server.footer", "console-path", 7, { when: { path: "/server/:uuid" } }]
    ])
    await page.waitForFunction(() => document.querySelectorAll("[data-host-slot='server.footer'] .probe").length > 0)
    expect(await texts(page, "server.footer")).toEqual(["always", "probe-view", "server-area", "console-path"])
    // Client-side navigation re-evaluates `when`.
    await page.evaluate(() => {
      history.pushState(null, "", "/server/srv-alice/files")
      dispatchEvent(new PopStateEvent("popstate"))
    })
    await page.waitForURL(`${harness.url}/server/srv-alice/files`)
    await page.waitForFunction(() => [...document.querySelectorAll("[data-host-slot='server.footer'] .probe")].some((e) => e.getAttribute("data-text") === "files-only"))
    expect(await texts(page, "server.footer")).toEqual(["always", "probe-view", "server-area", "files-only"])
    await page.context().close()
  })

  it("layers themes by priority, emits theme:changed and extension events, and warns once about another SDK major", async () => {
    const { consoleMessages, page } = await openPage(harness, { user: "alice", path: "/" })
    await page.locator("[data-host-slot='dashboard.header']").waitFor({ state: "attached" })
    const panelPrimary = await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue("--host-primary").trim())
    const events = await page.evaluate(() => {
      const host = (window as unknown as { __HOST__: { events: { on: (name: string, cb: (payload: unknown) => void) => void }; sdk: { createExtension: (config: unknown) => void } } }).__HOST__
      const seen: Array<string> = []
      ;(window as unknown as { __seen: Array<string> }).__seen = seen
      for (const name of ["extension:registered", "extension:unregistered", "theme:changed"]) host.events.on(name, (payload) => seen.push(`${name} ${JSON.stringify(payload).slice(0, 60)}`))
      host.sdk.createExtension({
        id: "test/alpha",
        theme: { variables: { primary: "#111111" }, priority: 5 },
        onDestroy: () => seen.push("onDestroy test/alpha")
      })
      host.sdk.createExtension({ id: "test/beta", theme: { variables: { "--host-primary": "#222222", danger: "#333333" }, priority: 1 } })
      return seen
    })
    expect(events.filter((event) => event.startsWith("theme:changed")).length).toBe(2)
    expect(events.filter((event) => event.startsWith("extension:registered")).length).toBe(2)
    const read = () => page.evaluate(() => {
      const style = getComputedStyle(document.documentElement)
      return [style.getPropertyValue("--host-primary").trim(), style.getPropertyValue("--host-danger").trim()]
    })
    expect(await read()).toEqual(["#111111", "#333333"])
    await page.evaluate(() => (window as unknown as { __HOST__: { registry: { unregister: (id: string) => void } } }).__HOST__.registry.unregister("test/alpha"))
    expect((await read())[0]).toBe("#222222")
    const seen = await page.evaluate(() => (window as unknown as { __seen: Array<string> }).__seen)
    expect(seen).toContain("onDestroy test/alpha")
    expect(seen).toContain(`extension:unregistered {"id":"test/alpha"}`)
    await page.evaluate(() => (window as unknown as { __HOST__: { registry: { unregister: (id: string) => void } } }).__HOST__.registry.unregister("test/beta"))
    expect((await read())[0]).toBe(panelPrimary)
    await page.evaluate(() => {
      const sdk = (window as unknown as { __HOST__: { sdk: { forBundle: (v: string) => { createExtension: (c: unknown) => void } } } }).__HOST__.sdk
      sdk.forBundle("2.0.0").createExtension({ id: "test/alpha" })
      sdk.forBundle("2.0.0").createExtension({ id: "test/alpha" })
      sdk.forBundle("1.9.0").createExtension({ id: "test/beta" })
    })
    const warnings = consoleMessages.filter((message) => message.type === "warning" && message.text.includes("@host/sdk"))
    expect(warnings.length).toBe(1)
    expect(warnings[0]!.text).toContain("test/alpha was built for @host/sdk 2.0.0")
    expect(warnings[0]!.text).toContain("provides @host/sdk 1.2.3")
    await page.context().close()
  })

  it("setContext and client-side navigation reach useServerContext, and useNavigate stays in the extension's pages", async () => {
    const { page } = await openPage(harness, { user: "alice", path: "/" })
    await page.locator("[data-host-slot='navbar.left']").waitFor({ state: "attached" })
    await page.evaluate(() => {
      const w = window as unknown as {
        React: { createElement: (...args: Array<unknown>) => unknown }
        __HOST__: { sdk: { createExtension: (config: unknown) => void; useServerContext: () => { name: string } | null; useNavigate: () => (path: string) => void } }
      }
      const h = w.React.createElement
      const sdk = w.__HOST__.sdk
      const Where = () => {
        const server = sdk.useServerContext()
        return h("span", { id: "where" }, server === null ? "no server" : server.name)
      }
      const Page = (props: { params: Record<string, string> }) => {
        const navigate = sdk.useNavigate()
        return h("button", { id: "go", onClick: () => navigate(`/item/${Number(props.params.n ?? "0") + 1}`) }, `item ${props.params.n ?? "none"}`)
      }
      sdk.createExtension({
        id: "test/beta",
        slots: [{ slot: "navbar.left", component: Where }],
        routes: [{ area: "dashboard", path: "/", name: "Beta", icon: "β", component: Page }, { area: "dashboard", path: "/item/:n", name: "Item", component: Page }]
      })
    })
    await expect(page.locator("#where").textContent()).resolves.toBe("no server")
    await page.locator("a[href='/server/srv-alice']").first().click()
    await page.waitForFunction(() => document.getElementById("where")?.textContent === "Alice's server")
    // The dashboard-area page has a link in the navbar; its page navigates within the extension.
    await page.locator("[data-host-slot='navbar'] a[data-host-extension='test/beta']").click()
    await page.waitForURL(`${harness.url}/ext/test/beta`)
    await page.locator("#go").click()
    await page.waitForURL(`${harness.url}/ext/test/beta/item/1`)
    await page.locator("#go").click()
    await page.waitForURL(`${harness.url}/ext/test/beta/item/2`)
    await expect(page.locator("#go").textContent()).resolves.toBe("item 2")
    await page.context().close()
  })

  it("account pages are linked from account.subnav; a page needing a permission the user lacks is a 403 notice and has no link", async () => {
    const define = (page: Page) =>
      page.evaluate(() => {
        const w = window as unknown as { React: { createElement: (...args: Array<unknown>) => unknown }; __HOST__: { sdk: { createExtension: (config: unknown) => void } } }
        const h = w.React.createElement
        w.__HOST__.sdk.createExtension({
          id: "test/alpha",
          routes: [
            { area: "account", path: "/", name: "Alpha settings", icon: "α", component: () => h("p", { id: "alpha-account" }, "alpha account page") },
            { area: "server", path: "/secret", name: "Secret", permission: "alpha.secret", component: () => h("p", { id: "alpha-secret" }, "secret") }
          ]
        })
      })
    const alice = await openPage(harness, { user: "alice", path: "/account" })
    await alice.page.locator("[data-host-slot='account.subnav']").waitFor({ state: "attached" })
    await define(alice.page)
    await alice.page.locator("[data-host-slot='account.subnav'] a[data-host-extension='test/alpha']").click()
    await alice.page.waitForURL(`${harness.url}/account/ext/test/alpha`)
    await alice.page.locator("#alpha-account").waitFor()
    await alice.context.close()

    const bob = await openPage(harness, { user: "bob", path: "/server/srv-alice" })
    await bob.page.locator("[data-host-slot='server.subnav']").waitFor({ state: "attached" })
    await define(bob.page)
    await bob.page.evaluate(() => {
      history.pushState(null, "", "/server/srv-alice/ext/test/alpha/secret")
      dispatchEvent(new PopStateEvent("popstate"))
    })
    await bob.page.locator("[data-host-notice='403']").waitFor()
    await expect(bob.page.locator("[data-host-notice='403']").textContent()).resolves.toContain("alpha.secret")
    expect(await bob.page.locator("#alpha-secret").count()).toBe(0)
    expect(await bob.page.locator("[data-host-slot='server.subnav'] a[data-host-extension='test/alpha']").count()).toBe(0)
    await bob.context.close()
  })
})
