import { NodeContext } from "@effect/platform-node"
import { Effect, Either } from "effect"
import childProcess from "node:child_process"
import { chmodSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it, vi } from "vitest"
import { makeRealPanel, panelPermits, readPanelRoot, flavors } from "../../src/panel/RealPanel.js"
import type { Sessions } from "../../src/panel/Session.js"
import { tempDirsPerTest } from "../support/cli.js"
import { writePanelRoot } from "../support/panel-root.js"
import { machines, type PanelStandIn, people, startPanelStandIn } from "../support/pterodactyl-api.js"
import { startPelicanStandIn } from "../support/pelican-api.js"

// The real-panel drivers against stand-ins of the panels' client APIs (docs/panels.md "Drivers").

const temp = tempDirsPerTest()
const standIns: Array<PanelStandIn> = []
afterEach(async () => {
  await Promise.all(standIns.splice(0).map((standIn) => standIn.close()))
})

const noSessions: Sessions = { issue: () => { throw new Error("a real panel issues no Host sessions") }, verify: () => undefined,
  revoked: () => Effect.succeed(false),
  revoke: () => Effect.void
}

const setup = async (kind: "pterodactyl" | "pelican" = "pterodactyl", cacheSeconds = 30) => {
  const standIn = kind === "pterodactyl"
    ? await startPanelStandIn({ users: people, servers: machines })
    : await startPelicanStandIn({ users: people, servers: machines })
  standIns.push(standIn)
  const root = writePanelRoot(temp("panel-root-"), { version: kind === "pterodactyl" ? "1.11.8" : "1.0.0-beta19" })
  const panel = await Effect.runPromise(
    makeRealPanel({ kind, url: standIn.url, root, cacheSeconds, applicationKey: standIn.applicationKey, php: "8.3.0", origin: undefined })
      .pipe(Effect.provide(NodeContext.layer))
  )
  const access = panel.access(panel.directory)
  const authenticate = (credentials: { authorization?: string; cookie?: string }) =>
    Effect.runPromise(access.authenticate({ authorization: credentials.authorization, cookie: credentials.cookie }, noSessions))
  return { standIn, panel, access, authenticate }
}

describe("the panel's PHP version", () => {
  /** A Pterodactyl panel whose panel.php says 8.1.0, made with the PATH the test has set. */
  const pterodactylPanel = async () => {
    const standIn = await startPanelStandIn({ users: people, servers: machines })
    standIns.push(standIn)
    const root = writePanelRoot(temp("panel-root-"), { version: "1.11.8" })
    return Effect.runPromise(
      makeRealPanel({ kind: "pterodactyl", url: standIn.url, root, cacheSeconds: 30, applicationKey: "", php: "8.1.0", origin: undefined })
        .pipe(Effect.provide(NodeContext.layer))
    )
  }

  // An asynchronous child process (execFile, spawn) made Node create some of its tick objects with a boxed
  // number for an id, which left process.nextTick on its slow path for the life of the process: every
  // request of `host serve` under a real panel paid for it (docs/decisions.md "P3r: php's version is read
  // synchronously"). So the version is read with spawnSync, and no asynchronous child process is started.
  it("is read from `php -r` on the PATH with a synchronous child process, and none other is started", async () => {
    const bin = temp("fake-php-")
    writeFileSync(join(bin, "php"), "#!/bin/sh\necho 8.2.99\n")
    chmodSync(join(bin, "php"), 0o755)
    const path = process.env.PATH
    process.env.PATH = `${bin}:${path ?? ""}`
    const asynchronous = (["execFile", "spawn", "exec", "fork"] as const).map((name) => vi.spyOn(childProcess, name))
    try {
      const panel = await pterodactylPanel()
      expect(panel.info.php).toBe("8.2.99")
      for (const spy of asynchronous) expect(spy).not.toHaveBeenCalled()
    } finally {
      process.env.PATH = path
      for (const spy of asynchronous) spy.mockRestore()
    }
  })

  it("falls back to panel.php when php is not on the PATH", async () => {
    const path = process.env.PATH
    process.env.PATH = temp("no-php-")
    try {
      const panel = await pterodactylPanel()
      expect(panel.info.php).toBe("8.1.0")
    } finally {
      process.env.PATH = path
    }
  })
})

