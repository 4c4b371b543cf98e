import { spawn } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { hostBin, runHost, tempDirsPerTest } from "../support/cli.js"
import { inspectDatabase, sqlMigration, writeExtension } from "../support/extensions.js"

// R3 (docs/operations.md#reliability-suites): 8 writer processes (add, update, reconcile) started at
// once against one panel end in the desired state, and the lock log (HOST_DEBUG's lock_log: a line when a
// process takes the operation lock and one just before it gives it back) proves one holder at a time.
// bench/concurrency.bench.mjs runs many rounds.

const temp = tempDirsPerTest()

/** Runs `host` as a child process and resolves with its exit code and output. */
const spawnHost = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<{ code: number; stderr: string; args: string }>((resolve) => {
    const child = spawn(process.execPath, [hostBin, ...args], { env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", ...env } })
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.on("close", (code) => resolve({ code: code ?? -1, stderr, args: args.join(" ") }))
  })

/** Every `begin` is followed by the `end` of the same process before the next `begin`. */
export const lockLogProblems = (log: string): ReadonlyArray<string> => {
  const problems: Array<string> = []
  let holder: string | undefined
  for (const [index, line] of log.split("\n").filter((entry) => entry.endsWith(" lock")).entries()) {
    const [mark, pid] = line.split(" ")
    if (mark === "begin") {
      if (holder !== undefined) problems.push(`line ${index + 1}: pid ${pid} took the lock while pid ${holder} held it`)
      holder = pid
    } else {
      if (holder !== pid) problems.push(`line ${index + 1}: pid ${pid} gave back a lock held by ${holder ?? "nobody"}`)
      holder = undefined
    }
  }
  if (holder !== undefined) problems.push(`pid ${holder} never gave the lock back`)
  return problems
}

describe("R3: concurrent writers", () => {
  it("8 add/update/reconcile processes at once end in the desired state, one lock holder at a time", async () => {
    const root = temp("host-root-")
    const src = temp("host-src-")
    const migrations = (count: number) =>
      Object.fromEntries(Array.from({ length: count }, (_, index) => [
        `00${index + 1}_t.sql`,
        sqlMigration(`CREATE TABLE ext_r3_${index} (id INTEGER);`, `DROP TABLE ext_r3_${index};`)
      ]))
    const a1 = writeExtension(src, { id: "acme/alpha", version: "1.0.0", migrations: migrations(1) })
    const a2 = writeExtension(src, { id: "acme/alpha", version: "2.0.0", migrations: migrations(3) })
    const beta = writeExtension(src, { id: "acme/beta", version: "1.0.0", dependencies: { "acme/alpha": "^2.0" } })
    mkdirSync(join(root, "desired-state"))
    writeFileSync(join(root, "desired-state", "extensions.yaml"),
      `host: "1.0"\nextensions:\n  acme/alpha:\n    source: { path: ${a2} }\n  acme/beta:\n    source: { path: ${beta} }\n`)
    expect((await runHost(["add", a1, "--root", root])).code).toBe(0)

    const log = join(temp("host-log-"), "lock.log")
    const env = { HOST_DEBUG: JSON.stringify({ lock_log: log }) }
    const writers = [
      ["reconcile"],
      ["update", "acme/alpha", "--source", a2],
      ["reconcile"],
      ["add", a2, "--force"],
      ["reconcile"],
      ["add", beta],
      ["update", "acme/alpha", "--source", a2],
      ["reconcile"]
    ]
    const runs = await Promise.all(writers.map((args) => spawnHost([...args, "--root", root, "--lock-timeout", "120"], env)))
    for (const run of runs) {
      // A writer may find its work already done by another (refused cleanly), never a lock failure.
      if (run.code !== 0) {
        expect(run.code, run.args).toBe(1)
        expect(run.stderr, run.args).toMatch(/refused: (already installed|already at v2\.0\.0|dependency acme\/alpha is at 1\.0\.0, which does not satisfy \^2\.0)/)
      }
    }
    expect((await runHost(["reconcile", "--dry-run", "--detailed-exitcode", "--root", root])).code).toBe(0)
    expect(inspectDatabase(root).extensions).toEqual([
      { extension_id: "acme/alpha", version: "2.0.0", enabled: 1 },
      { extension_id: "acme/beta", version: "1.0.0", enabled: 1 }
    ])
    const text = readFileSync(log, "utf8")
    expect(lockLogProblems(text)).toEqual([])
    const holders = new Set(text.split("\n").filter((line) => line.startsWith("begin")).map((line) => line.split(" ")[1]))
    expect(holders.size).toBeGreaterThanOrEqual(8)
  }, 180_000)

  it("the log check catches an interleaving", () => {
    expect(lockLogProblems("begin 1 lock\nbegin 2 lock\nend 2 lock\nend 1 lock\n")).toHaveLength(2)
    expect(lockLogProblems("begin 1 lock\nend 1 lock\nbegin 2 lock\nend 2 lock\n")).toEqual([])
  })
})
