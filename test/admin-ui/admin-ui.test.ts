import * as ed from "@noble/ed25519"
import Database from "better-sqlite3"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, expect, it } from "vitest"
import { gz, packageEntries, rawTar } from "../archive/helpers.js"
import { request } from "../http/helpers.js"
import { entryFor, exportArchives, index, writeIndex } from "../registry/helpers.js"
import { describeBrowser, openPage, type PanelHarness, screenshot, startPanel, type ViewportName } from "../support/browser.js"
import { fixture, runHost, tempDir } from "../support/cli.js"

// The admin screens in real Chromium (docs/admin.md) against a real `host serve`, a file:// registry
// built by `host export`, real archives (one signed with a detached signature, one modified) and the
// panel's SQLite database. Every step goes through the UI; results are checked through the admin API
// and the files. Screenshots of each screen at 1280×800 and 390×844 land in test-results/.

/** Waits on what the page shows after a server round trip (a busy CI machine can take seconds). */
const patient = { timeout: 20_000, interval: 50 }

let harness: PanelHarness
const work = tempDir("host-admin-ui-")
let keys: { public_key: string; secret_key: string }
let probeArchive: string
let probeSignature: string
let modifiedArchive: string

const api = (path: string) => `${harness.url}/admin/host/api${path}`
const adminGet = async <T>(path: string): Promise<T> => ((await request(api(path), { as: "admin" })).json as { data: T }).data
const desiredFile = () => join(harness.root, "desired-state", "extensions.yaml")

beforeAll(async () => {
  const registryDir = join(work.path, "registry")
  const archives = await exportArchives(registryDir, [
    { fixture: "hello-world" },
    { fixture: "hello-world", version: "1.1.0" },
    { fixture: "full" }
  ])
  const registryUrl = writeIndex(registryDir, index([entryFor(archives, "acme/hello-world"), entryFor(archives, "acme/full")]))
  keys = JSON.parse((await runHost(["keygen", "--json"])).stdout) as typeof keys
  const exported = await runHost(["export", fixture("runtime", "probe"), "--output", `${work.path}/`, "--json"])
  probeArchive = (JSON.parse(exported.stdout) as { archive: string }).archive
  probeSignature = `${probeArchive}.sig`
  writeFileSync(probeSignature, Buffer.from(await ed.signAsync(readFileSync(probeArchive), Buffer.from(keys.secret_key, "hex"))).toString("hex"))
  modifiedArchive = join(work.path, "acme-evil-1.0.0.host")
  writeFileSync(modifiedArchive, gz(rawTar(packageEntries({ "README.md": "hello\n" }, { listed: { "README.md": "what it said before\n" } }))))
  harness = await startPanel({
    env: { HOST_PUBLIC_KEY: keys.public_key },
    setup: async (root) => {
      mkdirSync(join(root, "config"), { recursive: true })
      writeFileSync(join(root, "config", "host.yaml"), `registry_url: ${registryUrl}\n`)
    }
  })
}, 180_000)

afterAll(async () => {
  await harness?.stop()
  work.cleanup()
})

/** Screenshots of the current screen at both sizes (the phone one in a fresh page at the same address). */
const shoot = async (page: Page, name: string, ready: string) => {
  await screenshot(page, `admin-${name}-desktop`)
  const phone = await openPage(harness, { user: "admin", path: new URL(page.url()).pathname + new URL(page.url()).search, viewport: "phone" as ViewportName })
  await phone.page.waitForSelector(ready)
  await screenshot(phone.page, `admin-${name}-phone`)
  // Nothing wider than the phone's screen.
  const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
  expect(overflow, `${name} overflows a 390 px screen by ${overflow} px`).toBeLessThanOrEqual(0)
  expect(phone.errors).toEqual([])
  await phone.context.close()
}

