// P1: cold start of `./bin/host.js list --json` on a fresh root (a new temp root each run, so the
// database and its four tables are created every time) against `node -e 0`, measured in the same run.
// Goal: ratio ≤ 2.5.
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const runs = Number(process.env.BENCH_RUNS ?? 15)
const bin = fileURLToPath(new URL("../bin/host.js", import.meta.url))

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

const time = (args, prepare) => {
  const samples = []
  for (let run = 0; run < runs; run++) {
    const context = prepare?.()
    const start = process.hrtime.bigint()
    execFileSync(process.execPath, args(context), { stdio: ["ignore", "pipe", "inherit"] })
    samples.push(Number(process.hrtime.bigint() - start) / 1e6)
    context?.cleanup()
  }
  return median(samples)
}

const freshRoot = () => {
  const path = mkdtempSync(join(tmpdir(), "host-bench-"))
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) }
}

time(() => ["-e", "0"]) // warm the file cache
const baseline = time(() => ["-e", "0"])
const host = time((root) => [bin, "list", "--json", "--root", root.path], freshRoot)
console.log(`P1 cold start, median of ${runs} runs each:`)
console.log(`  node -e 0                 ${baseline.toFixed(1)} ms`)
console.log(`  host list --json (fresh)  ${host.toFixed(1)} ms`)
console.log(`  ratio                     ${(host / baseline).toFixed(2)}x (goal <= 2.5x)`)
