import { request as httpRequest } from "node:http"
import { join } from "node:path"
import { expect } from "vitest"
import type { WebServer } from "../../src/panel/PanelFiles.js"
import { install, startServer } from "../http/helpers.js"
import { fixture, runHost } from "../support/cli.js"
import { writePanelFolder } from "../support/panel-folders.js"
import { machines, people, startPanelStandIn } from "../support/pterodactyl-api.js"
import type { RunningWebServer, WebServerOptions } from "../support/web-servers.js"

// One scenario for each real web server (DESIGN §22 "CSRF and origins behind the web server"): a
// Pterodactyl panel on a port that is not 80/443, Host (`host serve`, the pterodactyl driver, the stand-in
// of the panel's client API) behind the snippet `host panel:install` wrote, and a browser's write —
// Origin of the panel, the XSRF cookie and header, the session cookie — that must get through.

interface Answer {
  readonly status: number
  readonly text: string
}

/** One request with exactly these headers (node:http: `Host` as a browser would send it). */
const send = (url: string, options: { readonly method?: string; readonly headers?: Readonly<Record<string, string>>; readonly body?: string }) =>
  new Promise<Answer>((resolve, reject) => {
    const target = new URL(url)
    const outgoing = httpRequest(
      { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: options.method ?? "GET", headers: options.headers },
      (response) => {
        let text = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => (text += chunk))
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text }))
      }
    )
    outgoing.once("error", reject)
    outgoing.end(options.body)
  })

/** The first `event: generation` frame of the events stream, read through the web server while it stays open. */
const firstEvent = (url: string, cookie: string) =>
  new Promise<{ readonly status: number; readonly type: string; readonly frame: string }>((resolve, reject) => {
    const target = new URL(url)
    const outgoing = httpRequest({ host: target.hostname, port: target.port, path: target.pathname, headers: { cookie, accept: "text/event-stream" } }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => {
        text += chunk
        if (/event: generation\n[^]*?\n\n/.test(text)) {
          resolve({ status: response.statusCode ?? 0, type: String(response.headers["content-type"]), frame: text })
          outgoing.destroy()
        }
      })
      response.on("end", () => reject(new Error(`the events stream ended before its first frame: ${response.statusCode} ${text}`)))
    })
    outgoing.once("error", (error) => (outgoing.destroyed ? undefined : reject(error)))
    outgoing.end()
  })

const session = "pterodactyl_session=sess-alice"
const xsrf = { cookie: `${session}; XSRF-TOKEN=tok%3D%3D`, "x-xsrf-token": "tok==" }

export const writesThrough = async (
  kind: WebServer,
  start: (options: WebServerOptions) => Promise<RunningWebServer>,
  temp: (prefix: string) => string,
  panelPage: string
) => {
  const host = temp("host-root-")
  const panel = writePanelFolder(temp("panel-"), "pterodactyl-1.11")
  await install(host, fixture("runtime", "probe"))
  const standIn = await startPanelStandIn({ users: people, servers: machines })
  const server = await startServer(host, { env: { HOST_PANEL_DRIVER: "pterodactyl", HOST_PANEL_URL: standIn.url, HOST_PANEL_ROOT: panel } })
  let web: RunningWebServer | undefined
  try {
    const installed = await runHost(["--root", host, "panel:install", "--panel-root", panel, "--web-server", kind], { env: { HOST_PORT: new URL(server.url).port } })
    expect(installed.code, installed.stderr).toBe(0)
    web = await start({ prefix: temp(`${kind}-`), snippet: join(host, "storage/host/webserver", `${kind}.conf`) })
    const { url } = web
    expect([80, 443]).not.toContain(web.port)
    const echo = `${url}/api/client/host/acme/probe/echo`
    const body = JSON.stringify({ a: 1 })
    const json = { "content-type": "application/json" }

    // The browser on the panel at http://127.0.0.1:<port>: its write reaches the extension.
    const write = await send(echo, { method: "POST", headers: { ...json, ...xsrf, origin: url }, body })
    expect(write.status, `${write.text}\n${web.log()}`).toBe(200)
    expect(JSON.parse(write.text)).toMatchObject({ body: { a: 1 } })
    // The same panel under a name and a non-default port the web server does not listen on itself (a
    // port forward, a load balancer): the browser's Host, port included, is what counts.
    const named = await send(echo, { method: "POST", headers: { ...json, ...xsrf, host: "panel.example:8443", origin: "http://panel.example:8443" }, body })
    expect(named.status, named.text).toBe(200)
    // Another origin is refused, naming the panel's headers and both origins.
    const elsewhere = await send(echo, { method: "POST", headers: { ...json, ...xsrf, origin: "http://127.0.0.1:1" }, body })
    expect(elsewhere.status).toBe(403)
    const refusal = JSON.parse(elsewhere.text) as { errors: Array<{ code: string; detail: string }> }
    expect(refusal.errors[0]!.code).toBe("CsrfTokenMismatch")
    expect(refusal.errors[0]!.detail).toContain(`Origin "http://127.0.0.1:1" is not the panel's origin "${url}"`)
    expect(refusal.errors[0]!.detail).toContain("X-XSRF-TOKEN header equal to the XSRF-TOKEN cookie")
    const tokenless = await send(echo, { method: "POST", headers: { ...json, cookie: session, origin: url }, body })
    expect(tokenless.status).toBe(403)
    expect(tokenless.text).toContain("X-XSRF-TOKEN")
    expect(tokenless.text).not.toContain("X-CSRF-Token")

    // The events stream comes through unbuffered: its first frame arrives while it stays open.
    const event = await firstEvent(`${url}/api/client/host/events`, session)
    expect(event.status).toBe(200)
    expect(event.type).toContain("text/event-stream")
    expect(event.frame).toContain("event: generation")
    // The admin address as people type it, without the final slash, reaches Host (its redirect to the
    // first screen; nginx first adds the slash itself), not the panel.
    const admin = await send(`${url}/admin/host`, {})
    expect([301, 302], `${admin.status} ${admin.text}`).toContain(admin.status)
    expect(admin.text).not.toBe("the panel")
    // The rest of the site stays the panel's.
    expect((await send(`${url}${panelPage}`, {})).text).toBe("the panel")
    // A path that only starts like the admin address is the panel's too: answered as any other panel path.
    expect(await send(`${url}/admin/hostile`, {})).toEqual(await send(`${url}/admin/other`, {}))
  } finally {
    await web?.stop()
    await server.stop()
    await standIn.close()
  }
}
