import * as ed from "@noble/ed25519"
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, expect, it } from "vitest"
import { describeBrowser, openPage, type PanelHarness, screenshot, startPanel } from "../support/browser.js"
import { fixture, runHost, tempDir } from "../support/cli.js"
import { writeExtension } from "../support/extensions.js"

// The operators' screens in real Chromium against real `host serve` processes (docs/admin.md): the
// Doctor section of the detail screen, the upload's two inputs (the signature only a .sig, a drop of
// both sorted), and the upload hidden under `admin_uploads: off`. Screenshots land in test-results/.

const patient = { timeout: 20_000, interval: 50 }
const work = tempDir("host-operators-ui-")
let harness: PanelHarness
let off: PanelHarness
let keys: { public_key: string; secret_key: string }
let archive: string
let signature: string

beforeAll(async () => {
  keys = JSON.parse((await runHost(["keygen", "--json"])).stdout) as typeof keys
  const exported = await runHost(["export", fixture("runtime", "probe"), "--output", `${work.path}/`, "--json"])
  archive = (JSON.parse(exported.stdout) as { archive: string }).archive
  signature = `${archive}.sig`
  writeFileSync(signature, Buffer.from(await ed.signAsync(readFileSync(archive), Buffer.from(keys.secret_key, "hex"))).toString("hex"))
  harness = await startPanel({
    env: { HOST_PUBLIC_KEY: keys.public_key },
    setup: async (root) => {
      mkdirSync(join(root, "config"), { recursive: true })
      writeFileSync(join(root, "config", "host.yaml"), "admin_uploads: signed\n")
      // Broken the ways the doctor names: a route file no rule mounts, a frontend source without its bundle,
      // an empty admin.settings.
      const folder = writeExtension(work.path, {
        id: "acme/broken",
        version: "1.0.0",
        files: {
          "src/BrokenExtension.js": `export class BrokenExtension { getId() { return "acme/broken" } register() {} boot() {} }\n`,
          "src/routes/api.js": "export default () => {}\n",
          "resources/frontend/src/index.tsx": "export default {}\n"
        }
      })
      appendFileSync(join(folder, "extension.yaml"), "admin:\n  settings:\n    title: Broken settings\n")
      const added = await runHost(["add", folder, "--root", root])
      if (added.code !== 0) throw new Error(added.stderr)
    }
  })
  off = await startPanel({
    setup: async (root) => {
      mkdirSync(join(root, "config"), { recursive: true })
      writeFileSync(join(root, "config", "host.yaml"), "admin_uploads: off\n")
    }
  })
}, 180_000)

afterAll(async () => {
  await harness?.stop()
  await off?.stop()
  work.cleanup()
})

/** Drops files onto the drop zone as a person dragging them from a file manager would. */
const dropFiles = async (page: Page, files: ReadonlyArray<{ name: string; bytes: Buffer }>) => {
  const transfer = await page.evaluateHandle((list) => {
    const data = new DataTransfer()
    for (const file of list) data.items.add(new File([new Uint8Array(file.bytes)], file.name))
    return data
  }, files.map((file) => ({ name: file.name, bytes: [...file.bytes] })))
  await page.getByTestId("dropzone").dispatchEvent("drop", { dataTransfer: transfer })
}

