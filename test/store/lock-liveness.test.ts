import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { hostname } from "node:os"
import { leaseLapsed } from "../../src/domain/Lock.js"
import { holderAlive, processAlive } from "../../src/store/OperationLock.js"
import { until } from "../support/wait.js"

describe("processAlive", () => {
  it("is true for a running process and false for an exited one", () => {
    expect(processAlive(process.pid)).toBe(true)
    expect(processAlive(2 ** 22 + 12345)).toBe(false)
  })

  it("treats a zombie (dead, not reaped) as gone", async () => {
    // The parent forks a child that exits at once and never reaps it: the child stays a zombie.
    const parent = spawn("python3", ["-c", "import os, sys, time\npid = os.fork()\nif pid == 0:\n    os._exit(0)\nprint(pid, flush=True)\ntime.sleep(10)\n"])
    const zombie = await new Promise<number>((resolve) => parent.stdout.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim()))))
    // Wait for the child to have exited (state Z), not for a guessed time.
    await until(() => readFileSync(`/proc/${zombie}/stat`, "utf8").split(") ")[1]![0] === "Z", `pid ${zombie} to be a zombie`)
    try {
      expect(processAlive(zombie)).toBe(false)
    } finally {
      parent.kill("SIGKILL")
    }
  })
})

describe("holderAlive with leases", () => {
  const now = Date.now()
  const lock = (hostname: string, leaseFromNow: number | undefined) => ({
    id: "l",
    holder: "cli",
    pid: process.pid,
    hostname,
    operation: "add acme/x",
    acquired_at: new Date(now).toISOString(),
    ...(leaseFromNow === undefined ? {} : { lease_expires_at: new Date(now + leaseFromNow).toISOString() })
  })

  it("a lapsed lease is dead wherever the holder ran; a running one keeps a remote holder alive", () => {
    expect(holderAlive(lock("replica-b.example", 20_000), now)).toBe(true)
    expect(holderAlive(lock("replica-b.example", -1_000), now)).toBe(false)
    expect(holderAlive(lock(hostname(), -1_000), now)).toBe(false)
    expect(holderAlive(lock(hostname(), 20_000), now)).toBe(true)
    expect(leaseLapsed(lock("replica-b.example", -1), now)).toBe(true)
  })

  it("without leases (SQLite) the pid decides on this host, and a remote or lease-less holder counts as alive", () => {
    expect(holderAlive(lock(hostname(), -1_000), now, false)).toBe(true)
    expect(holderAlive(lock("replica-b.example", -1_000), now, false)).toBe(true)
    expect(holderAlive(lock("replica-b.example", undefined), now)).toBe(true)
    expect(holderAlive({ ...lock(hostname(), 20_000), pid: 2 ** 22 + 12345 }, now)).toBe(false)
  })
})
