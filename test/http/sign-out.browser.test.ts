import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, expect, it } from "vitest"
import { describeBrowser, type PanelHarness, screenshot, startPanel, tokens } from "../support/browser.js"

// Issue 37 in real Chromium (docs/http.md "Security"): the panel's own sign-in form works (the browser
// sends the panel's Origin), signing out from the user menu ends the session for the old cookie too, and
// a form on another site that signs the visitor in is refused with no cookie.

let panel: PanelHarness
let attacker: Server
let attackerUrl: string

describeBrowser("signing in and out in Chromium", () => {
  beforeAll(async () => {
    panel = await startPanel()
    attacker = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html" })
      response.end(`<!doctype html><h1>Win a prize</h1>
<form id="f" method="post" action="${panel.url}/auth/login">
<input name="username" value="dave"><input name="password" value="${tokens.dave}"><input name="redirect" value="/">
</form><script>document.getElementById("f").submit()</script>`)
    })
    await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve))
    attackerUrl = `http://localhost:${(attacker.address() as AddressInfo).port}`
  })

  afterAll(async () => {
    await new Promise((resolve) => attacker?.close(resolve))
    await panel?.stop()
  })

  it("signs in through the form, signs out from the menu, and the old cookie is signed out too", async () => {
    const context = await panel.browser.newContext()
    const page = await context.newPage()
    await page.goto(`${panel.url}/auth/login`)
    await page.fill("input[name=username]", "alice")
    await page.fill("input[name=password]", tokens.alice)
    await Promise.all([page.waitForURL(`${panel.url}/`), page.click("button[type=submit]")])
    const cookie = (await context.cookies()).find((entry) => entry.name === "host_session")!
    expect(cookie.httpOnly).toBe(true)
    expect(cookie.sameSite).toBe("Lax")
    const replay = () => fetch(`${panel.url}/auth/session`, { headers: { cookie: `host_session=${cookie.value}` } })
    expect((await replay()).status).toBe(200)
    await page.click("[data-testid=user-menu]")
    await Promise.all([page.waitForURL(`${panel.url}/auth/login`), page.click("text=Sign out")])
    await screenshot(page, "signed-out")
    // The cookie a thief copied before the sign-out no longer works.
    expect((await replay()).status).toBe(401)
    await context.close()
  })

  it("refuses a sign-in form sent from another site: 403, no cookie", async () => {
    const context = await panel.browser.newContext()
    const page = await context.newPage()
    const answered = page.waitForResponse((response) => response.url() === `${panel.url}/auth/login` && response.request().method() === "POST")
    await page.goto(attackerUrl)
    const answer = await answered
    expect(answer.request().headers()["origin"]).toBe(attackerUrl)
    expect(answer.status()).toBe(403)
    expect(await answer.text()).toContain("sign-in refused")
    await page.waitForLoadState()
    await screenshot(page, "cross-site-sign-in")
    expect((await context.cookies(panel.url)).find((entry) => entry.name === "host_session")).toBeUndefined()
    await context.close()
  })
})