describe("identity from a Pterodactyl panel", () => {
  it("signs in by the session cookie, forwarding only it and remember_web_*, with the JSON headers", async () => {
    const { authenticate, standIn } = await setup()
    const auth = await authenticate({ cookie: "XSRF-TOKEN=abc; pterodactyl_session=sess-alice; other=1; remember_web_59ba=keep; host_session=x" })
    expect(auth.user).toMatchObject({ id: 2, username: "alice", admin: false })
    expect(auth.via).toBe("session")
    const account = standIn.received.find((entry) => entry.path === "/api/client/account")!
    expect(account.headers.cookie).toBe("pterodactyl_session=sess-alice; remember_web_59ba=keep")
    expect(account.headers.accept).toBe("application/json")
    expect(account.headers["x-requested-with"]).toBe("XMLHttpRequest")
    expect(account.headers.authorization).toBeUndefined()
  })

  it("signs in by a Bearer client key; a key the panel refuses is an invalid token; no credential is anonymous", async () => {
    const { authenticate, standIn } = await setup()
    const admin = await authenticate({ authorization: "Bearer ptlc_admin", cookie: "pterodactyl_session=sess-alice" })
    expect(admin.user).toMatchObject({ id: 1, admin: true })
    expect(admin.via).toBe("token")
    expect(standIn.received.at(-1)!.headers.cookie).toBeUndefined()
    expect((await authenticate({ authorization: "Bearer ptlc_wrong" })).invalidToken).toBe(true)
    const before = standIn.received.length
    expect((await authenticate({ cookie: "unrelated=1" })).user).toBeUndefined()
    expect(standIn.received.length).toBe(before)
  })

  it("caches per credential: a second request is a hit and asks nobody", async () => {
    const { authenticate, panel, standIn } = await setup()
    await authenticate({ cookie: "pterodactyl_session=sess-alice" })
    await authenticate({ cookie: "pterodactyl_session=sess-alice" })
    await authenticate({ cookie: "pterodactyl_session=sess-bob" })
    const stats = await Effect.runPromise(panel.stats!)
    expect(stats).toEqual({ hits: 1, misses: 2, panelRequests: 4 })
    expect(standIn.count("/api/client/account")).toBe(2)
    // Pterodactyl: the 2FA-guarded probe once per credential and window.
    expect(standIn.count("/api/client/permissions")).toBe(2)
  })

  it("200 concurrent first requests with one new session make exactly one account request", async () => {
    const { authenticate, standIn } = await setup()
    standIn.mode = "slow"
    standIn.slowMs = 200
    const answers = await Promise.all(Array.from({ length: 200 }, () => authenticate({ cookie: "pterodactyl_session=sess-bob" })))
    expect(answers.every((auth) => auth.user?.username === "bob")).toBe(true)
    expect(standIn.count("/api/client/account")).toBe(1)
  })

  it("a user the 2FA policy stops is not signed in", async () => {
    const { authenticate } = await setup()
    expect((await authenticate({ cookie: "pterodactyl_session=sess-erin" })).user).toBeUndefined()
  })

  it("a panel that is down, answers 5xx or 429, or is slow fails with PanelUnavailable naming its URL", async () => {
    const { authenticate, standIn } = await setup()
    for (const mode of ["down", "error", "limited"] as const) {
      standIn.mode = mode
      const failure = await authenticate({ cookie: "pterodactyl_session=sess-alice" }).then(() => undefined, (error: unknown) => error)
      expect(String(failure)).toContain(standIn.url)
    }
    standIn.mode = "ok"
    // A failure is not cached: the panel answering again signs the user in.
    expect((await authenticate({ cookie: "pterodactyl_session=sess-alice" })).user?.username).toBe("alice")
  })

  it("gives up on a panel that does not answer within 5 s", async () => {
    const { authenticate, standIn } = await setup()
    standIn.mode = "slow"
    standIn.slowMs = 30_000
    const failure = await authenticate({ cookie: "pterodactyl_session=sess-alice" }).then(() => undefined, (error: unknown) => error)
    expect(String(failure)).toContain("no answer within 5 s")
    expect(String(failure)).toContain(standIn.url)
  }, 15_000)

  it("server scope: short id or uuid, the panel's permissions, 404 as no access; extension permissions", async () => {
    const { access, authenticate } = await setup()
    const bob = await authenticate({ cookie: "pterodactyl_session=sess-bob" })
    const byShort = await Effect.runPromise(access.serverAccess(bob, "aaaaaaaa"))
    expect(byShort).toMatchObject({ role: "subuser", permissions: ["control.*", "host_acme_probe.probe-view"], server: { uuid: machines[0]!.uuid } })
    expect(await Effect.runPromise(access.serverAccess(bob, machines[0]!.uuid))).toMatchObject({ role: "subuser" })
    expect(await Effect.runPromise(access.serverAccess(bob, "bbbbbbbb"))).toBeUndefined()
    const alice = await authenticate({ cookie: "pterodactyl_session=sess-alice" })
    expect(await Effect.runPromise(access.serverAccess(alice, "aaaaaaaa"))).toMatchObject({ role: "owner", permissions: ["*"] })
    // Pterodactyl: owners hold every extension permission; a subuser only by a Host grant (none here).
    expect(await Effect.runPromise(access.can(alice, "probe.view", machines[0]!.uuid, "acme/probe"))).toBe(true)
    expect(await Effect.runPromise(access.can(bob, "probe.view", machines[0]!.uuid, "acme/probe"))).toBe(false)
    const admin = await authenticate({ authorization: "Bearer ptlc_admin" })
    expect(await Effect.runPromise(access.can(admin, "probe.view", machines[0]!.uuid, "acme/probe"))).toBe(true)
  })

  it("lists servers through the paged client list (admin-all for admins)", async () => {
    const { access, authenticate, standIn } = await setup()
    const alice = await authenticate({ cookie: "pterodactyl_session=sess-alice" })
    expect((await Effect.runPromise(access.serversOf(alice))).map((entry) => entry.server.identifier)).toEqual(["aaaaaaaa"])
    const admin = await authenticate({ authorization: "Bearer ptlc_admin" })
    expect((await Effect.runPromise(access.serversOf(admin))).map((entry) => entry.server.identifier)).toEqual(["aaaaaaaa", "bbbbbbbb"])
    expect(standIn.received.some((entry) => entry.path === "/api/client?per_page=100&page=1&type=admin-all")).toBe(true)
  })

  it("reads the server list from the application API", async () => {
    const { panel } = await setup()
    const { directory } = await Effect.runPromise(panel.reload)
    expect(directory.servers.map((server) => server.uuid)).toEqual(machines.map((server) => server.uuid))
  })
})

