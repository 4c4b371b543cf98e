import { request as httpRequest } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { slotIds } from "../../src/domain/Slots.js"
import { fixture, tempDir } from "../support/cli.js"
import { install, request, type RunningServer, startServer, writePanelConfig } from "./helpers.js"

// The four client endpoints, /host/ready, static assets, and how extension handlers' results and
// failures are answered — over real HTTP against `host serve`.

const root = tempDir("host-http-")
let server: RunningServer

beforeAll(async () => {
  writePanelConfig(root.path)
  await install(root.path, fixture("extensions", "hello-world"))
  await install(root.path, fixture("extensions", "full"))
  await install(root.path, fixture("runtime", "probe"))
  await install(root.path, fixture("runtime", "boot-throws"))
  server = await startServer(root.path)
})

afterAll(async () => {
  await server?.stop()
  root.cleanup()
})

describe("framework client endpoints", () => {
  it("GET /host/ready answers the generation", async () => {
    const ready = await request(`${server.url}/host/ready`)
    expect(ready.status).toBe(200)
    expect(ready.json).toEqual({ status: "ok", generation: expect.any(Number), unavailable: [] })
  })

  it("need an authenticated user", async () => {
    for (const path of ["slots", "extensions", "config", "extensions/acme/full/settings"]) {
      const answer = await request(`${server.url}/api/client/host/${path}`)
      expect(answer.status, path).toBe(401)
      expect(answer.json).toEqual({ errors: [{ code: "Unauthorized", status: "401", detail: expect.any(String) }] })
    }
    const wrong = await request(`${server.url}/api/client/host/slots`, { headers: { authorization: "Bearer nope" } })
    expect(wrong.status).toBe(401)
  })

  it("/slots lists enabled extensions' registrations per slot, in order", async () => {
    const answer = await request(`${server.url}/api/client/host/slots`, { as: "dave" })
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toContain("application/json")
    expect(answer.json).toEqual({
      data: {
        "navbar.after": [{ extensionId: "acme/probe", order: 3, source: "bundle" }],
        "server.console.sidebar": [{ extensionId: "acme/full", order: 5, source: "bundle" }],
        "dashboard.serverrow.limits": [{ extensionId: "acme/full", order: 0, source: "bundle" }],
        "dashboard.widgets": [
          { extensionId: "acme/probe", order: 1, source: "bundle" },
          { extensionId: "acme/hello-world", order: 10, source: "bundle" },
          { extensionId: "acme/full", order: 20, source: "bundle" }
        ]
      }
    })
  })

  it("/extensions describes enabled, booted extensions", async () => {
    const answer = await request(`${server.url}/api/client/host/extensions`, { as: "alice" })
    expect(answer.status).toBe(200)
    const data = (answer.json as { data: Array<Record<string, unknown>> }).data
    expect(data.map((extension) => extension.id)).toEqual(["acme/full", "acme/hello-world", "acme/probe"])
    const full = data[0]!
    expect(Object.keys(full).sort()).toEqual(
      ["bundle", "cssIsolation", "description", "id", "name", "routes", "slots", "styles", "version"]
    )
    expect(full).toMatchObject({
      id: "acme/full",
      name: "Full Example",
      version: "1.2.0",
      bundle: expect.stringMatching(/^\/host\/ext\/acme\/full\/resources\/frontend\/dist\/extension\.js\?v=\w+$/),
      styles: expect.stringMatching(/^\/host\/ext\/acme\/full\/resources\/frontend\/dist\/extension\.css\?v=\w+$/),
      cssIsolation: { mode: "root-class", class: "host-ext--acme-full" },
      slots: [
        { slot: "dashboard.widgets", extensionId: "acme/full", order: 20, source: "bundle" },
        { slot: "dashboard.serverrow.limits", extensionId: "acme/full", order: 0, source: "bundle" },
        { slot: "server.console.sidebar", extensionId: "acme/full", order: 5, source: "bundle" }
      ]
    })
    expect(full.routes).toContainEqual({
      group: "api-client",
      method: "GET",
      path: "/stats",
      url: "/api/client/host/acme/full/stats",
      permission: "full.view"
    })
    expect(data[1]).toMatchObject({ id: "acme/hello-world", styles: null, cssIsolation: null, routes: [] })
  })

  it("/config carries version, base URL, the 65 slot ids, the theme and the extensions", async () => {
    const answer = await request(`${server.url}/api/client/host/config`, { as: "bob" })
    expect(answer.status).toBe(200)
    const data = (answer.json as { data: Record<string, unknown> }).data
    expect(data.version).toBe("1.2.3")
    // No base_url is configured: the address the server listens on, port 0 resolved.
    expect(data.baseUrl).toBe(server.url)
    expect(data.slots).toEqual(slotIds)
    expect((data.slots as Array<string>).length).toBe(65)
    expect(data.theme).toMatchObject({ variables: { "--host-bg-secondary": expect.any(String), "--host-radius-md": expect.any(String) } })
    expect((data.extensions as Array<{ id: string }>).map((e) => e.id)).toEqual(["acme/full", "acme/hello-world", "acme/probe"])
  })

  it("answer 304 to a matching If-None-Match", async () => {
    const first = await request(`${server.url}/api/client/host/slots`, { as: "dave" })
    const etag = first.headers.get("etag")!
    expect(etag).toMatch(/^".+"$/)
    const second = await request(`${server.url}/api/client/host/slots`, { as: "dave", headers: { "if-none-match": etag } })
    expect(second.status).toBe(304)
  })

  it("/extensions/{vendor}/{name}/settings serves public fields only (stored or default); 404 unknown/quarantined", async () => {
    const full = await request(`${server.url}/api/client/host/extensions/acme/full/settings`, { as: "dave" })
    expect(full.json).toEqual({ data: { theme_color: "#3366ff", mode: "compact", refreshRate: 30 } })
    const probe = await request(`${server.url}/api/client/host/extensions/acme/probe/settings`, { as: "dave" })
    expect(probe.json).toEqual({ data: { greeting: "hello" } })
    expect((await request(`${server.url}/api/client/host/extensions/acme/nope/settings`, { as: "dave" })).status).toBe(404)
    expect((await request(`${server.url}/api/client/host/extensions/acme/boot-throws/settings`, { as: "dave" })).status).toBe(404)
  })
})

