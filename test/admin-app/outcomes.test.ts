import { copyFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, expect, it } from "vitest"
import { request } from "../http/helpers.js"
import { entryFor, exportArchives, index, writeIndex } from "../registry/helpers.js"
import { describeBrowser, openPage, type PanelHarness, screenshot, startPanel, type ViewportName } from "../support/browser.js"
import { fixture, runHost, tempDir } from "../support/cli.js"

// Update all and the registry of each installed extension on the admin screens, in real Chromium against
// a real `host serve` (docs/admin.md; docs/registry.md "Several registries"). Two extensions installed
// from the registry `official` have updates; one update's archive does not match its listed sha256. The
// screen reads the server's UpdateOutcomes (usecases/Views.ts): the update that went through, and apart
// from it, as an error, the one that failed with the server's reason. An Apply of the desired state that
// stops on an update whose migration fails answers 422 with its plan (the contract's second success of
// reconcile), and the screen says which action failed and why.

const patient = { timeout: 20_000, interval: 50 }
const work = tempDir("host-admin-update-all-")
let harness: PanelHarness

beforeAll(async () => {
  const registryDir = join(work.path, "official")
  const archives = await exportArchives(registryDir, [
    { fixture: "hello-world" },
    { fixture: "hello-world", version: "1.1.0" },
    { fixture: "full" },
    { fixture: "full", version: "1.3.0" }
  ])
  const full = entryFor(archives, "acme/full")
  writeIndex(registryDir, index([
    entryFor(archives, "acme/hello-world"),
    // 1.3.0's listed checksum is not its archive's: its update fails when the download is verified.
    { ...full, sha256: { ...(full.sha256 as Record<string, string>), "1.3.0": "0".repeat(64) } }
  ]))
  harness = await startPanel({
    setup: async (root) => {
      mkdirSync(join(root, "config"), { recursive: true })
      writeFileSync(join(root, "config", "host.yaml"), `registries:\n  - {name: official, url: file://${registryDir}}\n`)
      for (const reference of ["acme/hello-world@1.0.0", "acme/full@1.2.0"]) {
        const added = await runHost(["add", reference, "--root", root])
        if (added.code !== 0) throw new Error(`host add ${reference}: ${added.stderr}`)
      }
    }
  })
}, 180_000)

afterAll(async () => {
  await harness?.stop()
  work.cleanup()
})

/** Keeps a copy of a screenshot where the session's notes collect them (HOST_TEST_SHOTS). */
const shot = async (page: Page, name: string) => {
  const file = await screenshot(page, name)
  const shots = process.env.HOST_TEST_SHOTS
  if (shots === undefined) return
  mkdirSync(shots, { recursive: true })
  copyFileSync(file, join(shots, `${name}.png`))
}

/** Fails when the page is wider than its viewport (something does not wrap on a phone). */
const fitsWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)

