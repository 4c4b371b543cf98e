import * as ed from "@noble/ed25519"
import Database from "better-sqlite3"
import { readFileSync } from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { inspectDatabase } from "../support/extensions.js"
import { fixture, runHost, tempDir } from "../support/cli.js"
import { install, request, type RunningServer, startServer, tokens, writePanelConfig } from "./helpers.js"

// The admin JSON API over real HTTP: who may use it, upload-install with and without a signature under
// require_signatures, enable/disable/remove through the lifecycle (actor admin), settings validated
// against the normalized schema, activity.

const root = tempDir("host-admin-")
const work = tempDir("host-admin-work-")
let server: RunningServer
let keys: { public_key: string; secret_key: string }
let archive: string

beforeAll(async () => {
  writePanelConfig(root.path)
  await install(root.path, fixture("extensions", "hello-world"))
  keys = JSON.parse((await runHost(["keygen", "--json"])).stdout) as typeof keys
  const exported = await runHost(["--root", root.path, "export", fixture("runtime", "probe"), "--output", `${work.path}/`, "--json"])
  archive = (JSON.parse(exported.stdout) as { archive: string }).archive
  server = await startServer(root.path, { env: { HOST_REQUIRE_SIGNATURES: "1", HOST_PUBLIC_KEY: keys.public_key } })
})

afterAll(async () => {
  await server?.stop()
  root.cleanup()
  work.cleanup()
})

const api = (path: string) => `${server.url}/admin/host/api${path}`

const upload = (signature?: string) => {
  const form = new FormData()
  form.append("archive", new Blob([readFileSync(archive)]), "acme-probe-1.0.0.host")
  if (signature !== undefined) form.append("signature", signature)
  return form
}

