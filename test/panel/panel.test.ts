import { Schema } from "effect"
import { readFileSync, writeFileSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { hashToken, makeDirectory, PanelFile } from "../../src/panel/Panel.js"
import { makeSessions } from "../../src/panel/Session.js"
import { runHost, tempDir } from "../support/cli.js"

// The embedded panel: users, servers and permissions from panel.yaml; session cookies; panel:token.

const directory = makeDirectory(Schema.decodeUnknownSync(PanelFile)({
  users: [
    { id: 1, username: "root", admin: true },
    { id: 2, username: "owner", token_sha256: hashToken("owner-token") },
    { id: 3, username: "helper" },
    { id: 4, username: "auditor", permissions: ["stats.view"] },
    { id: 5, username: "stranger" }
  ],
  servers: [
    { uuid: "s1", name: "One", owner: "owner", subusers: [{ user: 3, permissions: ["stats.view", "files.read"] }] },
    { uuid: "s2", name: "Two", owner: 1, subusers: [{ user: "helper", permissions: ["*"] }] }
  ]
}))
const user = (name: string) => directory.userByName(name)!

describe("panel directory", () => {
  it("finds users by token hash only", () => {
    expect(directory.userByToken("owner-token")?.username).toBe("owner")
    expect(directory.userByToken("wrong")).toBeUndefined()
  })

  it("gives server access to admins, owners and subusers only", () => {
    expect(directory.serverAccess(user("root"), "s1")?.role).toBe("admin")
    expect(directory.serverAccess(user("owner"), "s1")?.role).toBe("owner")
    expect(directory.serverAccess(user("helper"), "s1")).toMatchObject({ role: "subuser", permissions: ["stats.view", "files.read"] })
    expect(directory.serverAccess(user("stranger"), "s1")).toBeUndefined()
    expect(directory.serverAccess(user("root"), "nope")).toBeUndefined()
    expect(directory.serversOf(user("helper")).map((access) => access.server.uuid)).toEqual(["s1", "s2"])
  })

  it("checks permissions per server, on any server, and by global grants", () => {
    expect(directory.can(user("root"), "anything")).toBe(true)
    expect(directory.can(user("owner"), "stats.view", "s1")).toBe(true)
    expect(directory.can(user("owner"), "stats.view", "s2")).toBe(false)
    expect(directory.can(user("helper"), "files.read", "s1")).toBe(true)
    expect(directory.can(user("helper"), "backups.manage", "s1")).toBe(false)
    expect(directory.can(user("helper"), "backups.manage", "s2")).toBe(true)
    expect(directory.can(user("helper"), "backups.manage")).toBe(true)
    expect(directory.can(user("auditor"), "stats.view")).toBe(true)
    expect(directory.can(user("auditor"), "stats.edit")).toBe(false)
    expect(directory.can(user("stranger"), "stats.view")).toBe(false)
  })
})

describe("sessions", () => {
  it("verifies what it issued, refuses tampering, another key and expiry", () => {
    let now = 1_000_000
    const sessions = makeSessions(Buffer.alloc(32, 7), () => now, (bytes) => new Uint8Array(bytes).fill(9))
    const { cookie, session } = sessions.issue({ id: 42, credentialStamp: "stamp-1" })
    expect(sessions.verify(cookie)).toEqual(session)
    // The CSRF token is the random source's bytes (18 of them, base64url).
    expect(session.csrfToken).toBe(Buffer.alloc(18, 9).toString("base64url"))
    expect(sessions.verify(`${cookie}x`)).toBeUndefined()
    expect(makeSessions(Buffer.alloc(32, 8), () => now, (bytes) => new Uint8Array(bytes)).verify(cookie)).toBeUndefined()
    now += 13 * 60 * 60 * 1000
    expect(sessions.verify(cookie)).toBeUndefined()
  })
})

describe("host panel:token", () => {
  it("prints a token once and stores only its sha256, keeping the file's comments", async () => {
    const root = tempDir("host-panel-")
    try {
      mkdirSync(join(root.path, "config"))
      writeFileSync(
        join(root.path, "config", "panel.yaml"),
        "# my panel\npanel:\n  name: P\nusers:\n  - id: 1\n    username: admin\n    admin: true\n"
      )
      const run = await runHost(["--root", root.path, "panel:token", "admin"])
      expect(run.code).toBe(0)
      const token = run.stdout.trim()
      expect(token).toMatch(/^host_[0-9a-f]{48}$/)
      const text = readFileSync(join(root.path, "config", "panel.yaml"), "utf8")
      expect(text).toContain("# my panel")
      expect(text).toContain(`token_sha256: ${hashToken(token)}`)
      expect(text).not.toContain(token)
      const again = await runHost(["--root", root.path, "panel:token", "admin", "--json"])
      expect(JSON.parse(again.stdout)).toMatchObject({ username: "admin", id: 1, token: expect.any(String) })
      const missing = await runHost(["--root", root.path, "panel:token", "nobody"])
      expect(missing.code).toBe(1)
      expect(missing.stderr).toContain(`no panel user "nobody"`)
    } finally {
      root.cleanup()
    }
  })
})
