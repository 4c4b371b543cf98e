import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTrustedProxies, resolveClient } from "../../src/http/ClientAddress.js"
import { fixture, tempDir } from "../support/cli.js"
import { install, request, type RunningServer, startServer, tokens, writePanelConfig } from "./helpers.js"

// Forwarded headers count only from `trusted_proxies` (docs/operations.md "Behind a proxy"): the session
// cookie's Secure flag and the client address the sign-in and diagnostics rate limits key on.

const signIn = (url: string, username: string, token: string, headers: Record<string, string> = {}) =>
  request(`${url}/auth/login`, { method: "POST", body: { username, token }, headers })

describe("resolveClient", () => {
  const proxies = makeTrustedProxies(["127.0.0.0/8", "::1", "10.0.0.0/8"])
  it("believes forwarded headers only from a trusted peer, reading X-Forwarded-For from the right", () => {
    expect(resolveClient("203.0.113.9", { "x-forwarded-for": "198.51.100.1", "x-forwarded-proto": "https" }, proxies))
      .toEqual({ address: "203.0.113.9", secure: false, forwarded: false })
    expect(resolveClient("::ffff:127.0.0.1", { "x-forwarded-for": "198.51.100.1", "x-forwarded-proto": "https" }, proxies))
      .toEqual({ address: "198.51.100.1", secure: true, forwarded: true })
    // A client's own entries (left of the first untrusted hop) are never believed.
    expect(resolveClient("127.0.0.1", { "x-forwarded-for": "1.2.3.4, 198.51.100.1, 10.1.2.3" }, proxies).address).toBe("198.51.100.1")
    expect(resolveClient("::1", { "x-forwarded-for": "garbage, 10.0.0.5" }, proxies).address).toBe("10.0.0.5")
    expect(resolveClient("127.0.0.1", {}, proxies)).toEqual({ address: "127.0.0.1", secure: false, forwarded: true })
  })
})

describe("behind a proxy, over HTTP", () => {
  let trusted: RunningServer
  let untrusted: RunningServer
  const roots: Array<ReturnType<typeof tempDir>> = []

  beforeAll(async () => {
    const a = tempDir("host-root-")
    const b = tempDir("host-root-")
    roots.push(a, b)
    writePanelConfig(a.path)
    writePanelConfig(b.path)
    await install(a.path, fixture("extensions", "hello-world"))
    // The second server trusts only a range the test client is not in.
    writeFileSync(join(b.path, "config", "host.yaml"), "trusted_proxies: [10.0.0.0/8]\n")
    trusted = await startServer(a.path)
    untrusted = await startServer(b.path)
  })

  afterAll(async () => {
    await trusted?.stop()
    await untrusted?.stop()
    for (const root of roots) root.cleanup()
  })

  it("X-Forwarded-Proto: https makes the cookie Secure only from a trusted proxy", async () => {
    const spoofed = await signIn(untrusted.url, "alice", tokens.alice, { "x-forwarded-proto": "https" })
    expect(spoofed.status).toBe(200)
    expect(spoofed.headers.get("set-cookie")).toMatch(/HttpOnly/i)
    expect(spoofed.headers.get("set-cookie")).not.toMatch(/;\s*Secure/i)
    const proxied = await signIn(trusted.url, "alice", tokens.alice, { "x-forwarded-proto": "https" })
    expect(proxied.status).toBe(200)
    expect(proxied.headers.get("set-cookie")).toMatch(/;\s*Secure/i)
    const plain = await signIn(trusted.url, "alice", tokens.alice, { "x-forwarded-proto": "http" })
    expect(plain.headers.get("set-cookie")).not.toMatch(/;\s*Secure/i)
  })

  it("the 11th sign-in try of a client and user within a minute is 429 with Retry-After; another client is limited separately", async () => {
    const first = { "x-forwarded-for": "203.0.113.10" }
    for (let attempt = 1; attempt <= 10; attempt++) {
      const wrong = await signIn(trusted.url, "bob", "wrong-token", first)
      expect(wrong.status, `try ${attempt}`).toBe(401)
    }
    const eleventh = await signIn(trusted.url, "bob", tokens.bob, first)
    expect(eleventh.status).toBe(429)
    const retryAfter = Number(eleventh.headers.get("retry-after"))
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${eleventh.headers.get("retry-after")}`).toBe(true)
    expect(eleventh.json).toMatchObject({ errors: [{ code: "RateLimited", status: "429" }] })
    expect((eleventh.json as { errors: Array<{ detail: string }> }).errors[0]!.detail).toContain("10 sign-in tries a minute")
    // The form answers the same way.
    const form = await request(`${trusted.url}/auth/login`, {
      method: "POST",
      body: `username=bob&password=${tokens.bob}`,
      headers: { "content-type": "application/x-www-form-urlencoded", ...first }
    })
    expect(form.status).toBe(429)
    expect(form.headers.get("retry-after")).not.toBeNull()
    // A second client behind the same proxy, and the same client for another user, are not limited.
    expect((await signIn(trusted.url, "bob", tokens.bob, { "x-forwarded-for": "203.0.113.11" })).status).toBe(200)
    expect((await signIn(trusted.url, "carol", tokens.carol, first)).status).toBe(200)
  })

  it("from an untrusted peer, X-Forwarded-For does not make a new client", async () => {
    for (let attempt = 1; attempt <= 10; attempt++) {
      const wrong = await signIn(untrusted.url, "dave", "wrong-token", { "x-forwarded-for": `198.51.100.${attempt}` })
      expect(wrong.status).toBe(401)
    }
    const spoofed = await signIn(untrusted.url, "dave", tokens.dave, { "x-forwarded-for": "198.51.100.99" })
    expect(spoofed.status).toBe(429)
  })

  it("diagnostics reports are limited per client address", async () => {
    const report = (address: string) =>
      request(`${trusted.url}/api/client/host/diagnostics`, {
        as: "alice",
        method: "POST",
        body: { extensionId: "acme/hello-world", message: "boom" },
        headers: { "x-forwarded-for": address }
      })
    for (let attempt = 1; attempt <= 10; attempt++) expect((await report("203.0.113.20")).status).toBe(202)
    const limited = await report("203.0.113.20")
    expect(limited.status).toBe(429)
    expect(limited.headers.get("retry-after")).not.toBeNull()
    expect((await report("203.0.113.21")).status).toBe(202)
  })
})
