import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tempDir } from "../support/cli.js"
import { writeExtension } from "../support/extensions.js"
import { type Answer, install, request, type RunningServer, startServer, tokens, writePanelConfig } from "./helpers.js"

// Issue 37 against a real `host serve` on the embedded panel (docs/http.md "Security"): signing out ends
// the session at once, sign-in refuses a cross-site form, every answer carries nosniff and every document
// (HTML, XHTML, SVG, XML) the CSP with frame-ancestors, from Host and from an extension route.

let root: ReturnType<typeof tempDir>
let src: ReturnType<typeof tempDir>
let server: RunningServer

beforeAll(async () => {
  root = tempDir("host-root-")
  src = tempDir("host-src-")
  writePanelConfig(root.path)
  const extension = writeExtension(src.path, {
    id: "acme/docs",
    version: "1.0.0",
    files: {
      "src/routes/web.ts": `import { defineRoutes } from "@host/sdk/server"
const answer = (type: string, body: string) => () => new Response(body, { headers: { "content-type": type } })
export default defineRoutes((r) => {
  r.get("/svg", answer("image/svg+xml", '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'))
  r.get("/xhtml", answer("application/xhtml+xml", '<html xmlns="http://www.w3.org/1999/xhtml"><body>x</body></html>'))
  r.get("/xml", answer("text/xml", "<a/>"))
  r.get("/appxml", answer("application/xml; charset=utf-8", "<a/>"))
  r.get("/text", answer("text/plain", "plain"))
  r.get("/json", () => ({ ok: true }))
})
`
    }
  })
  await install(root.path, extension)
  server = await startServer(root.path)
}, 60_000)

afterAll(async () => {
  await server?.stop()
  root?.cleanup()
  src?.cleanup()
})

/** Signs in with the JSON form; the session cookie (name=value) and its CSRF token. */
const signIn = async (url: string, user: "alice" | "dave" = "dave", headers: Record<string, string> = {}) => {
  const response = await fetch(`${url}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ username: user, token: tokens[user] }),
    redirect: "manual"
  })
  const setCookie = response.headers.get("set-cookie") ?? ""
  const body = (await response.json()) as { data: { csrfToken: string } }
  return { status: response.status, cookie: setCookie.split(";")[0]!, csrfToken: body.data.csrfToken }
}

const csp = (answer: Answer) => answer.headers.get("content-security-policy") ?? ""

describe("embedded sign-out ends the session", () => {
  it("after POST /auth/logout the old cookie answers 401 everywhere, the fast path's answers included", async () => {
    const { cookie, csrfToken } = await signIn(server.url)
    const as = { headers: { cookie } }
    expect((await request(`${server.url}/auth/session`, as)).status).toBe(200)
    expect((await request(`${server.url}/api/client/host/slots`, as)).status).toBe(200)
    const out = await request(`${server.url}/auth/logout`, { method: "POST", headers: { cookie, "x-csrf-token": csrfToken } })
    expect(out.status).toBe(204)
    // The old cookie, replayed: signed out at once, on every kind of endpoint.
    expect((await request(`${server.url}/auth/session`, as)).status).toBe(401)
    expect((await request(`${server.url}/api/client/host/slots`, as)).status).toBe(401)
    expect((await request(`${server.url}/api/client/host/config`, as)).status).toBe(401)
    expect((await request(`${server.url}/api/client/account`, as)).status).toBe(401)
    // The clearing cookie keeps the attributes of the one it replaces (plain HTTP here: no Secure).
    const cleared = out.headers.get("set-cookie") ?? ""
    expect(cleared).toMatch(/^host_session=;/)
    expect(cleared).toContain("HttpOnly")
    expect(cleared).toContain("SameSite=Lax")
    expect(cleared).not.toContain("Secure")
    // Another session of the same user is untouched.
    const other = await signIn(server.url)
    expect((await request(`${server.url}/auth/session`, { headers: { cookie: other.cookie } })).status).toBe(200)
  })

  it("over HTTPS (a trusted proxy's X-Forwarded-Proto) the clearing cookie is Secure too", async () => {
    const https = { "x-forwarded-proto": "https" }
    const { cookie, csrfToken } = await signIn(server.url, "dave", https)
    const out = await request(`${server.url}/auth/logout`, { method: "POST", headers: { ...https, cookie, "x-csrf-token": csrfToken } })
    expect(out.status).toBe(204)
    const cleared = out.headers.get("set-cookie") ?? ""
    expect(cleared).toContain("Secure")
    expect(cleared).toContain("HttpOnly")
    expect(cleared).toContain("SameSite=Lax")
  })
})

describe("sign-in refuses a cross-site form", () => {
  const form = (headers: Record<string, string>) =>
    fetch(`${server.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams({ username: "dave", password: tokens.dave, redirect: "/" }).toString(),
      redirect: "manual"
    })

  it("403 and no cookie for another site's Origin, Origin null, or Sec-Fetch-Site: cross-site", async () => {
    for (const headers of [{ origin: "https://evil.example" }, { origin: "null" }, { "sec-fetch-site": "cross-site" }, {
      origin: `https://${new URL(server.url).host}`
    }]) {
      const answer = await form(headers)
      expect(answer.status, JSON.stringify(headers)).toBe(403)
      expect(answer.headers.get("set-cookie")).toBeNull()
      // The form is answered with the sign-in page, saying why.
      expect(answer.headers.get("content-type")).toContain("text/html")
      expect(await answer.text()).toMatch(/role="alert">sign-in refused: [^\n<]+<\/p>/)
    }
    // A JSON client gets the one-line error body.
    const json = await fetch(`${server.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: "https://evil.example" },
      body: JSON.stringify({ username: "dave", token: tokens.dave })
    })
    expect(json.status).toBe(403)
    expect(json.headers.get("set-cookie")).toBeNull()
    const body = (await json.json()) as { errors: Array<{ detail: string }> }
    expect(body.errors[0]!.detail).toBe(
      `sign-in refused: the form's Origin "https://evil.example" is not the panel's origin "${server.url}"; sign in on the panel's own page`
    )
  })

  it("the panel's own origin, and a client that sends no Origin (curl, scripts), still sign in", async () => {
    for (const headers of [{ origin: server.url }, { origin: server.url, "sec-fetch-site": "same-origin" }, {}]) {
      const answer = await form(headers)
      expect(answer.status, JSON.stringify(headers)).toBe(303)
      expect(answer.headers.get("set-cookie")).toContain("host_session=")
    }
  })
})

