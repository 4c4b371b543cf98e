import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { type RunningServer, request, startServer, waitFor, writePanelConfig } from "../http/helpers.js"
import { type BuiltArchive, entryFor, index, serveRegistry, type ServedRegistry, writeIndex } from "../registry/helpers.js"
import { fixture, runHost, tempDirsPerTest } from "../support/cli.js"
import { makeDatabase, type TestDatabase, testDialects } from "../support/databases.js"
import { writeExtension } from "../support/extensions.js"

// Several `host serve` replicas, each with its own panel root, sharing one database (docs/operations.md
// "Running replicas"). Replicas need a database server: a SQLite file lives on one machine's disk, so these
// suites run on MariaDB and PostgreSQL only (HOST_TEST_MYSQL_URL / HOST_TEST_PG_URL), each test in a
// database of its own. Every wait polls the HTTP answer until a deadline; none sleeps a fixed time.

const temp = tempDirsPerTest()
const running: Array<RunningServer> = []
const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop()))
  await Promise.all(closers.splice(0).map((close) => close()))
})

/** A panel root for one replica: its own folder, the test users, and `host.yaml` lines. */
const replicaRoot = (name: string, config: ReadonlyArray<string> = []) => {
  const root = temp(`host-replica-${name}-`)
  writePanelConfig(root)
  writeFileSync(join(root, "config", "host.yaml"), `${config.join("\n")}\n`)
  return root
}

const serve = async (root: string, db: TestDatabase, env: Readonly<Record<string, string>> = {}, hostname?: string) => {
  const server = await startServer(root, { env: { ...db.env, ...env }, pollMs: 500, ...(hostname === undefined ? {} : { hostname }) })
  running.push(server)
  return server
}

/** Polls `path` on `server` as dave (a signed-in user) until it answers `status`; returns how long that took. */
const answers = (server: RunningServer, path: string, status: number, timeoutMs = 3_000) =>
  waitFor(async () => (await request(`${server.url}${path}`, { as: "dave" })).status === status, timeoutMs)

/** The archive of a folder, exported by the real `host export`. */
const exportFolder = async (folder: string, into: string): Promise<BuiltArchive> => {
  const run = await runHost(["export", folder, "--output", `${into}/`, "--json"])
  if (run.code !== 0) throw new Error(`host export ${folder} failed: ${run.stderr}`)
  const result = JSON.parse(run.stdout) as { id: string; version: string; archive: string; sha256: string; bytes: number }
  return { id: result.id, version: result.version, name: result.archive.split("/").pop()!, file: result.archive, sha256: result.sha256, bytes: result.bytes }
}

const uploadForm = (archive: BuiltArchive) => {
  const form = new FormData()
  form.append("archive", new Blob([readFileSync(archive.file)]), archive.name)
  return form
}

/** A small extension with one client route, GET /api/client/host/acme/pinger/ping. */
const pingerFolder = (parent: string, answer = "true") =>
  writeExtension(parent, {
    id: "acme/pinger",
    version: "1.0.0",
    files: {
      "src/routes/api-client.ts": `import { defineRoutes } from "@host/sdk/server"\n\nexport default defineRoutes((r) => {\n  r.get("/ping", () => ({ pong: ${answer} }))\n})\n`
    }
  })

/** A registry on 127.0.0.1:0 listing acme/probe and acme/pinger (`dir` holds registry.json and archives/). */
const startRegistry = async (): Promise<ServedRegistry & { readonly dir: string; readonly built: Map<string, BuiltArchive> }> => {
  const dir = temp("host-replica-registry-")
  const archivesDir = join(dir, "archives")
  mkdirSync(archivesDir, { recursive: true })
  const built = new Map<string, BuiltArchive>()
  for (const folder of [fixture("runtime", "probe"), pingerFolder(temp("host-replica-sources-"))]) {
    const archive = await exportFolder(folder, archivesDir)
    built.set(`${archive.id}@${archive.version}`, archive)
  }
  writeIndex(dir, index([entryFor(built, "acme/probe"), entryFor(built, "acme/pinger")]))
  const served = await serveRegistry(dir)
  closers.push(served.close)
  return { ...served, dir, built }
}

