// P1: cold start of `./bin/host.js list --json` on a fresh root (a new temp root each run, so the
// database and its four tables are created every time) against `node -e 0`, measured in the same run,
// interleaved. Goal: ratio ≤ 2.5 by CPU time (steadier than wall time on a shared machine; both shown).
// HOST_BENCH_COMPARE=<another checkout's bin/host.js> measures that build too, interleaved in the same run,
// so a change's before and after are compared on the same machine at the same moment.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { measureNode, median } from "./cpu.mjs"

const runs = Number(process.env.BENCH_RUNS ?? 15)
const bin = fileURLToPath(new URL("../bin/host.js", import.meta.url))

measureNode(["-e", "0"]) // warm the file cache
const baseline = []
const host = []
// `host --help` prints cli/Help.ts's static page without loading a command module (docs/architecture.md).
const help = []
const compareBin = process.env.HOST_BENCH_COMPARE
const compared = []
for (let run = 0; run < runs; run++) {
  baseline.push(measureNode(["-e", "0"]))
  help.push(measureNode([bin, "--help"]))
  const root = mkdtempSync(join(tmpdir(), "host-bench-"))
  host.push(measureNode([bin, "list", "--json", "--root", root]))
  rmSync(root, { recursive: true, force: true })
  if (compareBin !== undefined) {
    const other = mkdtempSync(join(tmpdir(), "host-bench-"))
    compared.push(measureNode([compareBin, "list", "--json", "--root", other]))
    rmSync(other, { recursive: true, force: true })
  }
}
const cpu = (samples) => median(samples.map((sample) => sample.cpu))
const wall = (samples) => median(samples.map((sample) => sample.wall))
console.log(`P1 cold start, median of ${runs} runs each (CPU time; wall time in brackets):`)
console.log(`  node -e 0                 ${cpu(baseline).toFixed(1)} ms (${wall(baseline).toFixed(1)} ms)`)
console.log(`  host list --json (fresh)  ${cpu(host).toFixed(1)} ms (${wall(host).toFixed(1)} ms)`)
console.log(`  ratio                     ${(cpu(host) / cpu(baseline)).toFixed(2)}x (${(wall(host) / wall(baseline)).toFixed(2)}x) (goal <= 2.5x)`)
console.log(`  host --help               ${cpu(help).toFixed(1)} ms (${wall(help).toFixed(1)} ms), ${(cpu(help) / cpu(baseline)).toFixed(2)}x`)
if (compareBin !== undefined) {
  console.log(`  compared: ${compareBin}`)
  console.log(`    host list --json (fresh) ${cpu(compared).toFixed(1)} ms (${wall(compared).toFixed(1)} ms), ${(cpu(compared) / cpu(baseline)).toFixed(2)}x; this build / that one ${(cpu(host) / cpu(compared)).toFixed(2)}x`)
}