describe("identity from a Pelican panel", () => {
  it("keys users by uuid, takes root_admin as admin, reads pelican_session, and lets the panel's subuser permissions decide", async () => {
    const { access, authenticate, standIn } = await setup("pelican")
    const admin = await authenticate({ cookie: "pelican_session=sess-admin; pterodactyl_session=sess-alice" })
    expect(admin.user).toMatchObject({ id: "u-admin", admin: true })
    expect(standIn.count("/api/client/permissions")).toBe(0)
    const bob = await authenticate({ authorization: "Bearer ptlc_bob" })
    expect(bob.user?.id).toBe("u-bob")
    expect(await Effect.runPromise(access.can(bob, "probe.view", machines[0]!.uuid, "acme/probe"))).toBe(true)
    expect(await Effect.runPromise(access.can(bob, "probe.edit", machines[0]!.uuid, "acme/probe"))).toBe(false)
  })
})

describe("the panel's folder and matching rules", () => {
  it("reads the version, the name and the cookie (SESSION_COOKIE, else slug(APP_NAME)_session)", async () => {
    const read = (root: string, kind: "pterodactyl" | "pelican") =>
      Effect.runPromise(readPanelRoot(root, flavors[kind]).pipe(Effect.provide(NodeContext.layer)))
    expect(await read(writePanelRoot(temp("root-"), { appName: "My Panel" }), "pterodactyl")).toEqual({ name: "My Panel", version: "1.11.8", cookie: "my_panel_session" })
    expect((await read(writePanelRoot(temp("root-"), { sessionCookie: "custom" }), "pterodactyl")).cookie).toBe("custom")
    expect((await read(writePanelRoot(temp("root-")), "pterodactyl")).cookie).toBe("pterodactyl_session")
    expect((await read(writePanelRoot(temp("root-"), { appName: "My Panel" }), "pelican")).cookie).toBe("pelican_session")
    const failure = await Effect.runPromise(Effect.either(readPanelRoot(temp("empty-"), flavors.pterodactyl)).pipe(Effect.provide(NodeContext.layer)))
    expect(Either.isLeft(failure) && failure.left.message).toContain("panel.root")
  })

  it("matches permissions as the panel does", () => {
    expect(panelPermits(["*"], "file.read")).toBe(true)
    expect(panelPermits(["file.*"], "file.read")).toBe(true)
    expect(panelPermits(["file.*"], "filex.read")).toBe(false)
    expect(panelPermits(["file.read"], "file.read-content")).toBe(false)
    expect(panelPermits([], "file.read")).toBe(false)
  })
})

