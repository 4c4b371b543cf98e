import type { Page } from "playwright-core"
import { afterAll, beforeAll, expect, it } from "vitest"
import { fixture, runHost, tempDir } from "../support/cli.js"
import { describeBrowser, openPage, type PanelHarness, request, screenshot, startPanel } from "../support/browser.js"
import { install } from "../http/helpers.js"
import { writeMismatch, writeWidgets } from "./extensions.js"

// The bridge in real Chromium against `host serve` and the reference panel (docs/frontend.md): slots on
// the dashboard and per server row, containers for the page's whole life, error boundaries and
// diagnostics, isolation, the id check, public settings, permissions, extension pages and navigation,
// theme overrides, and live disable/enable from the CLI without a reload.

const privateKey = "sekret-api-key-5f1c"
let harness: PanelHarness

beforeAll(async () => {
  const sources = tempDir("host-bridge-src-")
  harness = await startPanel({
    setup: async (root) => {
      await install(root, fixture("extensions", "hello-world"))
      await install(root, fixture("extensions", "full"))
      await install(root, writeWidgets(sources.path))
      await install(root, writeMismatch(sources.path))
    }
  })
  sources.cleanup()
  const saved = await request(`${harness.url}/admin/host/api/extensions/acme/full/settings`, {
    as: "admin",
    method: "PUT",
    body: { api_key: privateKey }
  })
  expect(saved.status, saved.text).toBe(200)
})

afterAll(async () => {
  await harness?.stop()
})

/** Marks the document; a full reload loses the mark. */
const mark = (page: Page) => page.evaluate(() => ((window as unknown as { __mark: number }).__mark = 42))
const marked = (page: Page) => page.evaluate(() => (window as unknown as { __mark?: number }).__mark === 42)

