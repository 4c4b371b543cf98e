import { mkdirSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixture, tempDir } from "../support/cli.js"
import { writePanelRoot } from "../support/panel-root.js"
import { machines, type PanelStandIn, people, startPanelStandIn } from "../support/pterodactyl-api.js"
import { install, type RunningServer, startServer } from "./helpers.js"

// The Origin of an unsafe request under a real panel (docs/panels.md "CSRF", DESIGN §22 "CSRF and origins
// behind the web server"): it must be the panel's origin as scheme, host and port — `base_url`'s when set,
// else what a trusted proxy forwarded (X-Forwarded-Host / -Proto), else the request's own Host on http.
// Real `host serve` processes with the Pterodactyl driver, against the stand-in of its client API.

interface Answer {
  readonly status: number
  readonly json: { readonly errors?: ReadonlyArray<{ readonly code: string; readonly detail: string }> } | undefined
}

/** A POST with exactly these headers (node:http, so that `Host` can be chosen like a proxy would). */
const post = (url: string, headers: Readonly<Record<string, string>>, body = "{\"a\":1}") =>
  new Promise<Answer>((resolve, reject) => {
    const target = new URL(url)
    const outgoing = httpRequest(
      { host: target.hostname, port: target.port, path: target.pathname, method: "POST", headers: { "content-type": "application/json", ...headers } },
      (response) => {
        let text = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => (text += chunk))
        response.on("end", () => {
          let json: Answer["json"] = undefined
          try {
            json = JSON.parse(text) as Answer["json"]
          } catch {
            json = undefined
          }
          resolve({ status: response.statusCode ?? 0, json })
        })
      }
    )
    outgoing.once("error", reject)
    outgoing.end(body)
  })

/** Alice's panel session with the panel's XSRF cookie and header, as the panel's own pages send them. */
const signedIn = { cookie: "pterodactyl_session=sess-alice; XSRF-TOKEN=abc%3D%3D", "x-xsrf-token": "abc==" }

const detail = (answer: Answer) => answer.json?.errors?.[0]?.detail ?? ""

