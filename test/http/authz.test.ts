import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { HostApi } from "../../src/http/contracts/Api.js"
import { type Caller, endpointsOf } from "../../src/http/contracts/Security.js"
import { fixture, runHost, tempDir } from "../support/cli.js"
import { install, type PanelUserName, request, type RunningServer, startServer, tokens, waitFor, writePanelConfig } from "./helpers.js"

// Who may call what: anonymous, a user, a subuser with and without the permission, the server owner
// and an admin, against routes of the three groups with and without a declared permission; `{server}`
// access; the session cookie of the login form and its CSRF token.

const root = tempDir("host-authz-")
let server: RunningServer

beforeAll(async () => {
  writePanelConfig(root.path)
  await install(root.path, fixture("runtime", "probe"))
  server = await startServer(root.path)
})

afterAll(async () => {
  await server?.stop()
  root.cleanup()
})

type Who = "anonymous" | PanelUserName
const who: ReadonlyArray<Who> = ["anonymous", "dave", "bob", "carol", "alice", "admin"]

// dave: a user without servers; bob: subuser with probe.view; carol: subuser without; alice: owner.
const matrix: ReadonlyArray<readonly [path: string, expected: Readonly<Record<Who, number>>]> = [
  ["/api/client/host/acme/probe/open", { anonymous: 401, dave: 200, bob: 200, carol: 200, alice: 200, admin: 200 }],
  ["/api/client/host/acme/probe/secret", { anonymous: 401, dave: 403, bob: 200, carol: 403, alice: 200, admin: 200 }],
  ["/admin/host/acme/probe/open", { anonymous: 401, dave: 403, bob: 403, carol: 403, alice: 403, admin: 200 }],
  ["/admin/host/acme/probe/secret", { anonymous: 401, dave: 403, bob: 403, carol: 403, alice: 403, admin: 200 }],
  ["/host/acme/probe/open", { anonymous: 200, dave: 200, bob: 200, carol: 200, alice: 200, admin: 200 }],
  ["/host/acme/probe/secret", { anonymous: 401, dave: 403, bob: 200, carol: 403, alice: 200, admin: 200 }],
  // {server}: no access is 404 (the server's existence is not revealed); then the permission on that server.
  ["/api/client/host/acme/probe/servers/srv-alice/info", { anonymous: 401, dave: 404, bob: 200, carol: 403, alice: 200, admin: 200 }],
  ["/api/client/host/acme/probe/servers/srv-alice/any", { anonymous: 401, dave: 404, bob: 200, carol: 200, alice: 200, admin: 200 }],
  ["/api/client/host/acme/probe/servers/srv-other/any", { anonymous: 401, dave: 404, bob: 404, carol: 404, alice: 404, admin: 200 }],
  ["/api/client/host/acme/probe/servers/srv-missing/any", { anonymous: 401, dave: 404, bob: 404, carol: 404, alice: 404, admin: 404 }]
]

describe("route groups × users", () => {
  for (const [path, expected] of matrix) {
    it(path, async () => {
      const seen: Record<string, number> = {}
      for (const user of who) {
        const answer = await request(`${server.url}${path}`, user === "anonymous" ? {} : { as: user })
        seen[user] = answer.status
        if (answer.status >= 400) {
          expect(answer.json, `${user} ${path}`).toEqual({
            errors: [{ code: expect.any(String), status: String(answer.status), detail: expect.any(String) }]
          })
        }
      }
      expect(seen).toEqual(expected)
    })
  }

  it("handlers see the user and the server with the user's permissions", async () => {
    const answer = await request(`${server.url}/api/client/host/acme/probe/servers/srv-alice/info`, { as: "bob" })
    expect(answer.json).toEqual({ server: { uuid: "srv-alice", name: "Alice's server", permissions: ["probe.view"] } })
    expect((await request(`${server.url}/host/acme/probe/open`, { as: "carol" })).json).toEqual({ web: true, user: "carol" })
  })
})

