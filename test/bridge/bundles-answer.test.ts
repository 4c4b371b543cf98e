import type { Page } from "playwright-core"
import { afterAll, beforeAll, expect, it } from "vitest"
import { runHost, tempDir } from "../support/cli.js"
import { describeBrowser, type PanelHarness, screenshot, sessionCookie, startPanel } from "../support/browser.js"
import { writeExtension } from "../support/extensions.js"
import { startStandin, type StandinPanel } from "../support/panel-pages/server.js"
import { install } from "../http/helpers.js"
import { writeMismatch } from "./extensions.js"

// Under a real panel boot.js asks the bundles in one answer, `/host/bundles.json`, and runs each text as
// its own script after the bridge, in boot order (docs/decisions.md "Under a real panel the bundles come
// in one answer"). In real Chromium on the Pterodactyl-shaped stand-in page: one request instead of one
// per bundle; a bundle that does not parse stops only itself; a bundle registering another id is still
// refused (its script is known by the id boot.js marked it with); and where the page's CSP refuses inline
// scripts, or the answer fails, the bundles load as files exactly as before.

/** A widget extension whose bundle registers `id` into dashboard.widgets with a testid of its own. */
const widget = (parent: string, id: string, order: number) =>
  writeExtension(parent, {
    id,
    version: "1.0.0",
    files: {
      "resources/frontend/dist/extension.js": `(function () {
  var h = window.React.createElement;
  window.__HOST__.sdk.createExtension({
    id: ${JSON.stringify(id)},
    slots: [{ slot: "dashboard.widgets", order: ${order}, component: function () { return h("div", { "data-testid": ${JSON.stringify(id)} }, ${JSON.stringify(id)}); } }]
  });
})();
`
    }
  })

let harness: PanelHarness
let ptero: StandinPanel

beforeAll(async () => {
  const sources = tempDir("host-bundles-answer-src-")
  harness = await startPanel({
    setup: async (root) => {
      await install(root, widget(sources.path, "test/first", 1))
      // Does not parse: a missing closing parenthesis.
      await install(root, writeExtension(sources.path, {
        id: "test/broken",
        version: "1.0.0",
        files: { "resources/frontend/dist/extension.js": "(function () { window.__brokenRan = true;\n" }
      }))
      await install(root, writeMismatch(sources.path))
      await install(root, widget(sources.path, "test/last", 3))
    }
  })
  sources.cleanup()
  ptero = await startStandin("pterodactyl", harness.url)
})

afterAll(async () => {
  await ptero?.stop()
  await harness?.stop()
})

/** Opens the dashboard signed in as alice, `prepare` set up on the page first; collects page errors and console errors. */
const dashboard = async (prepare?: (page: Page) => Promise<void>) => {
  const context = await harness.browser.newContext({ viewport: { width: 1280, height: 800 } })
  await context.addCookies([{ ...(await sessionCookie(harness.url, "alice")), url: ptero.url }])
  const page = await context.newPage()
  const pageErrors: Array<string> = []
  const consoleErrors: Array<string> = []
  page.on("pageerror", (error) => pageErrors.push(`${error.name}: ${error.message}`))
  page.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(message.text())
  })
  await prepare?.(page)
  const before = ptero.requests.length
  await page.goto(`${ptero.url}/`)
  await page.getByTestId("test/last").waitFor()
  await page.getByTestId("test/first").waitFor()
  return { context, page, pageErrors, consoleErrors, requests: () => ptero.requests.slice(before) }
}

const bundleFiles = (requests: ReadonlyArray<string>) => requests.filter((line) => /^GET \/host\/ext\/.*\/extension\.js$/.test(line))

describeBrowser("the bundles in one answer under a real panel", () => {
  it("asks one /host/bundles.json for every bundle; a bundle that does not parse stops only itself, an impostor is still refused", async () => {
    const { context, page, pageErrors, consoleErrors, requests } = await dashboard()
    expect(requests().filter((line) => line === "GET /host/bundles.json")).toHaveLength(1)
    expect(bundleFiles(requests())).toEqual([])
    // Each bundle ran as its own script, marked with its extension's id, in boot order after the bridge.
    const marked = await page.$$eval("script[data-host-extension]:not([src])", (scripts) => scripts.map((script) => (script as HTMLScriptElement).dataset.hostExtension))
    expect([...marked].sort()).toEqual(["test/broken", "test/first", "test/last", "test/mismatch"])
    expect(pageErrors).toHaveLength(1)
    expect(pageErrors[0]).toMatch(/^SyntaxError/)
    expect(await page.evaluate(() => (window as unknown as { __brokenRan?: boolean }).__brokenRan)).toBeUndefined()
    expect(consoleErrors.some((text) => text.includes("the bundle of test/mismatch registered the id \"test/impostor\""))).toBe(true)
    expect(await page.getByTestId("impostor").count()).toBe(0)
    // Boot order: first (order 1) before last (order 3) in the slot.
    const order = await page.$$eval("[data-host-slot='dashboard.widgets'] [data-testid]", (elements) => elements.map((element) => element.getAttribute("data-testid")))
    expect(order).toEqual(["test/first", "test/last"])
    await screenshot(page, "bundles-answer-ptero-dashboard")
    await page.setViewportSize({ width: 390, height: 844 })
    await screenshot(page, "bundles-answer-ptero-dashboard-phone")
    await context.close()
  })

  it("a live disable removes the widget and the script boot.js marked for it; enable brings the widget back", async () => {
    const { context, page } = await dashboard()
    const marked = (id: string) => page.locator(`script[data-host-extension="${id}"]`).count()
    expect(await marked("test/last")).toBe(1)
    const disabled = await runHost(["--root", harness.root, "disable", "test/last"])
    expect(disabled.code, disabled.stderr).toBe(0)
    await page.getByTestId("test/last").waitFor({ state: "detached", timeout: 10_000 })
    expect(await marked("test/last")).toBe(0)
    expect(await marked("test/first")).toBe(1)
    const enabled = await runHost(["--root", harness.root, "enable", "test/last"])
    expect(enabled.code, enabled.stderr).toBe(0)
    await page.getByTestId("test/last").waitFor({ timeout: 10_000 })
    await context.close()
  })

  it("where the page's CSP refuses inline scripts, the bundles load as files", async () => {
    const { context, pageErrors, requests } = await dashboard(async (page) => {
      await page.route(`${ptero.url}/`, async (route) => {
        const response = await route.fetch()
        await route.fulfill({ response, headers: { ...response.headers(), "content-security-policy": "script-src 'self'" } })
      })
    })
    expect(requests().filter((line) => line === "GET /host/bundles.json")).toEqual([])
    expect(bundleFiles(requests())).toHaveLength(4)
    expect(pageErrors.filter((text) => text.startsWith("SyntaxError"))).toHaveLength(1)
    await context.close()
  })

  it("when the answer fails, the bundles load as files", async () => {
    const { context, consoleErrors, pageErrors, requests } = await dashboard(async (page) => {
      await page.route("**/host/bundles.json?*", (route) => route.fulfill({ status: 503, body: "" }))
    })
    expect(bundleFiles(requests())).toHaveLength(4)
    expect(pageErrors.filter((text) => text.startsWith("SyntaxError"))).toHaveLength(1)
    expect(consoleErrors.filter((text) => text.includes("impostor"))).toHaveLength(1)
    await context.close()
  })
})
