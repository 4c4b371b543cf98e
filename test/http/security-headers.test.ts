import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tempDir } from "../support/cli.js"
import { writeExtension } from "../support/extensions.js"
import { type Answer, install, request, type RunningServer, startServer, writePanelConfig } from "./helpers.js"

// Security headers on every HTML answer (docs/http.md "Security headers") against a real `host serve`:
// the sign-in page, the panel shell, its 404 page, the admin screens and an extension's own HTML; an
// extension web route that sets its own policy keeps it.

let root: ReturnType<typeof tempDir>
let src: ReturnType<typeof tempDir>
let server: RunningServer

beforeAll(async () => {
  root = tempDir("host-root-")
  src = tempDir("host-src-")
  writePanelConfig(root.path)
  const extension = writeExtension(src.path, {
    id: "acme/pages",
    version: "1.0.0",
    files: {
      "src/routes/web.ts": `import { defineRoutes } from "@host/sdk/server"
export default defineRoutes((r) => {
  r.get("/plain", () => new Response("<h1>plain</h1>", { headers: { "content-type": "text/html; charset=utf-8" } }))
  r.get("/widened", () => new Response("<h1>widened</h1>", {
    headers: { "content-type": "text/html", "content-security-policy": "frame-ancestors https://dashboard.example" }
  }))
  r.get("/json", () => ({ ok: true }))
})
`
    }
  })
  await install(root.path, extension)
  server = await startServer(root.path)
})

afterAll(async () => {
  await server?.stop()
  root?.cleanup()
  src?.cleanup()
})

const directives = (answer: Answer) =>
  new Map((answer.headers.get("content-security-policy") ?? "").split(";").map((part) => {
    const [name, ...values] = part.trim().split(/\s+/)
    return [name!, values] as const
  }))

const expectHardened = (answer: Answer) => {
  expect(answer.headers.get("content-type")).toContain("text/html")
  const csp = directives(answer)
  expect(csp.get("frame-ancestors")).toEqual(["'self'"])
  expect(csp.get("default-src")).toEqual(["'self'"])
  expect(csp.get("object-src")).toEqual(["'none'"])
  // No script may run from inline source without the page's nonce.
  expect(csp.get("script-src")?.some((value) => value === "'unsafe-inline'" || value === "'unsafe-eval'")).toBe(false)
  expect(answer.headers.get("x-content-type-options")).toBe("nosniff")
  expect(answer.headers.get("referrer-policy")).toBe("same-origin")
  expect(answer.headers.get("x-frame-options")).toBe("SAMEORIGIN")
}

/** The nonce the policy allows, and that every inline script of the page carries it. */
const nonceOf = (answer: Answer) => {
  const nonce = directives(answer).get("script-src")?.find((value) => value.startsWith("'nonce-"))?.slice(7, -1)
  expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/)
  const inline = [...answer.text.matchAll(/<script(?![^>]*\bsrc=)([^>]*)>/g)].map((match) => match[1])
  expect(inline.length).toBeGreaterThan(0)
  for (const attributes of inline) expect(attributes).toContain(`nonce="${nonce}"`)
  return nonce
}

describe("security headers", () => {
  it("the sign-in page", async () => {
    const page = await request(`${server.url}/auth/login`)
    expect(page.status).toBe(200)
    expectHardened(page)
    const failed = await request(`${server.url}/auth/login`, {
      method: "POST",
      body: "username=alice&password=wrong",
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
    expect(failed.status).toBe(401)
    expectHardened(failed)
  })

  it("the panel shell and its 404 page, with a fresh nonce each time", async () => {
    const first = await request(`${server.url}/server/srv-alice`, { as: "alice" })
    expect(first.status).toBe(200)
    expectHardened(first)
    const second = await request(`${server.url}/server/srv-alice`, { as: "alice" })
    expect(nonceOf(second)).not.toBe(nonceOf(first))
    const missing = await request(`${server.url}/no/such/page`, { as: "alice", headers: { accept: "text/html" } })
    expect(missing.status).toBe(404)
    expectHardened(missing)
    nonceOf(missing)
  })

  it("the admin screens", async () => {
    for (const path of ["/admin/host/extensions", "/admin/host/extensions/acme/pages", "/admin/host/activity"]) {
      const page = await request(`${server.url}${path}`, { as: "admin" })
      expect(page.status, path).toBe(200)
      expectHardened(page)
      nonceOf(page)
    }
  })

  it("an extension's HTML gets the policy unless its route sets its own, which it keeps", async () => {
    const plain = await request(`${server.url}/host/acme/pages/plain`, { as: "alice" })
    expect(plain.status, plain.text).toBe(200)
    expectHardened(plain)
    expect(directives(plain).get("script-src")).toEqual(["'self'"])
    const widened = await request(`${server.url}/host/acme/pages/widened`, { as: "alice" })
    expect(widened.status).toBe(200)
    expect(widened.headers.get("content-security-policy")).toBe("frame-ancestors https://dashboard.example")
    expect(widened.headers.get("x-content-type-options")).toBe("nosniff")
    // JSON is not a page: no CSP needed.
    const json = await request(`${server.url}/host/acme/pages/json`, { as: "alice" })
    expect(json.headers.get("content-security-policy")).toBeNull()
  })
})