describe("static assets", () => {
  it("serves bundles, styles and chunks with ETag and cache headers", async () => {
    const extensions = await request(`${server.url}/api/client/host/extensions`, { as: "dave" })
    const full = (extensions.json as { data: Array<{ id: string; bundle: string }> }).data[0]!
    const bundle = await request(`${server.url}${full.bundle}`)
    expect(bundle.status).toBe(200)
    expect(bundle.headers.get("content-type")).toContain("text/javascript")
    expect(bundle.headers.get("cache-control")).toContain("immutable")
    expect(bundle.text).toContain("createExtension")
    const etag = bundle.headers.get("etag")!
    expect((await request(`${server.url}${full.bundle}`, { headers: { "if-none-match": etag } })).status).toBe(304)
    const chunk = await request(`${server.url}/host/ext/acme/probe/resources/frontend/dist/chunks/part.js`)
    expect(chunk.status).toBe(200)
    expect(chunk.headers.get("cache-control")).toBe("public, max-age=0, must-revalidate")
    const css = await request(`${server.url}/host/ext/acme/probe/resources/frontend/dist/extension.css`)
    expect(css.headers.get("content-type")).toContain("text/css")
  })

  it("never serves anything else of the extension", async () => {
    for (const path of [
      "/host/ext/acme/probe/extension.yaml",
      "/host/ext/acme/probe/src/routes/api-client.ts",
      "/host/ext/acme/probe/resources/frontend/dist/../../../extension.yaml",
      "/host/ext/acme/probe/resources/frontend/dist/%2e%2e/%2e%2e/%2e%2e/extension.yaml",
      "/host/ext/acme/boot-throws/resources/frontend/dist/extension.js",
      "/host/ext/acme/nope/x.js"
    ]) {
      const answer = await request(`${server.url}${path}`)
      expect(answer.status, path).toBe(404)
    }
  })
})