/** A port nothing listens on (bound, then closed). */
const closedPort = async () => {
  const registry = await serveRegistry(temp("host-replica-closed-"))
  const port = new URL(registry.url).port
  await registry.close()
  return port
}

const canUnshare = spawnSync("unshare", ["-u", "true"]).status === 0

const dialects = testDialects().filter((dialect) => dialect !== "sqlite")

for (const dialect of dialects) {
  describe(`replicas [${dialect}]`, () => {
    let database: { readonly database: TestDatabase; readonly drop: () => Promise<void> } | undefined
    afterEach(async () => {
      await database?.drop()
      database = undefined
    })
    const db = async () => {
      database = await makeDatabase(dialect)
      return database.database
    }

    it("two replicas with a shared artifact store: installed on A, served by B within 3 s; disabled on B, 404 on A within 3 s; removed on A, gone from B", async () => {
      const shared = temp("host-replica-artifacts-")
      const database = await db()
      const rootA = replicaRoot("a", [`artifacts_path: ${shared}`])
      const rootB = replicaRoot("b", [`artifacts_path: ${shared}`])
      const [a, b] = await Promise.all([serve(rootA, database), serve(rootB, database)])
      const probe = await exportFolder(fixture("runtime", "probe"), temp("host-replica-upload-"))

      const installed = await request(`${a.url}/admin/host/api/extensions`, { as: "admin", method: "POST", body: uploadForm(probe) })
      expect(installed.status, installed.text).toBe(201)
      const tookB = await answers(b, "/api/client/host/acme/probe/open", 200)
      expect(tookB).toBeLessThan(3_000)
      // B unpacked exactly the recorded archive, from the shared store, and ran no migration of its own.
      expect(readFileSync(join(rootB, "host", "extensions", "acme", "probe", "extension.yaml"), "utf8"))
        .toBe(readFileSync(fixture("runtime", "probe", "extension.yaml"), "utf8"))
      expect(JSON.parse(readFileSync(join(rootB, "storage", "host", "replica", "trees", "acme", "probe.json"), "utf8")))
        .toEqual({ sha256: probe.sha256, version: "1.0.0" })

      const disabled = await request(`${b.url}/admin/host/api/extensions/acme/probe/disable`, { as: "admin", method: "POST" })
      expect(disabled.status, disabled.text).toBe(200)
      expect(await answers(a, "/api/client/host/acme/probe/open", 404)).toBeLessThan(3_000)

      const enabled = await request(`${a.url}/admin/host/api/extensions/acme/probe/enable`, { as: "admin", method: "POST" })
      expect(enabled.status, enabled.text).toBe(200)
      await answers(b, "/api/client/host/acme/probe/open", 200)

      const removed = await request(`${a.url}/admin/host/api/extensions/acme/probe/remove`, { as: "admin", method: "POST" })
      expect(removed.status, removed.text).toBe(200)
      await answers(b, "/api/client/host/acme/probe/open", 404)
      await waitFor(async () => !existsSync(join(rootB, "host", "extensions", "acme", "probe")), 3_000)
      expect(existsSync(join(rootB, "storage", "host", "replica", "trees", "acme", "probe.json"))).toBe(false)
      // One install, one disable, one enable, one removal: each ran once, on the replica that was asked.
      const activity = await database.query<{ action: string }>(rootA, "SELECT action FROM host_activity_logs ORDER BY id")
      expect(activity.map((row) => row.action)).toEqual(["installed", "disabled", "enabled", "removed"])
    })

    it("three replicas on registry sources: B fetches what A installed; C, whose store lacks it and whose registry is unreachable, answers 503 for it, names it in /host/ready and host status, and keeps serving the rest", async () => {
      const registry = await startRegistry()
      const deadRegistry = `http://127.0.0.1:${await closedPort()}`
      const database = await db()
      const rootA = replicaRoot("a", [`registry_url: ${registry.url}`])
      const rootB = replicaRoot("b", [`registry_url: ${registry.url}`])
      const rootC = replicaRoot("c", [`registry_url: ${deadRegistry}`])
      // C has acme/pinger already (installed on its root while the registry was reachable from it).
      const added = await runHost(["--root", rootC, "add", "acme/pinger"], { env: { ...database.env, HOST_REGISTRY_URL: registry.url } })
      expect(added.code, added.stderr).toBe(0)
      const [a, b, c] = await Promise.all([serve(rootA, database), serve(rootB, database), serve(rootC, database)])
      // A and B fetched acme/pinger from its registry source when they started.
      for (const server of [a, b, c]) await answers(server, "/api/client/host/acme/pinger/ping", 200)

      // Installed through A's admin API: a reconcile of A's desired state, which names the registry source.
      mkdirSync(join(rootA, "desired-state"), { recursive: true })
      writeFileSync(join(rootA, "desired-state", "extensions.yaml"), `host: "1.0"\nextensions:\n  acme/pinger: "1.0.0"\n  acme/probe: "1.0.0"\n`)
      const reconciled = await request(`${a.url}/admin/host/api/reconcile`, { as: "admin", method: "POST", body: {} })
      expect(reconciled.status, reconciled.text).toBe(200)
      expect(await answers(b, "/api/client/host/acme/probe/open", 200)).toBeLessThan(3_000)

      // C cannot get it: its routes answer 503 naming it; everything else is served.
      await answers(c, "/api/client/host/acme/probe/open", 503)
      const refused = await request(`${c.url}/api/client/host/acme/probe/open`, { as: "dave" })
      expect(refused.json).toEqual({
        errors: [{ code: "ExtensionUnavailable", status: "503", detail: expect.stringMatching(/^acme\/probe is unavailable on this replica: .*registry source could not be fetched/) }]
      })
      expect((await request(`${c.url}/api/client/host/acme/pinger/ping`, { as: "dave" })).json).toEqual({ pong: true })
      const ready = await request(`${c.url}/host/ready`)
      expect(ready.status).toBe(200)
      expect(ready.json).toMatchObject({ status: "degraded", unavailable: [{ id: "acme/probe", reason: expect.stringContaining("could not be fetched") }] })
      expect((await request(`${c.url}/host/ready?strict`)).status).toBe(503)
      expect((await request(`${b.url}/host/ready?strict`)).json).toMatchObject({ status: "ok", unavailable: [] })
      const status = await runHost(["--root", rootC, "status", "--json"], { env: database.env })
      expect(status.code, status.stderr).toBe(0)
      expect(JSON.parse(status.stdout).replica).toMatchObject({
        server_running: true,
        unavailable: [{ id: "acme/probe", reason: expect.stringContaining("could not be fetched") }]
      })
      const text = await runHost(["--root", rootC, "status"], { env: database.env })
      expect(text.stdout).toMatch(/Replica: +server pid \d+ \(running\).*unavailable on this replica: acme\/probe \(/)

      // Disabled on B: A stops serving it within 3 s, and on C it is no longer unavailable but disabled.
      const disabled = await request(`${b.url}/admin/host/api/extensions/acme/probe/disable`, { as: "admin", method: "POST" })
      expect(disabled.status, disabled.text).toBe(200)
      expect(await answers(a, "/api/client/host/acme/probe/open", 404)).toBeLessThan(3_000)
      await answers(c, "/api/client/host/acme/probe/open", 404)
      expect((await request(`${c.url}/host/ready`)).json).toMatchObject({ status: "ok", unavailable: [] })
    })

    it("kill -9 of the replica holding the lock mid-operation: another replica's operation takes over after the lease, and the state stays consistent", async () => {
      const shared = temp("host-replica-artifacts-")
      const database = await db()
      // A 3 s lease (config lock_lease_seconds) instead of 30 s, so the test waits for a real lapse quickly.
      const rootA = replicaRoot("a", [`artifacts_path: ${shared}`, "lock_lease_seconds: 3"])
      const rootB = replicaRoot("b", [`artifacts_path: ${shared}`, "lock_lease_seconds: 3"])
      // On another host name, B cannot see A's pid: only the lapsed lease says A is gone.
      const a = await serve(rootA, database, { HOST_DEBUG: JSON.stringify({ crash_at: "switched" }) }, canUnshare ? "replica-a" : undefined)
      const b = await serve(rootB, database)
      const probe = await exportFolder(fixture("runtime", "probe"), temp("host-replica-upload-"))

      // A dies (SIGKILL) with the new tree switched in and its transaction open, still holding the lock.
      const crashed = await request(`${a.url}/admin/host/api/extensions`, { as: "admin", method: "POST", body: uploadForm(probe) }).catch(() => undefined)
      expect(crashed).toBeUndefined()
      await waitFor(async () => a.process.exitCode !== null || a.process.signalCode !== null, 5_000)
      const killedAt = Date.now()
      const lock = await database.query<{ value: string }>(
        rootB,
        dialect === "mysql" ? "SELECT value FROM host_settings WHERE `key` = 'lock'" : `SELECT value FROM host_settings WHERE "key" = 'lock'`
      )
      expect(lock).toHaveLength(1)
      const held = JSON.parse(lock[0]!.value) as { hostname: string; lease_expires_at: string }
      if (canUnshare) expect(held.hostname).toBe("replica-a")

      // B's install waits for the lock (every server front door waits 5 s: docs/decisions.md "One rule in one
      // place") and takes it over once A's 3 s lease lapsed; only a slow machine sees a 409 first.
      let first: number | undefined
      await waitFor(async () => {
        const answer = await request(`${b.url}/admin/host/api/extensions`, { as: "admin", method: "POST", body: uploadForm(probe) })
        first ??= answer.status
        return answer.status === 201
      }, 15_000)
      if (canUnshare) {
        expect([201, 409]).toContain(first)
        expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(held.lease_expires_at))
      }
      expect(Date.now() - killedAt).toBeLessThan(15_000)
      await answers(b, "/api/client/host/acme/probe/open", 200)

      // Consistent: one record, one activity row (B's), no lock left, and nothing of A's half operation.
      expect((await database.inspect(rootB)).extensions).toEqual([{ extension_id: "acme/probe", version: "1.0.0", enabled: 1 }])
      expect((await database.inspect(rootB)).activity.map((row) => row.action)).toEqual(["installed"])
      await waitFor(async () => (await database.query(rootB, dialect === "mysql" ? "SELECT id FROM host_settings WHERE `key` = 'lock'" : `SELECT id FROM host_settings WHERE "key" = 'lock'`)).length === 0, 3_000)
      // A, started again, rolls its interrupted operation back (the journal) and converges to B's install.
      const again = await serve(rootA, database)
      await answers(again, "/api/client/host/acme/probe/open", 200)
      expect(readFileSync(join(rootA, "host", "extensions", "acme", "probe", "extension.yaml"), "utf8"))
        .toBe(readFileSync(fixture("runtime", "probe", "extension.yaml"), "utf8"))
      expect(existsSync(join(rootA, "storage", "host", "journal")) ? spawnSync("ls", [join(rootA, "storage", "host", "journal")]).stdout.toString() : "").toBe("")
    })

    it("a registry that now serves other bytes for the recorded version is refused: the replica that lacks the archive reports it, never installs them", async () => {
      const registry = await startRegistry()
      const database = await db()
      const rootA = replicaRoot("a", [`registry_url: ${registry.url}`])
      const added = await runHost(["--root", rootA, "add", "acme/pinger"], { env: database.env })
      expect(added.code, added.stderr).toBe(0)
      // Same id and version, other bytes: the index now lists their sha256, the record keeps the installed one's.
      const other = await exportFolder(pingerFolder(temp("host-replica-sources-"), "false"), temp("host-replica-other-"))
      writeFileSync(join(registry.dir, "archives", registry.built.get("acme/pinger@1.0.0")!.name), readFileSync(other.file))
      registry.built.set("acme/pinger@1.0.0", { ...other, name: registry.built.get("acme/pinger@1.0.0")!.name })
      writeIndex(registry.dir, index([entryFor(registry.built, "acme/probe"), entryFor(registry.built, "acme/pinger")]))

      const rootB = replicaRoot("b", [`registry_url: ${registry.url}`])
      const b = await serve(rootB, database)
      await answers(b, "/api/client/host/acme/pinger/ping", 503)
      const refused = await request(`${b.url}/api/client/host/acme/pinger/ping`, { as: "dave" })
      expect((refused.json as { errors: Array<{ detail: string }> }).errors[0]!.detail).toMatch(
        /^acme\/pinger is unavailable on this replica: .*the registry now serves other bytes for acme\/pinger@1\.0\.0/
      )
      expect(existsSync(join(rootB, "host", "extensions", "acme", "pinger"))).toBe(false)
    })

    it("schedules run once per minute per database: runners on two replicas' roots race for the same minute, one runs it", async () => {
      const shared = temp("host-replica-artifacts-")
      const database = await db()
      const rootA = replicaRoot("a", [`artifacts_path: ${shared}`])
      const rootB = replicaRoot("b", [`artifacts_path: ${shared}`])
      const out = join(temp("host-replica-ticks-"), "ticks")
      const ticker = writeExtension(temp("host-replica-sources-"), {
        id: "acme/ticker",
        version: "1.0.0",
        files: {
          "extension.yaml": `host: "1.0"\nid: acme/ticker\nname: Ticker\nversion: 1.0.0\ndescription: Ticks.\nlicense: MIT\n` +
            `schedules:\n  tasks:\n    - { id: tick, label: Tick, command: "ticker:tick", cron: "* * * * *" }\n`,
          "src/TickerExtension.ts": `import { HostExtension } from "@host/sdk/server"\nimport { appendFileSync } from "node:fs"\n\n` +
            `export class TickerExtension extends HostExtension {\n  getCommands() {\n    return [{ name: "ticker:tick", run: () => { appendFileSync(process.env.TICK_OUT ?? "/dev/null", \`tick \${process.env.TICK_ROOT}\\n\`) } }]\n  }\n}\n`
        }
      })
      const added = await runHost(["--root", rootA, "add", ticker], { env: database.env })
      expect(added.code, added.stderr).toBe(0)
      // B's root gets the tree the way a replica does: its server converges from the shared store.
      const b = await serve(rootB, database)
      await waitFor(async () => existsSync(join(rootB, "host", "extensions", "acme", "ticker", "extension.yaml")), 3_000)
      await b.stop()

      const runner = (root: string, minute = "00") =>
        runHost(["--root", root, "schedule:run", "--json"], {
          env: { ...database.env, TICK_OUT: out, TICK_ROOT: root, HOST_DEBUG: JSON.stringify({ now: `2026-01-01T10:${minute}:30Z` }) }
        })
      const runs = await Promise.all([runner(rootA), runner(rootB), runner(rootA), runner(rootB)])
      for (const run of runs) expect(run.code, run.stderr).toBe(0)
      const outcomes = runs.map((run) => JSON.parse(run.stdout) as Array<{ task: string; status: string }>)
      expect(outcomes.filter((list) => list.length > 0)).toEqual([[expect.objectContaining({ task: "tick", status: "ok" })]])
      expect(readFileSync(out, "utf8").split("\n").filter((line) => line !== "")).toHaveLength(1)
      // Either root runs the task when it wins a minute (so the race above was a real one).
      for (const [root, minute] of [[rootA, "01"], [rootB, "02"]] as const) {
        expect(JSON.parse((await runner(root, minute)).stdout)).toEqual([expect.objectContaining({ task: "tick", status: "ok" })])
      }
      expect(readFileSync(out, "utf8").split("\n").filter((line) => line !== "")).toEqual([expect.any(String), `tick ${rootA}`, `tick ${rootB}`])
    })
  })
}

if (dialects.length === 0) {
  describe("replicas", () => {
    it.skip("need HOST_TEST_MYSQL_URL or HOST_TEST_PG_URL (a SQLite database cannot be shared between replicas)", () => {})
  })
}
