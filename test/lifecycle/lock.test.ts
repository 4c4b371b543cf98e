import { spawnSync } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { hostname } from "node:os"
import { expect, it } from "vitest"
import { fixture, runHost, tempDirsPerTest } from "../support/cli.js"
import { writeExtension } from "../support/extensions.js"
import { currentDatabase, describeDatabases } from "../support/databases.js"
import { eventually, until } from "../support/wait.js"

const temp = tempDirsPerTest()
const host = (root: string, ...args: Array<string>) => runHost([...args, "--root", root])

/**
 * An extension whose migration writes `begin <id>` to `log`, holds on until `release` exists (or for
 * `ms`), then writes `end <id>`: its install holds the lock exactly as long as the test wants, and the
 * log shows whether two installs ever overlapped.
 */
const slowExtension = (dir: string, id: string, hold: { readonly log: string; readonly release?: string; readonly ms?: number }) =>
  writeExtension(dir, {
    id,
    version: "1.0.0",
    // Writes first, so the batch holds SQLite's write lock while it waits: other commands must still
    // see the operation lock at once instead of waiting for the database.
    migrations: {
      "001_wait.js": `import { appendFileSync, existsSync } from "node:fs"
export const up = async (sql) => {
  await sql\`CREATE TABLE ext_${id.replace("/", "_")} (id INTEGER)\`
  appendFileSync(${JSON.stringify(hold.log)}, "begin ${id}\\n")
  ${
        hold.release === undefined
          ? `await new Promise((resolve) => setTimeout(resolve, ${hold.ms ?? 0}))`
          : `while (!existsSync(${JSON.stringify(hold.release)})) await new Promise((resolve) => setTimeout(resolve, 20))`
      }
  appendFileSync(${JSON.stringify(hold.log)}, "end ${id}\\n")
}
export const down = (sql) => sql\`DROP TABLE ext_${id.replace("/", "_")}\`
`
    }
  })

/** Resolves once `file` exists (the migration above is running). */
const waitForFile = (file: string) => until(() => existsSync(file), `${file} to appear`)

/** The lock `host status` shows, once one is taken. */
const lockOf = async (root: string) => JSON.parse((await host(root, "status", "--json")).stdout).lock
const waitForLock = (root: string) => eventually(() => lockOf(root), (lock) => lock !== null, { what: "the lock to be taken" })

const writeLock = async (root: string, lock: Record<string, unknown>) => {
  const db = currentDatabase()
  const key = db.dialect === "mysql" ? "`key`" : `"key"`
  await db.query(
    root,
    `INSERT INTO host_settings (extension_id, ${key}, value, created_at, updated_at) VALUES ('host/core', 'lock', ?, '', '')`.replace(
      "?",
      db.dialect === "pg" ? "$1" : "?"
    ),
    [JSON.stringify(lock)]
  )
}

const deadPid = () => spawnSync(process.execPath, ["-e", "0"]).pid!

