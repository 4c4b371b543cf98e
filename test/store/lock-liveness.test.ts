import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { processAlive } from "../../src/store/OperationLock.js"

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
    while (readFileSync(`/proc/${zombie}/stat`, "utf8").split(") ")[1]![0] !== "Z") await new Promise((resolve) => setTimeout(resolve, 10))
    try {
      expect(processAlive(zombie)).toBe(false)
    } finally {
      parent.kill("SIGKILL")
    }
  })
})
