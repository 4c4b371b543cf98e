import { afterEach, describe, expect, it } from "vitest"
import { type RunningServer, request, startServer, tokens, writePanelConfig } from "../http/helpers.js"
import { tempDirsPerTest } from "../support/cli.js"
import { makeDatabase, testDialects } from "../support/databases.js"

// Signing out of the embedded panel ends the session on every replica at once (docs/http.md "Security:
// signing out"): two `host serve` on one root — one database (SQLite, and MariaDB/PostgreSQL when
// HOST_TEST_MYSQL_URL / HOST_TEST_PG_URL name a server) and one session key — and a sign-out on one is
// honoured by the other on the very next request, no waiting for a poll.

const temp = tempDirsPerTest()
const running: Array<RunningServer> = []
const drops: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop()))
  await Promise.all(drops.splice(0).map((drop) => drop()))
})

describe.each(testDialects())("embedded sign-out across replicas (%s)", (dialect) => {
  it("a session signed out on one replica answers 401 on the other at once; the row lives in host_settings", async () => {
    const root = temp("host-replica-sessions-")
    writePanelConfig(root)
    const { database, drop } = await makeDatabase(dialect)
    drops.push(drop)
    // Slow polling: the second replica must not learn of the sign-out from a state poll.
    const first = await startServer(root, { pollMs: 60_000, env: database.env })
    running.push(first)
    const second = await startServer(root, { pollMs: 60_000, env: database.env })
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
    // Within the four tables: one host/core row for the sign-out.
    const seen = await database.inspect(root)
    expect(seen.tables).toEqual(["host_activity_logs", "host_extensions", "host_migrations", "host_settings"])
    expect(seen.settings.filter((row) => row.key.startsWith("session_revoked:")).map((row) => row.extension_id)).toEqual(["host/core"])
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