describeBrowser("Update all and each extension's registry on the admin screens", () => {
  it("names each installed extension's registry on the list and its detail", async () => {
    for (const viewport of ["desktop", "phone"] as const satisfies ReadonlyArray<ViewportName>) {
      const { context, errors, page } = await openPage(harness, { user: "admin", path: "/admin/host/extensions", viewport })
      const source = (id: string) => page.locator(`tr[data-extension="${id}"] td[data-label="Source"]`)
      await expect.poll(() => source("acme/hello-world").textContent(), patient).toBe("registry · official")
      expect(await source("acme/full").textContent()).toBe("registry · official")
      expect(await fitsWidth(page)).toBe(true)
      await shot(page, `extensions-registry-${viewport}`)

      await page.goto(`${harness.url}/admin/host/extensions/acme/full`)
      await expect.poll(() => page.getByTestId("source-registry").textContent(), patient).toBe("From the registry official")
      expect(await fitsWidth(page)).toBe(true)
      await shot(page, `detail-registry-${viewport}`)

      await page.goto(`${harness.url}/admin/host/registry`)
      await expect.poll(() => page.locator("[data-entry]").count(), patient).toBe(2)
      expect(await page.locator("[data-entry]").evaluateAll((items) => items.map((item) => item.getAttribute("data-registry")))).toEqual(["official", "official"])
      expect(await page.locator(".ha-page-head").textContent()).toContain("From the registry official, file://")
      expect(await fitsWidth(page)).toBe(true)
      await shot(page, `registry-entries-${viewport}`)
      expect(errors, errors.join("\n")).toEqual([])
      await context.close()
    }
  })

  it("shows the update that went through, and the one that failed as an error with the server's reason", async () => {
    const { context, errors, page } = await openPage(harness, { user: "admin", path: "/admin/host/extensions" })
    await page.getByRole("button", { name: "Update all (2)" }).click()
    await page.locator("dialog[open]").getByRole("button", { name: "Update all" }).click()

    const updated = page.getByTestId("update-all-updated")
    await expect.poll(() => updated.locator("li").allTextContents(), patient).toEqual(["acme/hello-world: updated 1.0.0 → 1.1.0"])
    const failed = page.getByTestId("update-all-failed")
    expect(await failed.locator("li").count()).toBe(1)
    const failure = failed.locator('li[data-extension="acme/full"]')
    expect(await failure.textContent()).toMatch(/^acme\/full: \S.*sha256/i)
    // An error notice, not the success one: a screen reader announces it.
    expect(await failed.locator("xpath=ancestor::div[@role='alert']").count()).toBe(1)
    expect(await updated.locator("xpath=ancestor::div[@role='status']").count()).toBe(1)
    await shot(page, "update-all-outcomes-desktop")

    // What the screen says is what the server did: hello-world moved, full stayed where it was.
    const list = (await request(`${harness.url}/admin/host/api/extensions`, { as: "admin" })).json as { data: ReadonlyArray<{ id: string; version: string }> }
    expect(Object.fromEntries(list.data.map((row) => [row.id, row.version]))).toEqual({ "acme/hello-world": "1.1.0", "acme/full": "1.2.0" })
    await expect.poll(() => page.locator('tr[data-extension="acme/hello-world"] td[data-label="Version"]').textContent(), patient).toBe("1.1.0")
    expect(errors, errors.join("\n")).toEqual([])
    await context.close()
  })

  it("says which action stopped an Apply of the desired state, and why", async () => {
    // acme/full 1.4.0 from a folder, with a migration the database refuses: planned, then stopped while applied.
    const broken = join(work.path, "full-1.4.0")
    cpSync(fixture("extensions", "full"), broken, { recursive: true })
    const manifest = join(broken, "extension.yaml")
    writeFileSync(manifest, readFileSync(manifest, "utf8").replace(/^version: .*$/m, "version: 1.4.0"))
    writeFileSync(join(broken, "database", "migrations", "2024_03_01_000000_refused.sql"), "-- up\nTHIS IS NOT SQL;\n\n-- down\nSELECT 1;\n")
    mkdirSync(join(harness.root, "desired-state"), { recursive: true })
    writeFileSync(join(harness.root, "desired-state", "extensions.yaml"), `host: "1.0"\nextensions:\n  acme/full:\n    source: { path: ${broken} }\n`)
    const { context, errors, page } = await openPage(harness, { user: "admin", path: "/admin/host/desired-state" })
    await expect.poll(() => page.getByTestId("plan-actions").textContent(), patient).toContain("acme/full")
    await page.getByTestId("apply").click()
    await page.getByTestId("confirm-apply").click()
    const alert = page.locator("div[role=alert]")
    await expect.poll(() => alert.textContent(), patient).toMatch(/^Apply stopped at update acme\/full \(0 action\(s\) applied before it\): .*2024_03_01_000000_refused/)
    expect(await page.getByTestId("desired-result").count()).toBe(0)
    await shot(page, "apply-stopped-desktop")
    const list = (await request(`${harness.url}/admin/host/api/extensions`, { as: "admin" })).json as { data: ReadonlyArray<{ id: string; version: string }> }
    expect(list.data.find((row) => row.id === "acme/full")?.version).toBe("1.2.0")
    // Chromium logs the 422 itself; nothing else went wrong on the page.
    expect(errors).toEqual(["Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)"])
    await context.close()
  })
})
