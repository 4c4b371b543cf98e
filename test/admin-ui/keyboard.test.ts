import { afterAll, beforeAll, expect, it } from "vitest"
import { install } from "../http/helpers.js"
import { describeBrowser, openPage, type PanelHarness, screenshot, startPanel } from "../support/browser.js"
import { fixture } from "../support/cli.js"

// The admin screens without a mouse, and a quarantined extension's row (docs/admin.md): the reason and
// what to do are on the list and the detail; every action is reachable with Tab and Enter, and Escape
// closes a dialog without doing anything.

let harness: PanelHarness

beforeAll(async () => {
  harness = await startPanel({
    setup: async (root) => {
      await install(root, fixture("extensions", "hello-world"))
      await install(root, fixture("runtime", "boot-throws"))
    }
  })
}, 120_000)

afterAll(async () => {
  await harness?.stop()
})

describeBrowser("admin screens: quarantine and keyboard", () => {
  it("shows a quarantined extension's reason and what to do, on the list and its detail", async () => {
    const { context, errors, page } = await openPage(harness, { user: "admin", path: "/admin/host/extensions" })
    const row = page.locator('tr[data-extension="acme/boot-throws"]')
    await row.getByTestId("quarantine").waitFor()
    await expect(row.textContent()).resolves.toContain("quarantined")
    await expect(row.getByTestId("quarantine").textContent()).resolves.toMatch(/Quarantined:.*boot/i)
    await screenshot(page, "admin-quarantine-desktop")
    await page.goto(`${harness.url}/admin/host/extensions/acme/boot-throws`)
    await page.getByTestId("quarantine").waitFor()
    await expect(page.textContent("body")).resolves.toContain("The rest of the panel keeps running.")
    expect(errors).toEqual([])
    await context.close()
  })

  it("reaches every action with the keyboard; Escape closes a dialog without doing anything", async () => {
    const { context, errors, page } = await openPage(harness, { user: "admin", path: "/admin/host/extensions" })
    await page.getByTestId("extensions-table").waitFor()
    const focused = () => page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid ?? document.activeElement?.textContent ?? "")
    const tabTo = async (testId: string) => {
      for (let step = 0; step < 60; step++) {
        await page.keyboard.press("Tab")
        if ((await focused()) === testId) return
      }
      throw new Error(`${testId} is not reachable with Tab`)
    }
    await tabTo("disable-acme/hello-world")
    await page.keyboard.press("Enter")
    const dialog = page.locator("dialog[open]")
    await dialog.waitFor()
    // Focus moved into the dialog.
    expect(await page.evaluate(() => document.activeElement?.closest("dialog") !== null)).toBe(true)
    await page.keyboard.press("Escape")
    await dialog.waitFor({ state: "detached" })
    const list = await fetch(`${harness.url}/admin/host/api/extensions`, { headers: { authorization: "Bearer host_test_admin_token" } })
    expect(((await list.json()) as { data: Array<{ id: string; enabled: boolean }> }).data.find((e) => e.id === "acme/hello-world")?.enabled).toBe(true)

    // The install area's picker opens from the keyboard too.
    const chooser = page.waitForEvent("filechooser")
    await page.getByRole("button", { name: "Choose archive…" }).focus()
    await page.keyboard.press("Enter")
    await chooser

    // The detail's tabs are buttons in the tab order.
    await page.goto(`${harness.url}/admin/host/extensions/acme/hello-world`)
    await page.getByTestId("tab-overview").waitFor()
    await tabTo("tab-capabilities")
    await page.keyboard.press("Enter")
    await expect.poll(() => page.url()).toContain("tab=capabilities")
    expect(errors).toEqual([])
    await context.close()
  })

  it("keeps dialogs usable on a phone", async () => {
    const { context, errors, page } = await openPage(harness, { user: "admin", path: "/admin/host/extensions", viewport: "phone" })
    await page.getByTestId("remove-acme/hello-world").click()
    await page.getByTestId("keep-data").waitFor()
    const box = await page.locator("dialog[open]").boundingBox()
    expect(box).not.toBeNull()
    expect(box!.x).toBeGreaterThanOrEqual(0)
    expect(box!.x + box!.width).toBeLessThanOrEqual(390)
    await screenshot(page, "admin-remove-confirm-phone")
    await page.getByRole("button", { name: "Cancel" }).click()
    expect(errors).toEqual([])
    await context.close()
  })
})