// R5 (docs/operations.md#reliability-suites): the whole authorization matrix as one table. Every
// caller (anonymous; dave, a user without servers; bob, a subuser with probe.view; carol, a subuser
// without it; alice, the owner; an admin) by API token and by the login form's session (with its CSRF
// token on unsafe methods), against the three route groups, the framework's client endpoints and the
// admin API. One test: every mismatch is listed at once.
type Credential = "token" | "session"
const callers: ReadonlyArray<Who> = ["anonymous", "dave", "bob", "carol", "alice", "admin"]
const user200 = { anonymous: 401, dave: 200, bob: 200, carol: 200, alice: 200, admin: 200 } as const
const adminOnly = { anonymous: 401, dave: 403, bob: 403, carol: 403, alice: 403, admin: 200 } as const
const authorizationMatrix: ReadonlyArray<readonly [method: "GET" | "POST", path: string, expected: Readonly<Record<Who, number>>]> = [
  // api-client group
  ["GET", "/api/client/host/acme/probe/open", user200],
  ["GET", "/api/client/host/acme/probe/secret", { anonymous: 401, dave: 403, bob: 200, carol: 403, alice: 200, admin: 200 }],
  ["GET", "/api/client/host/acme/probe/servers/srv-alice/info", { anonymous: 401, dave: 404, bob: 200, carol: 403, alice: 200, admin: 200 }],
  ["GET", "/api/client/host/acme/probe/servers/srv-other/any", { anonymous: 401, dave: 404, bob: 404, carol: 404, alice: 404, admin: 200 }],
  ["POST", "/api/client/host/acme/probe/echo", user200],
  // admin group
  ["GET", "/admin/host/acme/probe/open", adminOnly],
  ["GET", "/admin/host/acme/probe/secret", adminOnly],
  // web group
  ["GET", "/host/acme/probe/open", { anonymous: 200, dave: 200, bob: 200, carol: 200, alice: 200, admin: 200 }],
  ["GET", "/host/acme/probe/secret", { anonymous: 401, dave: 403, bob: 200, carol: 403, alice: 200, admin: 200 }],
  ["POST", "/host/acme/probe/submit", { anonymous: 200, dave: 200, bob: 200, carol: 200, alice: 200, admin: 200 }]
  // Host's own endpoints (client, panel JSON, admin API, webhook) are not listed here: the test below takes
  // them from the HttpApi itself, so an endpoint added to it is covered without a line of its own.
]

/** One session per caller, signed in once for both R5 tests (sign-in is rate limited per address). */
let sessionsMade: Promise<Map<Who, { cookie: string; csrf: string }>> | undefined
const signedIn = () =>
  sessionsMade ??= (async () => {
    const sessions = new Map<Who, { cookie: string; csrf: string }>()
    for (const caller of callers) {
      if (caller === "anonymous") continue
      const session = await login(caller)
      expect(session.status, `login ${caller}`).toBe(200)
      sessions.set(caller, { cookie: session.cookie, csrf: session.csrf! })
    }
    return sessions
  })()

describe("R5: the authorization matrix", () => {
  it("every caller × credential × route answers as the table says, with an error body for every refusal", async () => {
    const sessions = await signedIn()
    const mismatches: Array<string> = []
    for (const credential of ["token", "session"] as const satisfies ReadonlyArray<Credential>) {
      for (const [method, path, expected] of authorizationMatrix) {
        for (const caller of callers) {
          const session = sessions.get(caller)
          const options = caller === "anonymous"
            ? {}
            : credential === "token"
            ? { as: caller as PanelUserName }
            : { headers: { cookie: session!.cookie, ...(method === "POST" ? { "x-csrf-token": session!.csrf } : {}) } }
          const answer = await request(`${server.url}${path}`, { method, ...options, ...(method === "POST" ? { body: { probe: true } } : {}) })
          if (answer.status !== expected[caller]) {
            mismatches.push(`${credential} ${caller} ${method} ${path}: ${answer.status}, expected ${expected[caller]}`)
          }
          const errorBody = answer.json as { errors?: ReadonlyArray<{ code?: unknown; status?: unknown; detail?: unknown }> } | undefined
          const first = errorBody?.errors?.[0]
          if (answer.status >= 400 && (typeof first?.code !== "string" || first.status !== String(answer.status) || typeof first.detail !== "string")) {
            mismatches.push(`${credential} ${caller} ${method} ${path}: ${answer.status} without the error body`)
          }
        }
      }
    }
    expect(mismatches).toEqual([])
  }, 120_000)
})

// Every endpoint of the HttpApi, each tried by every caller and credential against the caller its
// contract states: the middleware on the endpoint (http/contracts/Security.ts; `endpointsOf` reads it back). Unsafe methods carry a body no payload schema accepts:
// the caller is judged before the body, so an allowed caller gets the endpoint's 400 (or its own refusal
// of the dummy path) and nothing changes.
const refused = (status: number) => status === 401 || status === 403
const answersAsDeclared: Record<Caller, (caller: Who, status: number) => boolean> = {
  anyone: (_caller, status) => !refused(status),
  user: (caller, status) => (caller === "anonymous" ? status === 401 : !refused(status)),
  // dave has no access to srv-alice (404: its existence is not revealed); bob and carol are subusers
  // without the grant to manage access; alice owns it.
  server: (caller, status) =>
    caller === "anonymous"
      ? status === 401
      : caller === "dave"
      ? status === 404
      : caller === "bob" || caller === "carol"
      ? status === 403
      : !refused(status) && status !== 404,
  admin: (caller, status) => (caller === "anonymous" ? status === 401 : caller === "admin" ? !refused(status) : status === 403),
  "admin-or-signed": (caller, status) => (caller === "anonymous" ? status === 401 : caller === "admin" ? !refused(status) : status === 403)
}
const concrete = (path: string) =>
  path.replace(/:server\b/, "srv-alice").replace(/:action\b/, "enable").replace(/:vendor\b/, "acme").replace(/:name\b/, "probe")
    .replace(/:\w+/g, "dummy")

