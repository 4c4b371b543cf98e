import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { describeBrowser, type PanelHarness, screenshot, startPanel } from "../support/browser.js"
import { fixture, tempDir } from "../support/cli.js"
import { writeExtension } from "../support/extensions.js"
import { writePanelRoot } from "../support/panel-root.js"
import { machines, type PanelStandIn, people, startPanelStandIn } from "../support/pterodactyl-api.js"
import { install } from "../http/helpers.js"

// useExtensionApi under a real panel (docs/http.md "CSRF"): the bootstrap says `csrf: "panel"`, so unsafe
// calls carry X-XSRF-TOKEN from the panel's XSRF-TOKEN cookie — in real Chromium, against `host serve` with
// the Pterodactyl driver and the client-API stand-in.

let harness: PanelHarness
let standIn: PanelStandIn
const folders = tempDir("host-xsrf-")

beforeAll(async () => {
  standIn = await startPanelStandIn({ users: people, servers: machines })
  const panelRoot = writePanelRoot(join(folders.path, "panel"))
  harness = await startPanel({
    env: { HOST_PANEL_DRIVER: "pterodactyl", HOST_PANEL_URL: standIn.url, HOST_PANEL_ROOT: panelRoot },
    setup: async (root) => {
      await install(root, fixture("runtime", "probe"))
      await install(root, writeExtension(folders.path, {
        id: "test/poster",
        version: "1.0.0",
        files: {
          "resources/frontend/dist/extension.js": `(function () {
  var React = window.React;
  var h = React.createElement;
  var sdk = window.__HOST__.sdk;
  function Poster() {
    var api = sdk.useExtensionApi({ extensionId: "acme/probe" });
    var result = React.useState("…");
    React.useEffect(function () {
      api.post("/echo", { hello: "panel" }).then(
        function (data) { result[1]("ok " + JSON.stringify(data.body)); },
        function (error) { result[1]("failed " + error.status); }
      );
    }, []);
    return h("div", { "data-testid": "poster", className: "card" }, "POST through useExtensionApi: " + result[0]);
  }
  function Broken() { throw new Error("broken under the panel"); }
  sdk.createExtension({ id: "test/poster", slots: [{ slot: "dashboard.widgets", component: Poster }, { slot: "dashboard.footer", component: Broken }] });
})();
`
        }
      }))
    }
  })
}, 90_000)

afterAll(async () => {
  await harness?.stop()
  await standIn?.close()
  folders.cleanup()
})

const open = async (cookies: ReadonlyArray<{ name: string; value: string }>) => {
  const context = await harness.browser.newContext()
  await context.addCookies(cookies.map((cookie) => ({ ...cookie, url: harness.url })))
  const page = await context.newPage()
  await page.goto(`${harness.url}/`)
  return { context, page }
}

describeBrowser("useExtensionApi under a real panel", () => {
  it("sends X-XSRF-TOKEN from the panel's cookie, so the double submit passes (extension calls and error reports)", async () => {
    const context = await harness.browser.newContext()
    await context.addCookies([
      { name: "pterodactyl_session", value: "sess-alice" },
      { name: "XSRF-TOKEN", value: "eyJpdiI6InRlc3QifQ%3D%3D" }
    ].map((cookie) => ({ ...cookie, url: harness.url })))
    const page = await context.newPage()
    // The throwing component's render error goes to diagnostics with the panel's CSRF header too.
    const reported = page.waitForResponse((response) => response.url().endsWith("/api/client/host/diagnostics"))
    await page.goto(`${harness.url}/`)
    expect((await reported).status()).toBeLessThan(300)
    expect(await page.evaluate(() => (window as unknown as { __HOST__: { csrf: string } }).__HOST__.csrf)).toBe("panel")
    await page.getByTestId("poster").filter({ hasText: "ok" }).waitFor()
    expect(await page.getByTestId("poster").textContent()).toBe('POST through useExtensionApi: ok {"hello":"panel"}')
    await screenshot(page, "bridge-panel-xsrf")
    await context.close()
  })

  it("without the panel's XSRF-TOKEN cookie the same call is refused (403)", async () => {
    const { context, page } = await open([{ name: "pterodactyl_session", value: "sess-alice" }])
    await page.getByTestId("poster").filter({ hasText: "failed" }).waitFor()
    expect(await page.getByTestId("poster").textContent()).toBe("POST through useExtensionApi: failed 403")
    await context.close()
  })
})
