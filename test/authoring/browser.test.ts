import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { describeBrowser, openPage, type PanelHarness, screenshot, startPanel } from "../support/browser.js"
import { hostBin, tempDir } from "../support/cli.js"
import { mustRun, scaffold } from "./helpers.js"

// The scaffold → panel round trip in real Chromium: a `host new --preset full` extension, built and
// linked with `host dev`, shows its dashboard.widgets component with the data of its own route, its
// server page opens from the server's sub-navigation, and with `host dev --watch` a saved change to the
// component shows in the open page without a reload.

describeBrowser("a scaffold in the panel (Chromium)", () => {
  const work = tempDir("host-authoring-browser-")
  let path = ""
  let harness: PanelHarness
  let dev: ChildProcess | undefined

  beforeAll(async () => {
    path = (await scaffold(work.path, "acme/hello-panel", "--preset", "full")).path
    await mustRun(["build", path])
    // The server polls every 10 minutes: anything seen sooner came through the dev signal.
    harness = await startPanel({
      pollMs: 600_000,
      setup: async (root) => {
        await mustRun(["--root", root, "dev", path, "--link"])
      }
    })
  }, 120_000)

  afterAll(async () => {
    if (dev !== undefined && dev.exitCode === null) dev.kill("SIGKILL")
    await harness?.stop()
    work.cleanup()
  })

  const widget = '[data-host-slot="dashboard.widgets"] [data-testid="acme-hello-panel-widget"]'

  it("shows the widget in dashboard.widgets with the data of its own route", async () => {
    const { context, errors, page } = await openPage(harness, { user: "alice", path: "/" })
    try {
      await page.locator(widget).getByText("Hello, alice!").waitFor({ timeout: 15_000 })
      expect(await page.locator(widget).locator("h3").textContent()).toBe("Hello Panel")
      await page.locator(widget).getByText("(0 visits)").waitFor({ timeout: 5_000 })
      // The button posts through useExtensionApi (session cookie + CSRF header) and shows the new count.
      await page.locator(widget).getByRole("button", { name: "Say hello" }).click()
      await page.locator(widget).getByText("(1 visit)").waitFor({ timeout: 5_000 })
      await screenshot(page, "authoring-widget-desktop")
      await page.setViewportSize({ width: 390, height: 844 })
      await screenshot(page, "authoring-widget-phone")
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  })

  it("opens its server page from the server's sub-navigation", async () => {
    const { context, errors, page } = await openPage(harness, { user: "alice", path: "/server/srv-alice" })
    try {
      await page.locator('[data-host-slot="server.subnav"] a', { hasText: "Hello Panel" }).first().click()
      await page.waitForURL(/\/server\/srv-alice\/ext\/acme\/hello-panel/)
      const pageBody = page.locator('[data-host-slot="server.page"] [data-testid="acme-hello-panel-server-page"]')
      await pageBody.getByText("Alice's server is looked after by Hello Panel.").waitFor({ timeout: 15_000 })
      expect(await pageBody.locator("h2").textContent()).toBe("Hello Panel · Alice's server")
      await screenshot(page, "authoring-server-page-desktop")
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  })

  it("with host dev --watch, a saved change shows in the open page without a reload", async () => {
    let output = ""
    dev = spawn(process.execPath, [hostBin, "--root", harness.root, "dev", path, "--watch"], { stdio: ["ignore", "pipe", "pipe"] })
    dev.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
    dev.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
    const { context, errors, page } = await openPage(harness, { user: "alice", path: "/" })
    try {
      await page.locator(widget).getByText("Hello, alice!").waitFor({ timeout: 15_000 })
      await expect.poll(() => output, { timeout: 15_000 }).toContain("Watching ")
      // A page that reloads loses this marker.
      await page.evaluate(() => Object.assign(window, { __authoringMarker: "still here" }))
      const file = join(path, "resources", "frontend", "src", "components", "HelloPanelWidget.tsx")
      writeFileSync(file, readFileSync(file, "utf8").replace(">Hello Panel</h3>", ">Hello Panel, live</h3>"))
      await page.locator(widget).locator("h3", { hasText: "Hello Panel, live" }).waitFor({ timeout: 10_000 })
      // The component remounted with its data, on the same page.
      await page.locator(widget).getByText(/Hello, alice!/).waitFor({ timeout: 10_000 })
      expect(await page.evaluate(() => (window as unknown as { __authoringMarker?: string }).__authoringMarker)).toBe("still here")
      await screenshot(page, "authoring-live-edit-desktop")
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  })
})