describe("R5: every endpoint of the HttpApi", () => {
  it("answers every caller × credential as the caller its contract declares", async () => {
    const sessions = await signedIn()
    const endpoints = endpointsOf(HostApi)
    expect(endpoints.length).toBeGreaterThan(30)
    const mismatches: Array<string> = []
    for (const credential of ["token", "session"] as const satisfies ReadonlyArray<Credential>) {
      for (const endpoint of endpoints) {
        for (const caller of callers) {
          const session = sessions.get(caller)
          const unsafe = endpoint.method !== "GET"
          const headers: Record<string, string> = unsafe ? { "content-type": "application/json" } : {}
          if (caller !== "anonymous" && credential === "session") {
            headers.cookie = session!.cookie
            if (unsafe) headers["x-csrf-token"] = session!.csrf
          }
          const answer = await request(`${server.url}${concrete(endpoint.path)}`, {
            method: endpoint.method,
            headers,
            ...(caller !== "anonymous" && credential === "token" ? { as: caller as PanelUserName } : {}),
            ...(unsafe ? { body: "not json" } : {})
          })
          if (!answersAsDeclared[endpoint.caller](caller, answer.status)) {
            mismatches.push(`${credential} ${caller} ${endpoint.method} ${endpoint.path} (${endpoint.caller}): ${answer.status} ${answer.text.slice(0, 160)}`)
          }
          // A refusal of the caller is the error body with its own code: Unauthorized signed out, Forbidden otherwise.
          const code = (answer.json as { errors?: ReadonlyArray<{ code?: unknown }> } | undefined)?.errors?.[0]?.code
          if (refused(answer.status) && code !== (answer.status === 401 ? "Unauthorized" : "Forbidden")) {
            mismatches.push(`${credential} ${caller} ${endpoint.method} ${endpoint.path}: ${answer.status} with code ${String(code)}`)
          }
        }
      }
    }
    expect(mismatches).toEqual([])
  }, 120_000)
})

