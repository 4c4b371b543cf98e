import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { csrfOk } from "../../src/http/Auth.js"
import type { PanelAccess, RequestAuth } from "../../src/panel/Access.js"

// The CSRF rule under a real panel (docs/http.md "CSRF"), with `base_url` configured (its origin is the
// panel's) and without (the request's own Host).

const access = (origin: string | undefined): PanelAccess => ({
  hostGrants: true,
  subusers: () => Effect.succeed([]),
  csrf: "panel",
  origin,
  peek: () => undefined,
  authenticate: () => Effect.succeed(session),
  serverAccess: () => Effect.sync(() => undefined),
  serversOf: () => Effect.succeed([]),
  can: () => Effect.succeed(false)
})

const session: RequestAuth = {
  user: { id: 2, username: "alice", email: "", admin: false, permissions: [], credentialStamp: "" },
  via: "session",
  session: undefined,
  invalidToken: false
}
const bearer: RequestAuth = { ...session, via: "token" }

const post = (headers: Record<string, string>) => ({ method: "POST", headers: { host: "panel.example.com", cookie: "XSRF-TOKEN=a%2Bb%3D", ...headers } })

describe("panel CSRF", () => {
  it("needs X-XSRF-TOKEN equal to the URL-decoded XSRF-TOKEN cookie", () => {
    expect(csrfOk(session, post({}), access(undefined))).toBe(false)
    expect(csrfOk(session, post({ "x-xsrf-token": "a+b=" }), access(undefined))).toBe(true)
    expect(csrfOk(session, post({ "x-xsrf-token": "a%2Bb%3D" }), access(undefined))).toBe(true)
    expect(csrfOk(session, post({ "x-xsrf-token": "other" }), access(undefined))).toBe(false)
    expect(csrfOk(session, { method: "POST", headers: { "x-xsrf-token": "" } }, access(undefined))).toBe(false)
    expect(csrfOk(session, { method: "GET", headers: {} }, access(undefined))).toBe(true)
    expect(csrfOk(bearer, { method: "POST", headers: {} }, access(undefined))).toBe(true)
  })

  it("checks Origin against base_url's origin when configured, else the request's Host", () => {
    const token = { "x-xsrf-token": "a+b=" }
    expect(csrfOk(session, post({ ...token, origin: "https://panel.example.com" }), access(undefined))).toBe(true)
    expect(csrfOk(session, post({ ...token, origin: "https://evil.example.com" }), access(undefined))).toBe(false)
    expect(csrfOk(session, post({ ...token, origin: "null" }), access(undefined))).toBe(false)
    expect(csrfOk(session, post({ ...token, origin: "https://panel.example.com" }), access("https://panel.example.com"))).toBe(true)
    expect(csrfOk(session, post({ ...token, origin: "http://panel.example.com" }), access("https://panel.example.com"))).toBe(false)
  })
})