describe("admin JSON API", () => {
  it("needs an admin (token or session)", async () => {
    expect((await request(api("/extensions"))).status).toBe(401)
    expect((await request(api("/extensions"), { as: "alice" })).status).toBe(403)
    const list = await request(api("/extensions"), { as: "admin" })
    expect(list.status).toBe(200)
    expect(list.json).toMatchObject({
      data: [{ id: "acme/hello-world", version: "1.0.0", enabled: true, status: "enabled", signature: "unsigned" }]
    })
  })

  it("refuses an unsigned upload under require_signatures, and installs it with a valid detached signature", async () => {
    const refused = await request(api("/extensions"), { as: "admin", method: "POST", body: upload() })
    expect(refused.status).toBe(422)
    expect(refused.json).toMatchObject({ errors: [{ code: "SourceRejected", status: "422", detail: expect.stringMatching(/sign/i) }] })
    expect(inspectDatabase(root.path).extensions.map((e) => e.extension_id)).toEqual(["acme/hello-world"])

    const bad = await request(api("/extensions"), { as: "admin", method: "POST", body: upload("ab".repeat(64)) })
    expect(bad.status).toBe(422)

    const signature = Buffer.from(await ed.signAsync(readFileSync(archive), Buffer.from(keys.secret_key, "hex"))).toString("hex")
    const installed = await request(api("/extensions"), { as: "admin", method: "POST", body: upload(signature) })
    expect(installed.status).toBe(201)
    expect(installed.json).toMatchObject({ data: { id: "acme/probe", action: "installed", version: "1.0.0", enabled: true } })
    // The runtime swapped before the answer.
    expect((await request(`${server.url}/api/client/host/acme/probe/open`, { as: "dave" })).status).toBe(200)
    const list = await request(api("/extensions"), { as: "admin" })
    expect((list.json as { data: Array<{ id: string; signature: string }> }).data.find((e) => e.id === "acme/probe")?.signature).toBe("signed")
    const activity = inspectDatabase(root.path).activity.find((row) => row.extension_id === "acme/probe")!
    expect(JSON.parse(activity.context)).toMatchObject({
      actor: { type: "admin", user: "admin" },
      source: { type: "upload", ref: expect.stringMatching(/\.host$/) }
    })
  })

  it("an upload without a file is a 400", async () => {
    const form = new FormData()
    form.append("other", "x")
    expect((await request(api("/extensions"), { as: "admin", method: "POST", body: form })).status).toBe(400)
  })

  it("reads and writes settings, validated against the schema", async () => {
    const read = await request(api("/extensions/acme/probe/settings"), { as: "admin" })
    expect(read.json).toMatchObject({ data: { values: { greeting: "hello", secret_key: "s3cr3t" }, fields: [{ key: "greeting" }, { key: "secret_key" }] } })
    const invalid = await request(api("/extensions/acme/probe/settings"), { as: "admin", method: "PUT", body: { greeting: 5, nope: 1 } })
    expect(invalid.status).toBe(422)
    expect(invalid.json).toMatchObject({ errors: [{ code: "SettingsInvalid", status: "422" }, { code: "SettingsInvalid" }] })
    const saved = await request(api("/extensions/acme/probe/settings"), { as: "admin", method: "PUT", body: { greeting: "hey" } })
    expect(saved.status).toBe(200)
    expect(saved.json).toMatchObject({ data: { values: { greeting: "hey", secret_key: "s3cr3t" } } })
    const served = await request(`${server.url}/api/client/host/extensions/acme/probe/settings`, { as: "dave" })
    expect(served.json).toEqual({ data: { greeting: "hey" } })
    expect((await request(api("/extensions/acme/nope/settings"), { as: "admin" })).status).toBe(404)
    const cleared = await request(api("/extensions/acme/probe/settings"), { as: "admin", method: "PUT", body: { greeting: null } })
    expect(cleared.json).toMatchObject({ data: { values: { greeting: "hello" } } })
  })

  it("writes settings under the operation lock, like every other change", async () => {
    const db = new Database(join(root.path, "storage", "host", "host.db"))
    const lock = { id: "held-by-test", holder: "cli", pid: process.pid, hostname: hostname(), operation: "add acme/x", acquired_at: new Date().toISOString() }
    db.prepare("INSERT INTO host_settings (extension_id, key, value, created_at, updated_at) VALUES ('host/core', 'lock', ?, '', '')").run(JSON.stringify(lock))
    try {
      const refused = await request(api("/extensions/acme/probe/settings"), { as: "admin", method: "PUT", body: { greeting: "locked out" } })
      expect(refused.status).toBe(409)
      expect(refused.json).toMatchObject({ errors: [{ code: "LockHeld" }] })
    } finally {
      db.prepare("DELETE FROM host_settings WHERE extension_id = 'host/core' AND key = 'lock'").run()
      db.close()
    }
    const read = await request(api("/extensions/acme/probe/settings"), { as: "admin" })
    expect(read.json).toMatchObject({ data: { values: { greeting: "hello" } } })
  })

  it("disables, enables and removes through the lifecycle", async () => {
    const disabled = await request(api("/extensions/acme/probe/disable"), { as: "admin", method: "POST" })
    expect(disabled.status).toBe(200)
    expect(disabled.json).toMatchObject({ data: { action: "disabled" } })
    expect((await request(`${server.url}/api/client/host/acme/probe/open`, { as: "dave" })).status).toBe(404)
    expect((await request(api("/extensions/acme/probe/enable"), { as: "admin", method: "POST" })).status).toBe(200)
    expect((await request(`${server.url}/api/client/host/acme/probe/open`, { as: "dave" })).status).toBe(200)
    expect((await request(api("/extensions/acme/probe/explode"), { as: "admin", method: "POST" })).status).toBe(404)
    const missing = await request(api("/extensions/acme/nope/enable"), { as: "admin", method: "POST" })
    expect(missing.status).toBe(404)
    expect(missing.json).toMatchObject({ errors: [{ code: "OperationRefused" }] })
    const removed = await request(api("/extensions/acme/probe/remove"), { as: "admin", method: "POST", body: {} })
    expect(removed.status).toBe(200)
    expect(inspectDatabase(root.path).extensions.map((e) => e.extension_id)).toEqual(["acme/hello-world"])
    const activity = await request(api("/activity?limit=3"), { as: "admin" })
    expect((activity.json as { data: Array<{ action: string }> }).data.map((row) => row.action)).toEqual(["removed", "enabled", "disabled"])
  })

  it("a session needs its CSRF token for changes", async () => {
    const login = await fetch(`${server.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", token: tokens.admin })
    })
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!
    const { data } = (await login.json()) as { data: { csrfToken: string } }
    expect((await request(api("/extensions"), { headers: { cookie } })).status).toBe(200)
    const refused = await request(api("/extensions/acme/hello-world/disable"), { method: "POST", headers: { cookie } })
    expect(refused.status).toBe(403)
    const accepted = await request(api("/extensions/acme/hello-world/disable"), {
      method: "POST",
      headers: { cookie, "x-csrf-token": data.csrfToken }
    })
    expect(accepted.status).toBe(200)
    expect(inspectDatabase(root.path).extensions).toMatchObject([{ extension_id: "acme/hello-world", enabled: 0 }])
  })
})