const login = async (username: PanelUserName) => {
  const response = await fetch(`${server.url}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username, token: tokens[username] })
  })
  const cookie = response.headers.get("set-cookie") ?? ""
  const body = (await response.json()) as { data: { csrfToken: string } }
  return { status: response.status, setCookie: cookie, cookie: cookie.split(";")[0]!, csrf: body.data?.csrfToken }
}

describe("session login and CSRF", () => {
  it("the login form renders, escaped, with the auth slots", async () => {
    const page = await fetch(`${server.url}/auth/login?redirect=${encodeURIComponent("/x\"><script>")}`)
    const html = await page.text()
    expect(page.status).toBe(200)
    expect(html).toContain('data-host-slot="auth.container.before"')
    expect(html).not.toContain("<script>")
  })

  it("a wrong token is refused", async () => {
    const form = await fetch(`${server.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "username=bob&password=wrong"
    })
    expect(form.status).toBe(401)
    expect(form.headers.get("set-cookie")).toBeNull()
  })

  it("the form sets a signed, HttpOnly, SameSite session cookie and redirects", async () => {
    const form = await fetch(`${server.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `username=bob&password=${tokens.bob}&redirect=%2Fdashboard`,
      redirect: "manual"
    })
    expect(form.status).toBe(303)
    expect(form.headers.get("location")).toBe("/dashboard")
    const cookie = form.headers.get("set-cookie")!
    expect(cookie).toMatch(/^host_session=[^;]+/)
    expect(cookie).toContain("HttpOnly")
    expect(cookie).toMatch(/SameSite=Lax/i)
  })

  it("unsafe api-client requests made with the session cookie need its CSRF token too (a Bearer token does not)", async () => {
    const bob = await login("bob")
    const echo = `${server.url}/api/client/host/acme/probe/echo`
    const noToken = await request(echo, { method: "POST", headers: { cookie: bob.cookie }, body: { x: 1 } })
    expect(noToken.status).toBe(403)
    expect(noToken.json).toMatchObject({ errors: [{ code: "CsrfTokenMismatch" }] })
    expect((await request(echo, { method: "POST", headers: { cookie: bob.cookie, "x-csrf-token": bob.csrf! }, body: { x: 1 } })).status).toBe(200)
    expect((await request(echo, { method: "POST", as: "bob", body: { x: 1 } })).status).toBe(200)
  })

  it("redirects only to paths of this site", async () => {
    for (const [redirect, location] of [
      ["/servers?page=2", "/servers?page=2"],
      ["//evil.example", "/"],
      ["/\\evil.example", "/"],
      ["/\t/evil.example", "/"],
      ["https://evil.example/", "/"]
    ] as const) {
      const form = await fetch(`${server.url}/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `username=bob&password=${tokens.bob}&redirect=${encodeURIComponent(redirect)}`,
        redirect: "manual"
      })
      expect(form.headers.get("location"), redirect).toBe(location)
    }
  })

  it("a session still works behind a proxy that sends its own Authorization scheme", async () => {
    const bob = await login("bob")
    const answer = await request(`${server.url}/auth/session`, { headers: { cookie: bob.cookie, authorization: "Basic b3BzOnB3" } })
    expect(answer.status).toBe(200)
    expect(answer.json).toMatchObject({ data: { user: { username: "bob" } } })
  })

  it("a session authenticates all three groups; unsafe methods need its CSRF token", async () => {
    const admin = await login("admin")
    expect(admin.status).toBe(200)
    const headers = { cookie: admin.cookie }
    expect((await request(`${server.url}/api/client/host/acme/probe/secret`, { headers })).status).toBe(200)
    expect((await request(`${server.url}/api/client/host/slots`, { headers })).status).toBe(200)
    expect((await request(`${server.url}/admin/host/acme/probe/secret`, { headers })).status).toBe(200)
    const session = await request(`${server.url}/auth/session`, { headers })
    expect(session.json).toMatchObject({ data: { user: { username: "admin", admin: true }, csrfToken: admin.csrf } })

    const noToken = await request(`${server.url}/host/acme/probe/submit`, { method: "POST", headers, body: { a: 1 } })
    expect(noToken.status).toBe(403)
    expect(noToken.json).toMatchObject({ errors: [{ code: "CsrfTokenMismatch" }] })
    const wrongToken = await request(`${server.url}/host/acme/probe/submit`, {
      method: "POST",
      headers: { ...headers, "x-csrf-token": "nope" },
      body: { a: 1 }
    })
    expect(wrongToken.status).toBe(403)
    const withToken = await request(`${server.url}/host/acme/probe/submit`, {
      method: "POST",
      headers: { ...headers, "x-csrf-token": admin.csrf! },
      body: { a: 1 }
    })
    expect(withToken.status).toBe(200)
    expect(withToken.json).toEqual({ received: { a: 1 } })
    const formField = await request(`${server.url}/host/acme/probe/submit`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
      body: `_token=${admin.csrf}&b=2`
    })
    expect(formField.status).toBe(200)
    // A Bearer token is no ambient credential: no CSRF token needed.
    expect((await request(`${server.url}/host/acme/probe/submit`, { method: "POST", as: "dave", body: {} })).status).toBe(200)
  })

  it("a forged or tampered cookie is no session", async () => {
    const bob = await login("bob")
    const [data, signature] = bob.cookie.slice("host_session=".length).split(".")
    const forged = Buffer.from(JSON.stringify({ u: 1, c: "x", e: Date.now() + 60_000 })).toString("base64url")
    for (const cookie of [`host_session=${forged}.${signature}`, `host_session=${data}.AAAA`, "host_session=garbage"]) {
      expect((await request(`${server.url}/api/client/host/slots`, { headers: { cookie } })).status).toBe(401)
    }
  })

  // Last: it gives carol a new token.
  it("a new API token ends the sessions made with the old one", async () => {
    const carol = await login("carol")
    expect((await request(`${server.url}/auth/session`, { headers: { cookie: carol.cookie } })).status).toBe(200)
    expect((await runHost(["--root", root.path, "panel:token", "carol"])).code).toBe(0)
    await waitFor(async () => (await request(`${server.url}/auth/session`, { headers: { cookie: carol.cookie } })).status === 401, 5_000)
  })

  it("a session key file that is not 32 bytes of hex stops the server instead of signing with a short key", async () => {
    const other = tempDir("host-authz-key-")
    try {
      writePanelConfig(other.path)
      mkdirSync(join(other.path, "storage", "host"), { recursive: true })
      for (const content of ["", "q3Zk8Yb1c2VjcmV0LWJ1dC1iYXNlNjQ=\n"]) {
        writeFileSync(join(other.path, "storage", "host", "session.key"), content)
        const run = await runHost(["--root", other.path, "serve", "--port", "0"])
        expect(run.code).toBe(1)
        expect(run.stderr).toContain("storage/host/session.key")
        expect(run.stderr).toContain("64 hexadecimal characters")
      }
    } finally {
      other.cleanup()
    }
  })
})