describeDatabases("operation lock", (_db, dialect) => {
  it("a second writer fails at once with the holder's details, or waits with --lock-timeout", async () => {
    const root = temp("host-root-")
    await host(root, "list")
    const gate = temp("host-gate-")
    const log = join(gate, "log")
    const slow = host(root, "add", slowExtension(temp("host-src-"), "acme/slow", { log, release: join(gate, "release") }))
    await waitForFile(log)
    const lock = await waitForLock(root)
    expect(lock).toMatchObject({ operation: expect.stringContaining("add"), holder: "cli", hostname: hostname() })
    const refused = await host(root, "add", fixture("extensions", "hello-world"))
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("another operation holds the lock")
    expect(refused.stderr).toContain(`host unlock ${lock.id}`)
    // A waiting add started while the lock is held finishes after the holder lets go.
    const waiting = host(root, "add", fixture("extensions", "hello-world"), "--lock-timeout", "30")
    writeFileSync(join(gate, "release"), "")
    expect((await waiting).code).toBe(0)
    expect((await slow).code).toBe(0)
    expect((await currentDatabase().inspect(root)).activity.map((a) => a.extension_id)).toEqual(["acme/slow", "acme/hello-world"])
  })

  it("two processes racing host add serialize and never interleave", async () => {
    const root = temp("host-root-")
    const src = temp("host-src-")
    const log = join(temp("host-log-"), "log")
    await host(root, "list")
    const runs = await Promise.all([
      host(root, "add", slowExtension(src, "acme/one", { log, ms: 300 }), "--lock-timeout", "30"),
      host(root, "add", slowExtension(src, "acme/two", { log, ms: 300 }), "--lock-timeout", "30")
    ])
    expect(runs.map((run) => run.code)).toEqual([0, 0])
    // Each install's migration is one uninterrupted begin…end of its own id: never begin, begin.
    const marks = readFileSync(log, "utf8").trim().split("\n")
    expect(marks).toHaveLength(4)
    const [first, second] = [marks[0]!.split(" ")[1], marks[2]!.split(" ")[1]]
    expect(first).not.toBe(second)
    expect(marks).toEqual([`begin ${first}`, `end ${first}`, `begin ${second}`, `end ${second}`])
    const db = await currentDatabase().inspect(root)
    expect(db.extensions.map((e) => e.extension_id).sort()).toEqual(["acme/one", "acme/two"])
    expect(db.migrations.map((m) => m.batch)).toEqual([1, 1])
    expect(JSON.parse((await host(root, "status", "--json")).stdout).lock).toBeNull()
  })

  it("a dead holder's lock is taken over", async () => {
    const root = temp("host-root-")
    await host(root, "list")
    await writeLock(root, { id: "dead-1", holder: "cli", pid: deadPid(), hostname: hostname(), operation: "add acme/x", acquired_at: "2026-01-01T00:00:00Z" })
    const run = await host(root, "add", fixture("extensions", "hello-world"))
    expect(run.code).toBe(0)
    expect(run.stderr).toContain("taking over the lock of add acme/x")
  })

  it("a holder whose pid now belongs to another process (a restarted container) is gone", async () => {
    const root = temp("host-root-")
    await host(root, "list")
    // This test's own pid is alive, but it started at another time than the lock says.
    await writeLock(root, {
      id: "reused-1",
      holder: "cli",
      pid: process.pid,
      hostname: hostname(),
      operation: "update acme/x",
      acquired_at: "2026-01-01T00:00:00Z",
      process_started: "1"
    })
    const status = await host(root, "status", "--json")
    expect(JSON.parse(status.stdout).lock).toBeNull()
    expect(status.stderr).toContain("taking over the lock of update acme/x")
    // With its real start time it is a live holder.
    const started = readFileSync(`/proc/${process.pid}/stat`, "utf8").split(") ")[1]!.split(" ")[19]!
    await writeLock(root, { id: "live-2", holder: "cli", pid: process.pid, hostname: hostname(), operation: "update acme/y", acquired_at: "2026-01-01T00:00:00Z", process_started: started })
    expect(JSON.parse((await host(root, "status", "--json")).stdout).lock).toMatchObject({ id: "live-2" })
  })

  it("a dead holder's lock is cleared by the next command, even a read-only one", async () => {
    const root = temp("host-root-")
    await host(root, "list")
    await writeLock(root, { id: "dead-3", holder: "cli", pid: deadPid(), hostname: hostname(), operation: "remove acme/x", acquired_at: "2026-01-01T00:00:00Z" })
    const status = await host(root, "status", "--json")
    expect(status.code).toBe(0)
    expect(JSON.parse(status.stdout).lock).toBeNull()
    expect(status.stderr).toContain("taking over the lock of remove acme/x")
  })

  it("host unlock clears a dead holder's lock and refuses a live one without --force", async () => {
    const root = temp("host-root-")
    await host(root, "list")
    await writeLock(root, { id: "live-1", holder: "cli", pid: process.pid, hostname: hostname(), operation: "reconcile", acquired_at: "2026-01-01T00:00:00Z" })
    const status = await host(root, "status")
    expect(status.stdout).toContain("Lock:       held by cli (pid")
    const wrongId = await host(root, "unlock", "nope")
    expect(wrongId.code).toBe(1)
    expect(wrongId.stderr).toContain("the lock is live-1, not nope")
    const alive = await host(root, "unlock", "live-1")
    expect(alive.code).toBe(1)
    expect(alive.stderr).toContain("is still running on this host; use --force")
    const forced = await host(root, "unlock", "live-1", "--force", "--json")
    expect(forced.code).toBe(0)
    expect(JSON.parse(forced.stdout).unlocked.id).toBe("live-1")
    await writeLock(root, { id: "dead-2", holder: "cli", pid: deadPid(), hostname: hostname(), operation: "add", acquired_at: "2026-01-01T00:00:00Z" })
    expect((await host(root, "unlock", "dead-2")).stdout).toContain("Cleared lock dead-2")
    expect((await host(root, "unlock", "dead-2")).stderr).toContain("no operation lock is held")
  })

  // Leases apply to server databases, shared by processes on several hosts; a SQLite file has one host.
  it.skipIf(dialect === "sqlite")("a holder on another host is alive while its lease runs and dead once it lapsed", async () => {
    const root = temp("host-root-")
    await host(root, "list")
    const base = { holder: "admin", pid: 4242, hostname: "replica-b.example", operation: "add acme/x", acquired_at: new Date().toISOString() }
    await writeLock(root, { ...base, id: "remote-live", lease_expires_at: new Date(Date.now() + 25_000).toISOString() })
    const status = await host(root, "status")
    expect(status.stdout).toMatch(/Lock: +held by admin \(pid 4242 on replica-b\.example, add acme\/x, since .*, lease until .*, id remote-live\)/)
    const refused = await host(root, "add", fixture("extensions", "hello-world"))
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("another operation holds the lock: add acme/x by admin (pid 4242 on replica-b.example")
    expect(refused.stderr).toContain("lease until")
    const unlock = await host(root, "unlock", "remote-live")
    expect(unlock.code).toBe(1)
    expect(unlock.stderr).toContain("keeps renewing its lease")
    expect((await host(root, "unlock", "remote-live", "--force")).code).toBe(0)
    await writeLock(root, { ...base, id: "remote-lapsed", lease_expires_at: new Date(Date.now() - 1_000).toISOString() })
    const taken = await host(root, "add", fixture("extensions", "hello-world"))
    expect(taken.code).toBe(0)
    expect(taken.stderr).toContain("taking over the lock of add acme/x (pid 4242 on replica-b.example; its lease lapsed at")
  })

  it.skipIf(dialect === "sqlite")("the holder renews its lease every 5 s while it works", async () => {
    const root = temp("host-root-")
    await host(root, "list")
    const slow = host(root, "add", slowExtension(temp("host-src-"), "acme/slow", { log: join(temp("host-log-"), "log"), ms: 8000 }))
    const first = await waitForLock(root)
    expect(Date.parse(first.lease_expires_at) - Date.parse(first.acquired_at)).toBe(30_000)
    const renewed = await eventually(() => lockOf(root), (lock) => lock === null || lock.lease_expires_at !== first.lease_expires_at, {
      what: "the lease to be renewed"
    })
    expect(renewed.id).toBe(first.id)
    expect(Date.parse(renewed.lease_expires_at)).toBeGreaterThan(Date.parse(first.lease_expires_at))
    expect((await slow).code).toBe(0)
    expect(JSON.parse((await host(root, "status", "--json")).stdout).lock).toBeNull()
  })
})