describe("the panel's origin for unsafe requests under Pterodactyl", () => {
  let standIn: PanelStandIn
  const roots: Array<ReturnType<typeof tempDir>> = []
  const servers: Array<RunningServer> = []
  /** Default trusted_proxies (loopback: the test client is a trusted proxy), no base_url. */
  let proxied: RunningServer
  /** trusted_proxies that leave the test client out. */
  let direct: RunningServer
  /** base_url https://panel.example:8443. */
  let configured: RunningServer

  const start = async (options: { readonly hostYaml?: string; readonly env?: Record<string, string> }) => {
    const root = tempDir("host-origins-")
    roots.push(root)
    const panelRoot = writePanelRoot(join(root.path, "panel"))
    await install(root.path, fixture("runtime", "probe"))
    if (options.hostYaml !== undefined) {
      mkdirSync(join(root.path, "config"), { recursive: true })
      writeFileSync(join(root.path, "config", "host.yaml"), options.hostYaml)
    }
    const server = await startServer(root.path, {
      env: { HOST_PANEL_DRIVER: "pterodactyl", HOST_PANEL_URL: standIn.url, HOST_PANEL_ROOT: panelRoot, ...options.env }
    })
    servers.push(server)
    return server
  }

  beforeAll(async () => {
    standIn = await startPanelStandIn({ users: people, servers: machines })
    ;[proxied, direct, configured] = await Promise.all([
      start({}),
      start({ hostYaml: "trusted_proxies: [10.0.0.0/8]\n" }),
      start({ env: { HOST_BASE_URL: "https://panel.example:8443" } })
    ])
  }, 90_000)
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    await standIn?.close()
    for (const root of roots) root.cleanup()
  })

  const echo = (server: RunningServer) => `${server.url}/api/client/host/acme/probe/echo`
  const hostOf = (server: RunningServer) => new URL(server.url).host

  it("without base_url or a proxy's headers: the request's own Host on http, scheme and port compared", async () => {
    const here = `http://${hostOf(proxied)}`
    expect((await post(echo(proxied), { ...signedIn, origin: here })).status).toBe(200)
    expect((await post(echo(proxied), { ...signedIn })).status).toBe(200)
    // Another scheme: the host and port alone do not make the panel's origin.
    const https = await post(echo(proxied), { ...signedIn, origin: `https://${hostOf(proxied)}` })
    expect(https.status).toBe(403)
    expect(https.json?.errors?.[0]?.code).toBe("CsrfTokenMismatch")
    // Another port.
    expect((await post(echo(proxied), { ...signedIn, origin: "http://127.0.0.1:1" })).status).toBe(403)
    // A default port is the same origin as none (Host: panel.example, Origin http://panel.example:80).
    expect((await post(echo(direct), { ...signedIn, host: "panel.example", origin: "http://panel.example:80" })).status).toBe(200)
  })

  it("from a trusted proxy, X-Forwarded-Host and X-Forwarded-Proto name the panel's origin (a non-default port kept)", async () => {
    const forwarded = { ...signedIn, "x-forwarded-host": "panel.example:8443", "x-forwarded-proto": "https" }
    expect((await post(echo(proxied), { ...forwarded, origin: "https://panel.example:8443" })).status).toBe(200)
    expect((await post(echo(proxied), { ...forwarded, origin: `http://${hostOf(proxied)}` })).status).toBe(403)
    expect((await post(echo(proxied), { ...forwarded, origin: "http://panel.example:8443" })).status).toBe(403)
    // A proxy that passes Host with its port and only X-Forwarded-Proto.
    expect((await post(echo(proxied), { ...signedIn, host: "panel.example:8443", "x-forwarded-proto": "https", origin: "https://panel.example:8443" })).status)
      .toBe(200)
  })

  it("from a peer that is not a trusted proxy, the forwarded headers are ignored", async () => {
    const forwarded = { ...signedIn, "x-forwarded-host": "panel.example:8443", "x-forwarded-proto": "https" }
    const spoofed = await post(echo(direct), { ...forwarded, origin: "https://panel.example:8443" })
    expect(spoofed.status).toBe(403)
    expect(detail(spoofed)).toContain(`not the panel's origin "http://${hostOf(direct)}"`)
    expect((await post(echo(direct), { ...forwarded, origin: `http://${hostOf(direct)}` })).status).toBe(200)
  })

  it("base_url wins over the forwarded headers and the Host", async () => {
    const forwarded = { ...signedIn, "x-forwarded-host": "other.example", "x-forwarded-proto": "http" }
    expect((await post(echo(configured), { ...forwarded, origin: "https://panel.example:8443" })).status).toBe(200)
    expect((await post(echo(configured), { ...forwarded, origin: "http://other.example" })).status).toBe(403)
    const own = await post(echo(configured), { ...signedIn, origin: `http://${hostOf(configured)}` })
    expect(own.status).toBe(403)
    expect(detail(own)).toContain(`Origin "http://${hostOf(configured)}" is not the panel's origin "https://panel.example:8443"`)
  })

  it("a refusal names the panel's rule — X-XSRF-TOKEN and the XSRF-TOKEN cookie — on every route, never X-CSRF-Token", async () => {
    const session = { cookie: "pterodactyl_session=sess-alice" }
    const admin = { cookie: "pterodactyl_session=sess-admin" }
    const refusals = [
      await post(echo(proxied), session),
      await post(echo(proxied), { ...signedIn, origin: "https://evil.example" }),
      await post(`${proxied.url}/api/client/host/diagnostics`, session, JSON.stringify({ extensionId: "acme/probe", message: "x" })),
      await post(`${proxied.url}/admin/host/api/reconcile`, admin, "")
    ]
    for (const refusal of refusals) {
      expect(refusal.status).toBe(403)
      expect(refusal.json?.errors?.[0]?.code).toBe("CsrfTokenMismatch")
      expect(detail(refusal)).toContain("X-XSRF-TOKEN header equal to the XSRF-TOKEN cookie")
      expect(detail(refusal)).not.toContain("X-CSRF-Token")
    }
    expect(detail(refusals[1]!)).toContain(`Origin "https://evil.example" is not the panel's origin "http://${hostOf(proxied)}"`)
  })
})
