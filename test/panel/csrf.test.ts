import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { csrfOk, csrfVerdict } from "../../src/http/Auth.js"
import { makeTrustedProxies } from "../../src/http/ClientAddress.js"
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

  it("checks Origin against base_url's origin when configured, else the request's Host on the listener's scheme (http)", () => {
    const token = { "x-xsrf-token": "a+b=" }
    expect(csrfOk(session, post({ ...token, origin: "http://panel.example.com" }), access(undefined))).toBe(true)
    expect(csrfOk(session, post({ ...token, origin: "http://panel.example.com:80" }), access(undefined))).toBe(true)
    expect(csrfOk(session, post({ ...token, origin: "https://evil.example.com" }), access(undefined))).toBe(false)
    expect(csrfOk(session, post({ ...token, origin: "null" }), access(undefined))).toBe(false)
    expect(csrfOk(session, post({ ...token, origin: "https://panel.example.com" }), access("https://panel.example.com"))).toBe(true)
    expect(csrfOk(session, post({ ...token, origin: "https://panel.example.com:443" }), access("https://panel.example.com"))).toBe(true)
    expect(csrfOk(session, post({ ...token, origin: "http://panel.example.com" }), access("https://panel.example.com"))).toBe(false)
  })

  // docs/panels.md "CSRF": the panel's origin is scheme, host and port.
  const proxies = makeTrustedProxies(["127.0.0.0/8"])
  const behind = (headers: Record<string, string>, peer: string) => ({ ...post({ "x-xsrf-token": "a+b=", ...headers }), peer })
  const verdict = (headers: Record<string, string>, options: { peer?: string; origin?: string } = {}) =>
    csrfVerdict(session, behind(headers, options.peer ?? "127.0.0.1"), access(options.origin), { proxies })

  it("refuses another scheme or another port than the panel's", () => {
    expect(verdict({ host: "panel.example.com:8443", origin: "http://panel.example.com:8443" }, { peer: "203.0.113.5" }).ok).toBe(true)
    expect(verdict({ host: "panel.example.com:8443", origin: "https://panel.example.com:8443" }, { peer: "203.0.113.5" }).ok).toBe(false)
    expect(verdict({ host: "panel.example.com:8443", origin: "http://panel.example.com" }, { peer: "203.0.113.5" }).ok).toBe(false)
    expect(verdict({ host: "panel.example.com:8443", origin: "http://panel.example.com:9443" }, { peer: "203.0.113.5" }).ok).toBe(false)
  })

  it("takes X-Forwarded-Host and -Proto from a trusted proxy, and ignores them from anyone else", () => {
    const forwarded = { host: "127.0.0.1:8080", "x-forwarded-host": "panel.example.com:8443", "x-forwarded-proto": "https", origin: "https://panel.example.com:8443" }
    expect(verdict(forwarded).ok).toBe(true)
    expect(verdict({ ...forwarded, origin: "http://127.0.0.1:8080" }).ok).toBe(false)
    expect(verdict({ ...forwarded, origin: "http://panel.example.com:8443" }).ok).toBe(false)
    // Apache appends its own entry to what the client sent: the last one is the proxy's.
    expect(verdict({ ...forwarded, "x-forwarded-host": "evil.example.com, panel.example.com:8443" }).ok).toBe(true)
    expect(verdict({ ...forwarded, "x-forwarded-host": "panel.example.com:8443, evil.example.com" }).ok).toBe(false)
    // A trusted proxy without X-Forwarded-Host: its Host, on the scheme it forwarded.
    expect(verdict({ host: "panel.example.com:8443", "x-forwarded-proto": "https", origin: "https://panel.example.com:8443" }).ok).toBe(true)
    // Not a trusted proxy: its forwarded headers count for nothing, its Host on http does.
    expect(verdict(forwarded, { peer: "203.0.113.5" }).ok).toBe(false)
    expect(verdict({ ...forwarded, origin: "http://127.0.0.1:8080" }, { peer: "203.0.113.5" }).ok).toBe(true)
    // A forwarded host that is not a plain host[:port] matches nothing.
    expect(verdict({ ...forwarded, "x-forwarded-host": "panel.example.com:8443/x", origin: "https://panel.example.com:8443" }).ok).toBe(false)
  })

  it("base_url wins over the forwarded headers and the Host", () => {
    const forwarded = { host: "127.0.0.1:8080", "x-forwarded-host": "other.example.com", "x-forwarded-proto": "http" }
    expect(verdict({ ...forwarded, origin: "https://panel.example.com:8443" }, { origin: "https://panel.example.com:8443" }).ok).toBe(true)
    expect(verdict({ ...forwarded, origin: "http://other.example.com" }, { origin: "https://panel.example.com:8443" }).ok).toBe(false)
    expect(verdict({ ...forwarded, origin: "http://127.0.0.1:8080" }, { origin: "https://panel.example.com:8443" }).ok).toBe(false)
  })

  it("a refusal names the panel's headers and the origins compared", () => {
    const missing = verdict({ host: "panel.example.com", "x-xsrf-token": "" })
    expect(missing).toEqual({ ok: false, detail: expect.stringContaining("X-XSRF-TOKEN header equal to the XSRF-TOKEN cookie") })
    expect(missing.ok ? "" : missing.detail).not.toContain("X-CSRF-Token")
    const elsewhere = verdict({ host: "panel.example.com:8443", origin: "https://evil.example.com" }, { peer: "203.0.113.5" })
    expect(elsewhere.ok ? "" : elsewhere.detail).toContain(`Origin "https://evil.example.com" is not the panel's origin "http://panel.example.com:8443"`)
    expect(elsewhere.ok ? "" : elsewhere.detail).toContain("X-XSRF-TOKEN")
  })
})
