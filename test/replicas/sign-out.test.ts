import { afterEach, describe, expect, it } from "vitest"
import { type RunningServer, request, startServer, tokens, writePanelConfig } from "../http/helpers.js"
import { tempDirsPerTest } from "../support/cli.js"

// Signing out of the embedded panel ends the session on every replica at once (docs/http.md "Security:
// signing out"): two `host serve` on one root — one SQLite file and one session key — and a sign-out on
// one is honoured by the other on the very next request, no waiting for a poll.

const temp = tempDirsPerTest()
const running: Array<RunningServer> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop()))
})

describe("embedded sign-out across replicas", () => {
  it("a session signed out on one replica answers 401 on the other at once", async () => {
    const root = temp("host-replica-sessions-")
    writePanelConfig(root)
    // Slow polling: the second replica must not learn of the sign-out from a state poll.
    const first = await startServer(root, { pollMs: 60_000 })
    running.push(first)
    const second = await startServer(root, { pollMs: 60_000 })
    running.push(second)
    const signIn = await fetch(`${first.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "alice", token: tokens.alice })
    })
    const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0]!
    const { data } = (await signIn.json()) as { data: { csrfToken: string } }
    // One cookie, both replicas.
    for (const server of [first, second]) expect((await request(`${server.url}/auth/session`, { headers: { cookie } })).status).toBe(200)
    expect((await request(`${second.url}/api/client/host/slots`, { headers: { cookie } })).status).toBe(200)
    expect((await request(`${first.url}/auth/logout`, { method: "POST", headers: { cookie, "x-csrf-token": data.csrfToken } })).status).toBe(204)
    expect((await request(`${second.url}/auth/session`, { headers: { cookie } })).status).toBe(401)
    expect((await request(`${second.url}/api/client/host/slots`, { headers: { cookie } })).status).toBe(401)
    expect((await request(`${second.url}/api/client/servers`, { headers: { cookie } })).status).toBe(401)
    expect((await request(`${first.url}/auth/session`, { headers: { cookie } })).status).toBe(401)
    // Signing out again with the old cookie is harmless (nothing to end) and the user can sign in anew.
    expect((await request(`${second.url}/auth/logout`, { method: "POST", headers: { cookie, "x-csrf-token": data.csrfToken } })).status).toBe(204)
    const again = await fetch(`${second.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "alice", token: tokens.alice })
    })
    const fresh = (again.headers.get("set-cookie") ?? "").split(";")[0]!
    expect((await request(`${first.url}/auth/session`, { headers: { cookie: fresh } })).status).toBe(200)
  })
})
