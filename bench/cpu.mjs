// CPU time of a child `node` process: a preload makes the child write its own process.cpuUsage() (user +
// system, all its threads) when it exits, so the program measured is unchanged. On a machine shared with
// other work, CPU time is steadier than wall time; benches report both, as ratios against a baseline
// measured in the same run.
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const folder = mkdtempSync(join(tmpdir(), "host-bench-cpu-"))
const probe = join(folder, "probe.cjs")
// Beside the CPU time, the minor page faults (field 10 of /proc/self/stat): on a virtual machine touching
// fresh memory can cost more than the work done in it, so the faults tell a slower machine from slower code
// (docs/decisions.md "The young generation of a short command stays small").
writeFileSync(
  probe,
  `process.on("exit", () => { const fs = require("node:fs"); const u = process.cpuUsage(); ` +
    `let faults = -1; try { faults = Number(fs.readFileSync("/proc/self/stat", "utf8").replace(/^.*\\) /, "").split(" ")[7]) } catch {} ` +
    `fs.writeFileSync(process.env.HOST_BENCH_CPU_OUT, JSON.stringify({ cpu: (u.user + u.system) / 1000, faults })) })\n`
)
process.once("exit", () => rmSync(folder, { recursive: true, force: true }))

let counter = 0

/**
 * Runs `node <args>` and returns its CPU time and wall time in ms, its minor page faults (-1 where
 * /proc is missing) and its stdout; throws when it fails.
 */
export const measureNode = (args, env = {}) => {
  const out = join(folder, `cpu-${++counter}`)
  const start = process.hrtime.bigint()
  const result = spawnSync(process.execPath, ["-r", probe, ...args], { env: { ...process.env, ...env, HOST_BENCH_CPU_OUT: out }, encoding: "utf8" })
  const wall = Number(process.hrtime.bigint() - start) / 1e6
  if (result.status !== 0) throw new Error(`node ${args.join(" ")} failed (${result.status}):\n${result.stdout}\n${result.stderr}`)
  const { cpu, faults } = JSON.parse(readFileSync(out, "utf8"))
  rmSync(out, { force: true })
  return { cpu, wall, faults, stdout: result.stdout }
}

export const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
