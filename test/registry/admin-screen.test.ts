import { copyFileSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { request } from "../http/helpers.js"
import { describeBrowser, openPage, type PanelHarness, screenshot, startPanel } from "../support/browser.js"
import { tempDir } from "../support/cli.js"
import { entryFor, exportArchives, index, writeIndex } from "./helpers.js"

// The admin's Registry screen with two registries (docs/registry.md "Several registries"), in real
// Chromium against a real `host serve`: the registries are listed in resolution order, each entry names
// its registry, an id listed by both says which one `host add` takes, and installing the second
// registry's entry installs from that registry (its source record names it).

const patient = { timeout: 20_000, interval: 50 }
const work = tempDir("host-admin-registries-")
let harness: PanelHarness

beforeAll(async () => {
  const first = join(work.path, "first")
  const second = join(work.path, "second")
  const firstArchives = await exportArchives(first, [{ fixture: "hello-world" }])
  const secondArchives = await exportArchives(second, [{ fixture: "hello-world" }, { fixture: "hello-world", version: "2.0.0" }, { fixture: "full" }])
  writeIndex(first, index([entryFor(firstArchives, "acme/hello-world")]))
  writeIndex(second, index([entryFor(secondArchives, "acme/hello-world"), entryFor(secondArchives, "acme/full", { extra: { dependencies: {} } })]))
  harness = await startPanel({
    setup: async (root) => {
      mkdirSync(join(root, "config"), { recursive: true })
      writeFileSync(join(root, "config", "host.yaml"), `registries:\n  - {name: ours, url: file://${first}}\n  - {name: official, url: file://${second}}\n`)
    }
  })
}, 180_000)

afterAll(async () => {
  await harness?.stop()
  work.cleanup()
})

/** Keeps a copy of a screenshot where the session's notes collect them. */
const keep = (file: string) => {
  const shots = process.env.HOST_TEST_SHOTS
  if (shots === undefined) return
  mkdirSync(shots, { recursive: true })
  copyFileSync(file, join(shots, file.split("/").pop()!))
}

describeBrowser("the Registry screen with two registries", () => {
  it("names each entry's registry and installs the chosen registry's entry", async () => {
    const { context, errors, page } = await openPage(harness, { user: "admin", path: "/admin/host/registry" })
    await expect.poll(() => page.locator("[data-entry]").count(), patient).toBe(3)
    const sources = page.getByTestId("registry-sources")
    await expect.poll(() => sources.locator("li").allTextContents(), patient).toEqual([
      expect.stringMatching(/^1\. ours file:\/\/.*first — 1 extension, network/),
      expect.stringMatching(/^2\. official file:\/\/.*second — 2 extensions, (network|cache)/)
    ])
    const entries = await page.locator("[data-entry]").evaluateAll((items) =>
      items.map((item) => `${item.getAttribute("data-registry")} ${item.getAttribute("data-entry")}`))
    expect(entries).toEqual(["ours acme/hello-world", "official acme/hello-world", "official acme/full"])
    await page.locator('[data-registry="official"][data-entry="acme/hello-world"]').getByText("An earlier registry lists acme/hello-world too").waitFor()
    keep(await screenshot(page, "registry-two-registries-desktop"))

    await page.getByTestId("install-official-acme/hello-world").click()
    await page.getByTestId("registry-version").selectOption("2.0.0")
    keep(await screenshot(page, "registry-two-registries-install-dialog"))
    await page.getByTestId("confirm-registry-install").click()
    await expect.poll(() => page.getByTestId("registry-result").textContent(), patient).toContain("acme/hello-world: installed 2.0.0")
    await expect.poll(() => page.locator('[data-registry="ours"][data-entry="acme/hello-world"] .ha-entry__head').textContent(), patient)
      .toContain("installed 2.0.0 from official")
    await expect.poll(() => page.locator('[data-registry="official"][data-entry="acme/hello-world"] .ha-entry__head').textContent(), patient)
      .toMatch(/MITinstalled 2\.0\.0$/)
    keep(await screenshot(page, "registry-two-registries-installed"))
    expect(errors, errors.join("\n")).toEqual([])
    await context.close()

    const search = (await request(`${harness.url}/admin/host/api/registry?q=hello`, { as: "admin" })).json as {
      data: ReadonlyArray<{ registry: string; installed: { version: string; registry: string | null } | null }>
    }
    expect(search.data.map((entry) => [entry.registry, entry.installed])).toEqual([
      ["ours", { version: "2.0.0", enabled: true, source: "registry", registry: "official" }],
      ["official", { version: "2.0.0", enabled: true, source: "registry", registry: "official" }]
    ])
  })
})