describeBrowser("bridge in the reference panel", () => {
  it("renders components in a dashboard slot, and per server row with that row's server in context", async () => {
    const { page } = await openPage(harness, { user: "alice", path: "/" })
    await page.getByTestId("good").waitFor()
    await expect(page.getByTestId("good").textContent()).resolves.toBe("Good widget of test/widgets in dashboard")
    await page.locator(".hello-world").waitFor()
    await expect(page.locator(".hello-world").textContent()).resolves.toContain("Signed in as alice.")
    // Per row: each row container's own server reaches its component.
    await page.getByTestId("row").first().waitFor()
    const rows = await page.$$eval("[data-host-slot='dashboard.serverrow.name.after']", (containers) =>
      containers.map((container) => ({
        expected: (JSON.parse(container.getAttribute("data-host-context") ?? "{}") as { server?: { uuid?: string } }).server?.uuid,
        rendered: container.querySelector("[data-testid=row]")?.getAttribute("data-server")
      })))
    expect(rows.length).toBeGreaterThanOrEqual(1)
    for (const row of rows) expect(row.rendered).toBe(row.expected)
    expect(new Set(rows.map((row) => row.rendered)).size).toBe(rows.length)
    // acme/full's per-row badge, inside its isolation root.
    await page.locator(".host-ext--acme-full .full-row-badge").first().waitFor()
    await page.getByTestId("full-stats").waitFor()
    await screenshot(page, "bridge-dashboard")
    await page.context().close()
  })

  it("a throwing component shows its notice, its neighbour renders, and the error reaches diagnostics and host status", async () => {
    const { page } = await openPage(harness, { user: "alice" })
    const reported = page.waitForResponse((response) => response.url().endsWith("/api/client/host/diagnostics") && response.request().method() === "POST")
    await page.goto(`${harness.url}/`)
    const notice = page.locator(".host-ext-error[data-host-error='test/widgets']")
    await notice.waitFor()
    await expect(notice.textContent()).resolves.toContain("Boom: this widget always fails")
    await page.getByTestId("good").waitFor()
    // The notice comes first (order 1), the neighbour after it (order 2), both in one slot.
    const order = await page.$$eval("[data-host-slot='dashboard.widgets'] > *", (children) =>
      children.map((child) => child.getAttribute("data-host-error") ?? child.getAttribute("data-testid") ?? child.className))
    expect(order.indexOf("test/widgets")).toBeLessThan(order.indexOf("good"))
    const errors = await page.evaluate(() => (window as unknown as { __HOST__: { diagnostics: { errors: Array<{ extensionId: string; message: string }> } } }).__HOST__.diagnostics.errors)
    expect(errors.some((error) => error.extensionId === "test/widgets" && error.message.includes("Boom"))).toBe(true)
    expect((await reported).status()).toBe(202)
    const status = await runHost(["--root", harness.root, "status", "--json"])
    const report = JSON.parse(status.stdout) as { frontendErrors: Record<string, Array<{ message: string; user: string; count: number }>> }
    expect(report.frontendErrors["test/widgets"]?.[0]).toMatchObject({ message: "Boom: this widget always fails", user: "alice" })
    const text = await runHost(["--root", harness.root, "status"])
    expect(text.stdout).toContain("Recent frontend errors:")
    expect(text.stdout).toContain("Boom: this widget always fails")
    const admin = await request(`${harness.url}/admin/host/api/extensions`, { as: "admin" })
    const listed = (admin.json as { data: Array<{ id: string; frontendErrors: Array<{ message: string }> }> }).data
    expect(listed.find((extension) => extension.id === "test/widgets")?.frontendErrors[0]?.message).toBe("Boom: this widget always fails")
    await page.context().close()
  })

  it("an id that differs from the manifest's is refused with both ids named, and renders nothing", async () => {
    const { consoleMessages, page } = await openPage(harness, { user: "alice", path: "/" })
    await page.getByTestId("good").waitFor()
    const refusal = consoleMessages.find((message) => message.type === "error" && message.text.includes("createExtension refused"))
    expect(refusal?.text).toContain("test/mismatch")
    expect(refusal?.text).toContain("test/impostor")
    expect(await page.getByTestId("impostor").count()).toBe(0)
    await page.context().close()
  })

  it("useExtensionConfig shows public settings and never a private one; CSS isolation wraps the component", async () => {
    const { page } = await openPage(harness, { user: "alice", path: "/" })
    const config = page.getByTestId("full-config")
    await config.waitFor()
    const text = await config.textContent()
    expect(text).toContain("compact")
    expect(text).toContain("every 30 s")
    expect(text).toContain("#3366ff")
    expect(await page.content()).not.toContain(privateKey)
    const settings = await page.evaluate(async () => (await fetch("/api/client/host/extensions/acme/full/settings")).text())
    expect(settings).not.toContain(privateKey)
    expect(await page.locator(".host-ext--acme-full[data-host-extension='acme/full'] [data-testid=full-stats]").count()).toBe(1)
    // The isolated stylesheet applies inside the root only.
    const border = await page.getByTestId("full-stats").evaluate((element) => getComputedStyle(element).borderTopStyle)
    expect(border).toBe("solid")
    await page.context().close()
  })

  it("usePermission hides a component from a subuser without the permission", async () => {
    const owner = await openPage(harness, { user: "alice", path: "/server/srv-alice" })
    await owner.page.getByTestId("full-manage").waitFor()
    await screenshot(owner.page, "bridge-server-console")
    await owner.context.close()
    const subuser = await openPage(harness, { user: "bob", path: "/server/srv-alice" })
    // The sidebar container is there and bob's other slots render; the card is not.
    await subuser.page.locator("[data-host-slot='server.console.sidebar']").waitFor({ state: "attached" })
    await subuser.page.locator("[data-host-slot='server.subnav'] a[data-host-extension='acme/full']").waitFor()
    expect(await subuser.page.getByTestId("full-manage").count()).toBe(0)
    // useExtensionApi reports the server's own error text: bob lacks full.view for the dashboard stats.
    await subuser.page.goto(`${harness.url}/`)
    await subuser.page.getByText("Stats unavailable: this needs the permission full.view").waitFor()
    await subuser.context.close()
  })

  it("an extension page in the server area is reachable from the sub-navigation and useNavigate moves within it", async () => {
    const { page } = await openPage(harness, { user: "alice", path: "/server/srv-alice" })
    await mark(page)
    const link = page.locator("[data-host-slot='server.subnav'] a[data-host-extension='acme/full']")
    await link.click()
    await page.waitForURL(`${harness.url}/server/srv-alice/ext/acme/full`)
    await page.getByTestId("full-overview").waitFor()
    await expect(link.getAttribute("aria-current")).resolves.toBe("page")
    await page.getByRole("tab", { name: "Activity" }).click()
    await page.waitForURL(`${harness.url}/server/srv-alice/ext/acme/full/activity`)
    await page.getByTestId("full-activity").waitFor()
    await screenshot(page, "bridge-extension-page")
    expect(await marked(page)).toBe(true)
    await page.goBack()
    await page.getByTestId("full-overview").waitFor()
    expect(await marked(page)).toBe(true)
    await page.context().close()
  })

  it("an extension page path no enabled extension serves shows a 404 notice", async () => {
    const { page } = await openPage(harness, { user: "alice", path: "/server/srv-alice/ext/acme/nothing" })
    await page.locator("[data-host-notice='404']").waitFor()
    await page.context().close()
  })

  it("still renders after navigating away and back several times, and in a container that appears after 30 s", async () => {
    const { page } = await openPage(harness, { user: "alice", path: "/", clock: true })
    await page.getByTestId("good").waitFor()
    await mark(page)
    const mountedOnDashboard = await page.evaluate(() => (window as unknown as { __HOST__: { diagnostics: { containers: () => number } } }).__HOST__.diagnostics.containers())
    for (let round = 0; round < 4; round++) {
      await page.locator(`a[href='/server/srv-alice']`).first().click()
      await page.waitForURL(`${harness.url}/server/srv-alice`)
      await page.getByTestId("full-manage").waitFor()
      expect(await page.getByTestId("good").count()).toBe(0)
      await page.locator("a.host-toplink[href='/']").first().click()
      await page.waitForURL(`${harness.url}/`)
      await page.getByTestId("good").waitFor()
      await page.getByTestId("row").first().waitFor()
    }
    expect(await marked(page)).toBe(true)
    // Containers of the pages left behind were unmounted, not kept: back on the dashboard, as many as at first.
    await page.waitForFunction((count) => (window as unknown as { __HOST__: { diagnostics: { containers: () => number } } }).__HOST__.diagnostics.containers() === count, mountedOnDashboard)
    // The test is about time: the page stays open past 30 s before its new container appears. The
    // page's clock is moved (every timer due in those 31 s runs) instead of the test waiting them out.
    await page.clock.runFor(31_000)
    await page.evaluate(() => {
      const container = document.createElement("div")
      container.setAttribute("data-host-slot", "test.late")
      container.id = "late-container"
      document.body.appendChild(container)
    })
    await page.locator("#late-container [data-testid=late]").waitFor({ timeout: 5_000 })
    // Removed containers unmount; a re-created one renders again.
    const containers = () => page.evaluate(() => (window as unknown as { __HOST__: { diagnostics: { containers: () => number } } }).__HOST__.diagnostics.containers())
    const before = await containers()
    await page.evaluate(() => document.getElementById("late-container")?.remove())
    await page.waitForFunction((count) => (window as unknown as { __HOST__: { diagnostics: { containers: () => number } } }).__HOST__.diagnostics.containers() === count - 1, before)
    await page.evaluate(() => {
      const container = document.createElement("div")
      container.setAttribute("data-host-slot", "test.late")
      container.id = "late-again"
      document.body.appendChild(container)
    })
    await page.locator("#late-again [data-testid=late]").waitFor({ timeout: 5_000 })
    await page.context().close()
  }, 90_000)

  it("a new container holds its components before the task that added it ends (no scheduler task or frame in between)", async () => {
    const { page } = await openPage(harness, { user: "alice", path: "/" })
    await page.getByTestId("good").waitFor()
    // Only microtasks run between adding the container and reading it: the container watcher's
    // MutationObserver callback is one; a root render left to React's scheduler would be a later task.
    const rendered = await page.evaluate(async () => {
      const container = document.createElement("div")
      container.setAttribute("data-host-slot", "test.late")
      document.body.appendChild(container)
      for (let step = 0; step < 5; step++) await Promise.resolve()
      return container.querySelector("[data-testid=late]") !== null
    })
    expect(rendered).toBe(true)
    await page.context().close()
  })

  it("a theme override changes a computed colour", async () => {
    const { page } = await openPage(harness, { user: "alice", path: "/" })
    await page.getByTestId("full-stats").waitFor()
    const colour = await page.evaluate(() => {
      const probe = document.createElement("span")
      probe.style.color = "var(--host-primary)"
      document.body.appendChild(probe)
      return getComputedStyle(probe).color
    })
    // acme/full sets primary to #8b5cf6 over the panel's own value.
    expect(colour).toBe("rgb(139, 92, 246)")
    const theme = await page.evaluate(() => (window as unknown as { __HOST__: { theme: { get: () => Record<string, string> } } }).__HOST__.theme.get())
    expect(theme["--host-primary"]).toBe("#8b5cf6")
    await page.context().close()
  })

  it("host disable removes a component from an open page within 3 s without a reload; enable brings it back", async () => {
    const { page } = await openPage(harness, { user: "alice", path: "/" })
    await page.getByTestId("good").waitFor()
    await page.getByTestId("full-stats").waitFor()
    await mark(page)
    const primary = () => page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue("--host-primary").trim())
    expect(await primary()).toBe("#8b5cf6")
    const disabled = await runHost(["--root", harness.root, "disable", "test/widgets"])
    expect(disabled.code, disabled.stderr).toBe(0)
    const started = Date.now()
    await page.getByTestId("good").waitFor({ state: "detached", timeout: 3_000 })
    expect(Date.now() - started).toBeLessThan(3_000)
    expect(await page.locator(".host-ext-error[data-host-error='test/widgets']").count()).toBe(0)
    const enabled = await runHost(["--root", harness.root, "enable", "test/widgets"])
    expect(enabled.code, enabled.stderr).toBe(0)
    await page.getByTestId("good").waitFor({ timeout: 3_000 })
    // A disabled theme extension takes its theme with it.
    const off = await runHost(["--root", harness.root, "disable", "acme/full", "--force"])
    expect(off.code, off.stderr).toBe(0)
    await page.getByTestId("full-stats").waitFor({ state: "detached", timeout: 3_000 })
    // Back to the reference panel's own primary (src/panel-app/panel.css), not just "some other colour".
    expect(await primary()).toBe("#6d7cff")
    const on = await runHost(["--root", harness.root, "enable", "acme/full"])
    expect(on.code, on.stderr).toBe(0)
    await page.getByTestId("full-stats").waitFor({ timeout: 3_000 })
    expect(await primary()).toBe("#8b5cf6")
    expect(await marked(page)).toBe(true)
    await page.context().close()
  }, 60_000)
})