describeBrowser("operators' screens in Chromium", () => {
  it("shows the doctor's report on the detail screen: what fails first, each with its fix", async () => {
    const { context, errors, page } = await openPage(harness, { user: "admin", path: "/admin/host/extensions/acme/broken?tab=doctor" })
    const checks = page.getByTestId("doctor-checks")
    await checks.waitFor(patient)
    await expect.poll(() => page.getByTestId("doctor-summary").textContent(), patient).toContain("3 failing")
    const routes = checks.locator('[data-check="routes"]')
    await expect(routes.getAttribute("data-verdict")).resolves.toBe("fail")
    await expect(routes.textContent()).resolves.toContain("src/routes/api.js looks like a route file")
    await expect(routes.textContent()).resolves.toContain("Fix: name the file src/routes/api-client.ts")
    await expect(checks.locator('[data-check="bundle"]').getAttribute("data-verdict")).resolves.toBe("fail")
    await expect(checks.locator('[data-check="admin-settings"]').getAttribute("data-verdict")).resolves.toBe("fail")
    // Failing checks come first.
    const verdicts = await checks.locator("[data-verdict]").evaluateAll((items) => items.map((item) => item.getAttribute("data-verdict")))
    expect(verdicts.slice(0, 3)).toEqual(["fail", "fail", "fail"])
    expect(verdicts.slice(3).every((verdict) => verdict !== "fail")).toBe(true)
    await screenshot(page, "admin-doctor-desktop")
    const phone = await openPage(harness, { user: "admin", path: "/admin/host/extensions/acme/broken?tab=doctor", viewport: "phone" })
    await phone.page.getByTestId("doctor-checks").waitFor(patient)
    await screenshot(phone.page, "admin-doctor-phone")
    const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
    expect(overflow).toBeLessThanOrEqual(0)
    await phone.context.close()
    expect(errors, errors.join("\n")).toEqual([])
    await context.close()
  })

  it("takes only a .sig as the signature, sorts a drop of both files, and previews under the signed policy", async () => {
    const { context, errors, page } = await openPage(harness, { user: "admin", path: "/admin/host/extensions" })
    await page.getByTestId("dropzone").waitFor(patient)
    await expect(page.getByTestId("upload-policy-note").textContent()).resolves.toContain("admin_uploads: signed")
    // The signature input comes after the archive's, and a .host chosen there is refused, never sent.
    const order = await page.evaluate(() => {
      const archiveButton = document.querySelector("[data-testid=choose-archive]")!
      const signatureButton = document.querySelector("[data-testid=signature-button]")!
      return archiveButton.compareDocumentPosition(signatureButton) & Node.DOCUMENT_POSITION_FOLLOWING
    })
    expect(order).toBeTruthy()
    await expect(page.getByTestId("signature-input").getAttribute("accept")).resolves.toBe(".sig")
    await page.getByTestId("signature-input").setInputFiles(archive)
    await expect.poll(() => page.locator(".ha-notice").first().textContent(), patient).toContain("is not a detached signature (a .sig file)")
    await expect(page.locator(".ha-notice").first().textContent()).resolves.toContain("That file was not taken as the signature")
    await expect(page.getByTestId("signature-button").textContent()).resolves.toContain("Add signature (.sig)")
    await screenshot(page, "admin-upload-wrong-signature-desktop")

    // Unsigned: the preview names the policy that refuses it.
    await page.getByTestId("archive-input").setInputFiles(archive)
    await expect.poll(() => page.getByTestId("upload-policy").textContent(), patient).toContain("admin_uploads: signed")
    await expect(page.getByTestId("upload-policy").textContent()).resolves.toContain("refuses this archive")
    await expect(page.getByTestId("confirm-install").isDisabled()).resolves.toBe(true)

    // Both dropped at once, the signature first: each goes to its input, and the preview has the signature.
    await page.getByTestId("remove-signature").waitFor({ state: "detached" })
    await dropFiles(page, [
      { name: signature.split("/").pop()!, bytes: readFileSync(signature) },
      { name: archive.split("/").pop()!, bytes: readFileSync(archive) }
    ])
    await expect.poll(() => page.getByTestId("signature-button").textContent(), patient).toContain(`Signature: ${signature.split("/").pop()}`)
    await expect.poll(() => page.getByTestId("upload-policy").textContent(), patient).toContain("accepts this archive")
    await expect(page.getByTestId("choose-archive").textContent()).resolves.toContain(archive.split("/").pop()!)
    // The earlier refusal of a wrong signature file is gone once a signature was taken.
    await expect(page.getByText("That file was not taken as the signature").count()).resolves.toBe(0)
    await expect(page.getByTestId("preview").locator(".ha-badge", { hasText: "signed" }).first().textContent()).resolves.toContain("signed")
    await screenshot(page, "admin-upload-sorted-desktop")
    await page.setViewportSize({ width: 390, height: 844 })
    await screenshot(page, "admin-upload-sorted-phone")
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0)
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.getByTestId("confirm-install").click()
    await page.getByTestId("install-result").waitFor(patient)
    await page.locator('tr[data-extension="acme/probe"]').waitFor(patient)
    expect(errors, errors.join("\n")).toEqual([])
    await context.close()
  })

  it("hides the upload when admin_uploads is off, and says where installs happen", async () => {
    const { context, errors, page } = await openPage(off, { user: "admin", path: "/admin/host/extensions" })
    await page.getByTestId("uploads-off").waitFor(patient)
    await expect(page.getByTestId("uploads-off").textContent()).resolves.toContain("admin_uploads: off")
    // The install section is drawn at once; the installed list's empty text waits for the list's answer.
    await page.getByText("Install them on the server with host add").waitFor(patient)
    await expect(page.getByText("Install them on the server with host add").count()).resolves.toBe(1)
    await expect(page.getByTestId("dropzone").count()).resolves.toBe(0)
    await expect(page.getByTestId("archive-input").count()).resolves.toBe(0)
    await screenshot(page, "admin-uploads-off-desktop")
    expect(errors, errors.join("\n")).toEqual([])
    await context.close()
  })
})
