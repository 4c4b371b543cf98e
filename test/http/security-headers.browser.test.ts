import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, expect, it } from "vitest"
import { fixture } from "../support/cli.js"
import { describeBrowser, openPage, type PanelHarness, screenshot, startPanel } from "../support/browser.js"
import { writeExtension } from "../support/extensions.js"
import { install } from "./helpers.js"

// The pages under their Content-Security-Policy in real Chromium (docs/http.md "Security headers"): the
// sign-in form, the panel shell with an extension's bundle, its 404 page and the admin screens work with
// no policy violation, and a page of another origin cannot frame the admin screen (same-origin can).

let panel: PanelHarness
let attacker: Server
let attackerUrl: string

const violations = `document.addEventListener("securitypolicyviolation", (event) =>
  console.error("CSP violation: " + event.violatedDirective + " blocked " + event.blockedURI))`

describeBrowser("pages under their security headers in Chromium", () => {
  beforeAll(async () => {
    panel = await startPanel({
      setup: async (root) => {
        await install(root, fixture("extensions", "hello-world"))
        await install(root, writeExtension(root, {
          id: "acme/framer",
          version: "1.0.0",
          files: {
            "src/routes/web.ts": `import { defineRoutes } from "@host/sdk/server"
export default defineRoutes((r) => {
  r.get("/frame", () => new Response('<!doctype html><iframe id="admin" src="/admin/host/extensions" width="800" height="500"></iframe>', { headers: { "content-type": "text/html" } }))
})
`
          }
        }))
      }
    })
    attacker = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html" })
      response.end(`<!doctype html><h1>Win a prize</h1><iframe id="admin" src="${panel.url}/admin/host/extensions" width="800" height="500"></iframe>`)
    })
    await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve))
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`
  })

  afterAll(async () => {
    await new Promise((resolve) => attacker?.close(resolve))
    await panel?.stop()
  })

  it("the sign-in form, the shell with an extension, the 404 page and the admin screens run with no violation", async () => {
    const signedOut = await openPage(panel)
    await signedOut.context.addInitScript(violations)
    await signedOut.page.goto(`${panel.url}/auth/login`)
    await signedOut.page.waitForSelector("input[name=username]")
    expect(signedOut.errors).toEqual([])
    await signedOut.context.close()

    const { context, errors, page } = await openPage(panel, { user: "admin" })
    await context.addInitScript(violations)
    await page.goto(`${panel.url}/`)
    await page.waitForSelector("[data-testid=server-list]")
    // The extension's bundle ran (its widget is in the dashboard slot) and the bridge's styles applied.
    await page.waitForSelector("text=Hello")
    expect(await page.evaluate(() => document.getElementById("host-bridge-styles") !== null)).toBe(true)
    await screenshot(page, "csp-panel-dashboard")
    expect(errors).toEqual([])
    await page.goto(`${panel.url}/no/such/page`)
    await page.waitForSelector("[data-host-error='404']")
    // The only message there is Chromium noting the page's own 404 status.
    expect(errors).toEqual(["Failed to load resource: the server responded with a status of 404 (Not Found)"])
    errors.length = 0
    await page.goto(`${panel.url}/admin/host/extensions`)
    await page.waitForSelector("text=acme/hello-world")
    await screenshot(page, "csp-admin-extensions")
    await page.goto(`${panel.url}/admin/host/extensions/acme/hello-world`)
    await page.waitForSelector("text=Hello World")
    expect(errors).toEqual([])
    await context.close()
  })

  it("another origin cannot frame the admin screen; the panel's own origin can", async () => {
    const { context, page } = await openPage(panel, { user: "admin" })
    const refused: Array<string> = []
    page.on("console", (message) => {
      if (message.text().includes("frame-ancestors")) refused.push(message.text())
    })
    await page.goto(`${attackerUrl}/`)
    await page.waitForSelector("iframe#admin")
    const framed = page.frames().find((frame) => frame !== page.mainFrame())
    expect(framed).toBeDefined()
    // The frame never gets the admin app: Chromium shows its error page instead and says why.
    await expect.poll(() => refused.length).toBeGreaterThan(0)
    expect(refused[0]).toContain("frame-ancestors 'self'")
    expect(await framed!.evaluate(() => document.getElementById("admin-app") !== null).catch(() => false)).toBe(false)
    await screenshot(page, "csp-framed-by-other-origin")

    // Control: the same screen framed by a page of the panel's own origin loads.
    await page.goto(`${panel.url}/host/acme/framer/frame`)
    const own = page.frameLocator("iframe#admin")
    await own.locator("text=acme/hello-world").first().waitFor()
    await context.close()
  })
})