describe("extension handlers", () => {
  it("may return a value, a Promise or a Response", async () => {
    expect((await request(`${server.url}/api/client/host/acme/probe/async`, { as: "dave" })).json).toEqual({ async: true })
    const response = await request(`${server.url}/api/client/host/acme/probe/response`, { as: "dave" })
    expect(response.status).toBe(202)
    expect(response.text).toBe("plain text")
  })

  it("may await their SQL statements (the full fixture counts rows of its own table)", async () => {
    const answer = await request(`${server.url}/api/client/host/acme/full/stats`, { as: "admin" })
    expect(answer.status).toBe(200)
    expect(answer.json).toEqual({ visits: 0, user: "admin" })
  })

  it("get params, query, body, user and all settings", async () => {
    const echo = await request(`${server.url}/api/client/host/acme/probe/echo?x=1`, { as: "dave", method: "POST", body: { a: [1, 2] } })
    expect(echo.json).toEqual({ body: { a: [1, 2] }, query: { x: "1" } })
    const settings = await request(`${server.url}/api/client/host/acme/probe/settings`, { as: "dave" })
    expect(settings.json).toEqual({ greeting: "hello", secret_key: "s3cr3t" })
  })

  it("a thrown error is a 500 that leaks nothing; abort() answers its status", async () => {
    const boom = await request(`${server.url}/api/client/host/acme/probe/boom`, { as: "dave" })
    expect(boom.status).toBe(500)
    expect(boom.json).toEqual({ errors: [{ code: "InternalServerError", status: "500", detail: "the server failed to handle this request" }] })
    expect(boom.text).not.toContain("hunter2")
    const denied = await request(`${server.url}/api/client/host/acme/probe/denied`, { as: "dave" })
    expect(denied.status).toBe(403)
    expect(denied.json).toEqual({ errors: [{ code: "Forbidden", status: "403", detail: "probes are not for you" }] })
  })

  it("HasMiddleware runs before the handler and may answer itself", async () => {
    const blocked = await request(`${server.url}/api/client/host/acme/probe/open?blocked=1`, { as: "dave" })
    expect(blocked.status).toBe(418)
    expect(blocked.text).toBe("blocked by middleware")
  })

  it("bodies over 1 MiB are refused (uploads have their own limit), GET bodies are never read, a bad Host is no 500", async () => {
    const big = "x".repeat(1024 * 1024 + 100)
    const refused = await fetch(`${server.url}/host/acme/probe/submit`, { method: "POST", body: big, headers: { "content-type": "text/plain" } })
    expect(refused.status).toBe(413)
    expect(await refused.json()).toMatchObject({ errors: [{ code: "PayloadTooLarge", status: "413" }] })
    expect((await request(`${server.url}/host/acme/probe/open`)).status).toBe(200)
    const badHost = await new Promise<number>((resolve, reject) => {
      const url = new URL(server.url)
      const call = httpRequest({ host: url.hostname, port: url.port, path: "/host/acme/probe/open", headers: { host: "a b" } }, (answer) => {
        answer.resume()
        resolve(answer.statusCode ?? 0)
      })
      call.on("error", reject)
      call.end()
    })
    expect(badHost).toBe(200)
  })

  it("unknown routes, methods and extensions are JSON errors", async () => {
    const missing = await request(`${server.url}/api/client/host/acme/probe/nope`, { as: "dave" })
    expect(missing.status).toBe(404)
    expect(missing.json).toMatchObject({ errors: [{ code: "NotFound", status: "404" }] })
    expect((await request(`${server.url}/api/client/host/acme/probe/open`, { as: "dave", method: "DELETE" })).status).toBe(405)
    expect((await request(`${server.url}/api/client/host/acme/unknown/open`, { as: "dave" })).status).toBe(404)
    expect((await request(`${server.url}/no/such/path`)).json).toMatchObject({ errors: [{ code: "NotFound", status: "404" }] })
  })
})
