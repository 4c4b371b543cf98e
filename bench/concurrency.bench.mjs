// R3 at full size (docs/operations.md#reliability-suites): BENCH_R3_ROUNDS (default 10) rounds of 8
// writer processes (reconcile ×4, update ×2, add --force, add) started at once against one panel, each
// round from alpha 1.0.0 towards the desired alpha 2.0.0 + beta. Every round must end in the desired
// state with the lock log (HOST_DEBUG's lock_log) showing one holder at a time. Prints rounds converged,
// interleavings found, and the wall time per round against 8 sequential `host list` runs (baseline).
import { execFileSync, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import Database from "better-sqlite3"

const rounds = Number(process.env.BENCH_R3_ROUNDS ?? 10)
const bin = fileURLToPath(new URL("../bin/host.js", import.meta.url))
const work = mkdtempSync(join(tmpdir(), "host-r3-"))
const env = { PATH: process.env.PATH ?? "", NO_COLOR: "1" }

const writeExtension = (id, version, tables, dependencies = "") => {
  const dir = join(work, `${id.replace("/", "-")}-${version}`)
  mkdirSync(join(dir, "database", "migrations"), { recursive: true })
  writeFileSync(join(dir, "extension.yaml"), `host: "1.0"\nid: ${id}\nname: R3\nversion: ${version}\ndescription: R3\nlicense: MIT\n${dependencies}`)
  for (let index = 0; index < tables; index++) {
    writeFileSync(join(dir, "database", "migrations", `00${index + 1}_t.sql`), `-- up\nCREATE TABLE ext_r3_${index} (id INTEGER);\n-- down\nDROP TABLE ext_r3_${index};\n`)
  }
  return dir
}
const a1 = writeExtension("acme/alpha", "1.0.0", 1)
const a2 = writeExtension("acme/alpha", "2.0.0", 3)
const beta = writeExtension("acme/beta", "1.0.0", 0, "dependencies:\n  acme/alpha: \"^2.0\"\n")

const run = (args, extra = {}) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...env, ...extra }, stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("close", (code) => resolve({ code, stderr }))
  })

const interleavings = (log) => {
  let holder
  let found = 0
  for (const line of log.split("\n").filter((entry) => entry.endsWith(" lock"))) {
    const [mark, pid] = line.split(" ")
    if (mark === "begin") {
      if (holder !== undefined) found++
      holder = pid
    } else {
      if (holder !== pid) found++
      holder = undefined
    }
  }
  return found
}

const baselineRoot = join(work, "baseline")
mkdirSync(baselineRoot)
const baselineStart = performance.now()
for (let index = 0; index < 8; index++) execFileSync(process.execPath, [bin, "list", "--root", baselineRoot], { env })
const baseline = performance.now() - baselineStart

let converged = 0
let overlaps = 0
let holders = 0
const unexpected = []
const times = []
for (let round = 0; round < rounds; round++) {
  const root = join(work, `root-${round}`)
  mkdirSync(join(root, "desired-state"), { recursive: true })
  writeFileSync(join(root, "desired-state", "extensions.yaml"),
    `host: "1.0"\nextensions:\n  acme/alpha:\n    source: { path: ${a2} }\n  acme/beta:\n    source: { path: ${beta} }\n`)
  execFileSync(process.execPath, [bin, "add", a1, "--root", root], { env, stdio: "ignore" })
  const log = join(work, `lock-${round}.log`)
  const writers = [["reconcile"], ["update", "acme/alpha", "--source", a2], ["reconcile"], ["add", a2, "--force"], ["reconcile"], ["add", beta], ["update", "acme/alpha", "--source", a2], ["reconcile"]]
  const started = performance.now()
  const results = await Promise.all(writers.map((args) => run([...args, "--root", root, "--lock-timeout", "300"], { HOST_DEBUG: JSON.stringify({ lock_log: log }) })))
  times.push(performance.now() - started)
  for (const result of results) {
    if (result.code !== 0 && !/refused: (already installed|already at v2\.0\.0|dependency acme\/alpha is at 1\.0\.0, which does not satisfy \^2\.0)/.test(result.stderr)) {
      unexpected.push(result.stderr.split("\n").find((line) => line.startsWith("error:")) ?? `exit ${result.code}`)
    }
  }
  const db = new Database(join(root, "storage", "host", "host.db"), { readonly: true })
  const rows = db.prepare("SELECT extension_id, version, enabled FROM host_extensions ORDER BY extension_id").all()
  db.close()
  if (JSON.stringify(rows) === JSON.stringify([{ extension_id: "acme/alpha", version: "2.0.0", enabled: 1 }, { extension_id: "acme/beta", version: "1.0.0", enabled: 1 }])) converged++
  const text = readFileSync(log, "utf8")
  overlaps += interleavings(text)
  holders += text.split("\n").filter((line) => line.startsWith("begin")).length
}
rmSync(work, { recursive: true, force: true })
const mean = times.reduce((sum, value) => sum + value, 0) / times.length
console.log(`R3 concurrency: ${converged}/${rounds} rounds of 8 writers converged to the desired state`)
console.log(`  lock holds: ${holders}, interleavings: ${overlaps}, unexpected failures: ${unexpected.length}`)
console.log(`  wall time per round: ${mean.toFixed(0)} ms (${(mean / baseline).toFixed(2)}× eight sequential host list runs, ${baseline.toFixed(0)} ms)`)
for (const failure of unexpected.slice(0, 5)) console.log(`  unexpected: ${failure}`)