describeBrowser("admin screens in Chromium", () => {
  it("installs an uploaded archive after its preview: signed, with its capabilities; a modified one is refused naming the check", async () => {
    const { context, errors, page } = await openPage(harness, { user: "admin", path: "/admin/host/extensions" })
    await page.getByText("No extensions installed yet").waitFor()
    await shoot(page, "extensions-empty", "[data-testid=dropzone]")
    await page.getByTestId("signature-input").setInputFiles(probeSignature)
    await page.getByTestId("archive-input").setInputFiles(probeArchive)
    const preview = page.getByTestId("preview")
    await preview.waitFor()
    await expect(preview.textContent()).resolves.toContain("acme/probe")
    await expect(preview.locator(".ha-badge", { hasText: "signed" }).first().textContent()).resolves.toContain("signed")
    await expect(preview.textContent()).resolves.toContain("probe.manage")
    await screenshot(page, "admin-install-preview-desktop")
    await page.getByTestId("confirm-install").click()
    await page.getByTestId("install-result").waitFor()
    const row = page.locator('tr[data-extension="acme/probe"]')
    await row.waitFor()
    await expect(row.textContent()).resolves.toMatch(/signed/)
    expect((await adminGet<Array<{ id: string; signature: string }>>("/extensions")).find((e) => e.id === "acme/probe")?.signature).toBe("signed")

    await page.getByTestId("archive-input").setInputFiles(modifiedArchive)
    await page.getByTestId("refusal").waitFor()
    await expect.poll(() => page.getByTestId("preview").textContent(), patient).toContain("Refused by the integrity (checksum-mismatch) check")
    await expect.poll(() => page.getByTestId("refusal").textContent(), patient).toContain("README.md")
    await expect(page.getByTestId("confirm-install").isDisabled()).resolves.toBe(true)
    await screenshot(page, "admin-install-refused-desktop")
    expect(errors, errors.join("\n")).toEqual([])
    await context.close()
  })

  it("searches the registry by tag, installs a pinned version, then shows and applies its update", async () => {
    const { context, errors, page } = await openPage(harness, { user: "admin", path: "/admin/host/registry" })
    await page.getByTestId("registry-search").fill("greeting")
    await page.getByTestId("registry-search").press("Enter")
    await expect.poll(() => page.locator("[data-entry]").count(), patient).toBe(1)
    await page.locator('[data-entry="acme/hello-world"]').waitFor()
    await page.getByTestId("install-acme/hello-world").click()
    await page.getByTestId("registry-version").selectOption("1.0.0")
    await page.getByTestId("confirm-registry-install").click()
    await expect.poll(() => page.getByTestId("registry-result").textContent(), patient).toContain("acme/hello-world: installed 1.0.0")

    await page.getByTestId("registry-search").fill("widgets")
    await page.getByTestId("registry-search").press("Enter")
    await expect.poll(() => page.locator("[data-entry]").count(), patient).toBe(1)
    await page.locator('[data-entry="acme/full"]').waitFor()
    await page.getByTestId("install-acme/full").click()
    await page.getByTestId("confirm-registry-install").click()
    await expect.poll(() => page.getByTestId("registry-result").textContent(), patient).toContain("acme/full: installed 1.2.0")

    await page.getByTestId("registry-search").fill("")
    await page.getByTestId("registry-search").press("Enter")
    await page.getByTestId("registry-update-acme/hello-world").waitFor()
    await shoot(page, "registry", "[data-entry]")
    await page.getByTestId("registry-update-acme/hello-world").click()
    // The confirmation names the dependent that relies on it.
    await expect.poll(() => page.getByTestId("dependents").textContent(), patient).toContain("acme/full")
    await page.getByTestId("confirm-operation").click()
    await expect.poll(() => page.getByTestId("operation-result").textContent(), patient).toContain("acme/hello-world: updated 1.0.0 → 1.1.0")
    expect((await adminGet<Array<{ id: string; version: string }>>("/extensions")).find((e) => e.id === "acme/hello-world")?.version).toBe("1.1.0")
    expect(errors).toEqual([])
    await context.close()
  })

  it("saves settings through the form: each invalid field shows the API's message, a valid save persists", async () => {
    const { context, errors, page } = await openPage(harness, { user: "admin", path: "/admin/host/extensions" })
    await page.getByRole("link", { name: "Full Example" }).click()
    await page.getByTestId("tab-overview").waitFor()
    await shoot(page, "detail-overview", "[data-testid=tab-overview]")
    await page.getByTestId("tab-capabilities").click()
    await page.getByTestId("migrations-table").waitFor()
    await expect.poll(() => page.getByTestId("schedules-table").textContent(), patient).toContain("15 3 * * *")
    await shoot(page, "detail-capabilities", "[data-testid=migrations-table]")
    await page.getByTestId("tab-health").click()
    await page.getByTestId("run-health").click()
    await page.getByTestId("health-results").waitFor()
    await expect.poll(() => page.getByTestId("health-results").textContent(), patient).toContain("Upstream API reachable")

    await page.getByTestId("tab-settings").click()
    const form = page.getByTestId("settings-form")
    await form.waitFor()
    // Every input kind of the schema is rendered.
    expect(await form.locator('input[type="password"][data-setting="api_key"]').count()).toBe(1)
    expect(await form.locator('input[data-setting="theme_color"]').count()).toBe(1)
    expect(await form.locator('select[data-setting="mode"] option').count()).toBeGreaterThanOrEqual(2)
    expect(await form.locator('input[type="number"][data-setting="refreshRate"]').count()).toBe(1)
    expect(await form.locator('input[type="checkbox"][data-setting="show_banner"]').count()).toBe(1)
    expect(await form.locator('input[type="email"][data-setting="support_email"]').getAttribute("placeholder")).toBe("support@example.com")
    await expect(form.textContent()).resolves.toContain("The key of the upstream service.")

    await form.locator('[data-setting="support_email"]').fill("not-an-email")
    // A stale form offering a value the schema does not (the select is rebuilt the way an old tab would have it).
    await form.locator('select[data-setting="region"]').evaluate((select: HTMLSelectElement) => {
      const option = document.createElement("option")
      option.value = "mars"
      option.textContent = "Mars"
      select.append(option)
    })
    await form.locator('select[data-setting="region"]').selectOption("mars")
    await page.getByTestId("save-settings").click()
    await expect.poll(() => page.getByTestId("error-support_email").textContent(), patient).toContain('must be an email address, got "not-an-email"')
    await expect.poll(() => page.getByTestId("error-region").textContent(), patient).toContain('must be one of "eu", "us", "asia"')
    expect(await form.locator('[data-setting="support_email"]').getAttribute("aria-invalid")).toBe("true")
    await screenshot(page, "admin-settings-invalid-desktop")
    expect((await adminGet<{ values: Record<string, unknown> }>("/extensions/acme/full/settings")).values).toMatchObject({ support_email: null, region: "eu" })

    await form.locator('[data-setting="support_email"]').fill("ops@example.com")
    await form.locator('select[data-setting="region"]').selectOption("us")
    await form.locator('[data-setting="api_key"]').fill("k-abcdef")
    await page.getByTestId("save-settings").click()
    await page.getByTestId("settings-saved").waitFor()
    expect(await page.getByTestId("error-support_email").textContent()).toBe("")
    const stored = await adminGet<{ values: Record<string, unknown>; secrets: Record<string, boolean> }>("/extensions/acme/full/settings")
    expect(stored.values).toMatchObject({ support_email: "ops@example.com", region: "us", api_key: null })
    expect(stored.secrets).toEqual({ api_key: true })
    // The secret is never sent back to the page.
    await page.reload()
    await page.getByTestId("settings-form").waitFor()
    expect(await page.content()).not.toContain("k-abcdef")
    await shoot(page, "detail-settings", "[data-testid=settings-form]")
    // The refused save's answer is the one failed request (the browser logs it); nothing else went wrong.
    expect(errors).toEqual(["Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)"])
    await context.close()
  })

  it("disables and enables with a confirmation naming the dependents, and removes keeping the data on request", async () => {
    const { context, errors, page } = await openPage(harness, { user: "admin", path: "/admin/host/extensions" })
    await page.getByTestId("disable-acme/hello-world").click()
    await expect.poll(() => page.getByTestId("dependents").textContent(), patient).toContain("acme/full")
    await expect(page.getByTestId("confirm-operation").isDisabled()).resolves.toBe(true)
    await screenshot(page, "admin-disable-dependents-desktop")
    await page.getByRole("button", { name: "Cancel" }).click()

    await page.getByTestId("disable-acme/probe").click()
    await page.getByTestId("confirm-operation").click()
    await page.getByTestId("enable-acme/probe").waitFor()
    expect((await adminGet<Array<{ id: string; enabled: boolean }>>("/extensions")).find((e) => e.id === "acme/probe")?.enabled).toBe(false)
    await page.getByTestId("enable-acme/probe").click()
    await page.getByTestId("confirm-operation").click()
    await page.getByTestId("disable-acme/probe").waitFor()
    expect((await adminGet<Array<{ id: string; enabled: boolean }>>("/extensions")).find((e) => e.id === "acme/probe")?.enabled).toBe(true)

    const db = new Database(join(harness.root, "storage", "host", "host.db"))
    db.prepare("INSERT INTO ext_full_notes (body) VALUES ('keep me'), ('and me')").run()
    db.close()
    await page.getByTestId("remove-acme/full").click()
    const tables = page.getByTestId("dropped-tables")
    await tables.waitFor()
    await expect(tables.textContent()).resolves.toMatch(/ext_full_notes\s*2/)
    await expect(tables.textContent()).resolves.toContain("ext_full_visits")
    await page.getByTestId("keep-data").check()
    await screenshot(page, "admin-remove-confirm-desktop")
    await page.getByTestId("confirm-operation").click()
    await expect.poll(() => page.getByTestId("operation-result").textContent(), patient).toContain("acme/full: removed")
    await expect.poll(() => page.locator('tr[data-extension="acme/full"]').count(), patient).toBe(0)
    const after = new Database(join(harness.root, "storage", "host", "host.db"), { readonly: true })
    expect((after.prepare("SELECT COUNT(*) AS n FROM ext_full_notes").get() as { n: number }).n).toBe(2)
    after.close()
    await shoot(page, "extensions", "[data-testid=extensions-table]")
    expect(errors).toEqual([])
    await context.close()
  })

  it("desired state: the plan shows a pending install with its capability diff, Apply converges, a UI toggle is drift, Adopt writes the file", async () => {
    mkdirSync(join(harness.root, "desired-state"), { recursive: true })
    writeFileSync(desiredFile(), `# Reviewed in pull requests.\nhost: "1.0"\nextensions:\n  acme/hello-world: "^1.1" # greeter\n  acme/full: "^1.2"\n`)
    const { context, errors, page } = await openPage(harness, { user: "admin", path: "/admin/host/desired-state" })
    const actions = page.getByTestId("plan-actions")
    await actions.waitFor()
    await expect(actions.textContent()).resolves.toContain("install")
    await expect(actions.textContent()).resolves.toContain("acme/full")
    await expect.poll(() => page.getByTestId("capability-diff").first().textContent(), patient).toContain("+ 2024_02_01_000000_create_ext_full_notes")
    await shoot(page, "desired-state-plan", "[data-testid=plan-actions]")
    await page.getByTestId("apply").click()
    await page.getByTestId("confirm-apply").click()
    await expect.poll(() => page.getByTestId("desired-result").textContent(), patient).toContain("Apply complete: ")
    await expect.poll(() => page.getByTestId("plan-summary").textContent(), patient).toBe("No changes. Panel matches desired state.")

    // A toggle in the UI is drift.
    await page.getByRole("link", { name: "Extensions", exact: true }).click()
    await page.getByTestId("disable-acme/full").click()
    await page.getByTestId("confirm-operation").click()
    await page.getByTestId("enable-acme/full").waitFor()
    await page.getByRole("link", { name: "Desired state", exact: true }).click()
    await expect.poll(() => page.getByTestId("drift").textContent(), patient).toContain("acme/full")
    await expect.poll(() => page.getByTestId("drift").textContent(), patient).toContain("enable")
    await shoot(page, "desired-state-drift", "[data-testid=drift]")

    await page.getByTestId("adopt").click()
    const diff = page.getByTestId("diff")
    await diff.waitFor()
    await expect(diff.textContent()).resolves.toContain("+    enabled: false")
    // Nothing is written before the admin confirms.
    expect(readFileSync(desiredFile(), "utf8")).not.toContain("enabled: false")
    await expect(page.locator(".ha-dialog").textContent()).resolves.toContain("acme/probe was installed from an upload")
    await screenshot(page, "admin-adopt-diff-desktop")
    await page.getByTestId("confirm-adopt").click()
    await expect.poll(() => page.getByTestId("desired-result").textContent(), patient).toContain("Adopted: wrote")
    const text = readFileSync(desiredFile(), "utf8")
    expect(text).toContain("# Reviewed in pull requests.")
    expect(text).toContain("# greeter")
    expect(text).toMatch(/acme\/full:\n\s+version: "?\^1\.2"?\n\s+enabled: false/)
    expect(text).not.toContain("k-abcdef")
    await expect.poll(() => page.getByTestId("plan-summary").textContent(), patient).toBe("No changes. Panel matches desired state.")
    expect(errors).toEqual([])
    await context.close()
  })

  it("pages and filters the activity", async () => {
    const { context, errors, page } = await openPage(harness, { user: "admin", path: "/admin/host/activity" })
    await page.getByTestId("activity-table").waitFor()
    await page.getByTestId("filter-action").selectOption("removed")
    await expect.poll(async () => page.getByTestId("activity-range").textContent(), patient).toBe("1–1 of 1")
    await expect.poll(() => page.getByTestId("activity-table").textContent(), patient).toContain("acme/full")
    expect(new URL(page.url()).searchParams.get("action")).toBe("removed")
    await page.getByTestId("filter-action").selectOption("")
    await page.getByTestId("filter-extension").fill("acme/probe")
    await expect.poll(async () => page.locator("[data-testid=activity-table] tbody tr").count(), patient).toBe(3)
    await shoot(page, "activity", "[data-testid=activity-table]")
    expect(errors).toEqual([])
    await context.close()
  })

  it("refuses a non-admin every admin screen and admin API call", async () => {
    const { context, page } = await openPage(harness, { user: "alice" })
    for (const path of ["/admin/host/extensions", "/admin/host/extensions/acme/full", "/admin/host/registry", "/admin/host/desired-state", "/admin/host/activity"]) {
      const response = await page.goto(`${harness.url}${path}`)
      expect(response?.status(), path).toBe(403)
      await expect(page.textContent("body")).resolves.toContain("this needs a panel administrator")
    }
    const statuses = await page.evaluate(async () => {
      const paths = ["/admin/host/api/extensions/overview", "/admin/host/api/extensions/acme/full", "/admin/host/api/registry", "/admin/host/api/desired-state", "/admin/host/api/activity/page"]
      return Promise.all(paths.map(async (path) => (await fetch(path)).status))
    })
    expect(statuses).toEqual([403, 403, 403, 403, 403])
    await context.close()
  })
})