describe("every answer carries nosniff; every document the CSP with frame-ancestors", () => {
  it("JSON (the three hot client answers), JS, CSS, errors, redirects, sign-out's 204", async () => {
    const answers = [
      await request(`${server.url}/api/client/host/slots`, { as: "dave" }),
      await request(`${server.url}/api/client/host/extensions`, { as: "dave" }),
      await request(`${server.url}/api/client/host/config`, { as: "dave" }),
      await request(`${server.url}/host/boot.js`),
      await request(`${server.url}/host/bridge.js`),
      await request(`${server.url}/host/utility.css`),
      await request(`${server.url}/api/client/host/slots`),
      await request(`${server.url}/api/client/host/nope/nothing`, { as: "dave" }),
      await request(`${server.url}/server/srv-alice`),
      await request(`${server.url}/host/acme/docs/json`),
      await request(`${server.url}/host/acme/docs/text`),
      await request(`${server.url}/host/ready`)
    ]
    for (const answer of answers) expect(answer.headers.get("x-content-type-options")).toBe("nosniff")
    expect(answers[0]!.status).toBe(200)
    expect(answers[6]!.status).toBe(401)
    expect(answers[8]!.status).toBe(303)
  })

  it("SVG, XHTML and XML from an extension route get the CSP; JSON and plain text do not need it", async () => {
    for (const path of ["svg", "xhtml", "xml", "appxml"]) {
      const answer = await request(`${server.url}/host/acme/docs/${path}`)
      expect(answer.status, path).toBe(200)
      expect(csp(answer), path).toContain("frame-ancestors 'self'")
      expect(csp(answer), path).toContain("default-src 'self'")
      expect(answer.headers.get("x-frame-options"), path).toBe("SAMEORIGIN")
      expect(answer.headers.get("x-content-type-options"), path).toBe("nosniff")
    }
    expect(csp(await request(`${server.url}/auth/login`))).toContain("frame-ancestors 'self'")
  })
})
