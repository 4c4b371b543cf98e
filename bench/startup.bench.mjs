// P1: cold start of `./bin/host.js list --json` on a fresh root (a new temp root each run, so the
// database and its four tables are created every time) against `node -e 0`, measured in the same run,
// interleaved. Goal: ratio ≤ 2.0 by CPU time (issue 23) (steadier than wall time on a shared machine; both shown).
// HOST_BENCH_COMPARE=<another checkout's bin/host.js> measures that build too, interleaved in the same run,
// so a change's before and after are compared on the same machine at the same moment.
// Also `host add <folder>` of a small extension on a fresh root against `host list --json` (issue 23: 100
// adds took 109 s; goal ≤ 2.5× a cold `host list`), each on its own temp root, interleaved with the others.
// Beside P1, the stack's floor: bench/cli-floor.mjs, the least an Effect CLI on Host's stack does for the
// same command, bundled as dist/host.cjs is and run through a copy of bin/host.js (docs/decisions.md
// "P1: the stack's floor"). It shows how much of the goal the stack itself takes. Host's own work on top of
// it has a goal of its own (issue 36): `host list --json` at most 1.15x the floor, CPU, in the same run.
import { build } from "esbuild"
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { cliBundleOptions, cliOutputOptions } from "../scripts/cli-bundle.mjs"
import { measureNode, median } from "./cpu.mjs"
import { report } from "./report.mjs"
import { benchExtensionFiles, writeTree } from "./trees.mjs"

const runs = Number(process.env.BENCH_RUNS ?? 15)
const repo = fileURLToPath(new URL("..", import.meta.url))
const bin = join(repo, "bin", "host.js")

/**
 * Builds bench/cli-floor.mjs as scripts/build.mjs builds dist/host.cjs (cliBundleOptions, cliOutputOptions) into
 * .tmp/cli-floor/dist/host.cjs beside a copy of bin/host.js, inside the repository so the bundle finds
 * node_modules as dist/host.cjs does. Returns the copy's path.
 */
const buildFloor = async () => {
  const folder = join(repo, ".tmp", "cli-floor")
  rmSync(folder, { recursive: true, force: true })
  mkdirSync(join(folder, "bin"), { recursive: true })
  for (const file of ["host.js", "package.json"]) copyFileSync(join(repo, "bin", file), join(folder, "bin", file))
  await build({
    ...cliBundleOptions,
    absWorkingDir: repo,
    entryPoints: ["bench/cli-floor.mjs"],
    outfile: join(folder, "dist", "host.cjs"),
    ...cliOutputOptions,
    legalComments: "none",
    logLevel: "warning"
  })
  return { folder, bin: join(folder, "bin", "host.js") }
}
const floorBuild = await buildFloor()
// Its first run writes its code cache, as the build's own `host list` run writes dist/host.cjs's.
const firstFloorRoot = mkdtempSync(join(tmpdir(), "host-bench-"))
measureNode([floorBuild.bin, "list", "--json", "--root", firstFloorRoot])
rmSync(firstFloorRoot, { recursive: true, force: true })

measureNode(["-e", "0"]) // warm the file cache
const baseline = []
const host = []
// `host --help` prints cli/Help.ts's static page without loading a command module (docs/architecture.md).
const help = []
const compareBin = process.env.HOST_BENCH_COMPARE
const compared = []
const floor = []
// The extension `host add` installs: the small tree the reconcile bench uses, as a source folder.
const source = mkdtempSync(join(tmpdir(), "host-bench-add-src-"))
writeTree(source, benchExtensionFiles("bench/add-one"), false)
const add = []
for (let run = 0; run < runs; run++) {
  baseline.push(measureNode(["-e", "0"]))
  help.push(measureNode([bin, "--help"]))
  const root = mkdtempSync(join(tmpdir(), "host-bench-"))
  host.push(measureNode([bin, "list", "--json", "--root", root]))
  rmSync(root, { recursive: true, force: true })
  const addRoot = mkdtempSync(join(tmpdir(), "host-bench-"))
  add.push(measureNode([bin, "add", source, "--root", addRoot]))
  rmSync(addRoot, { recursive: true, force: true })
  const floorRoot = mkdtempSync(join(tmpdir(), "host-bench-"))
  floor.push(measureNode([floorBuild.bin, "list", "--json", "--root", floorRoot]))
  rmSync(floorRoot, { recursive: true, force: true })
  if (compareBin !== undefined) {
    const other = mkdtempSync(join(tmpdir(), "host-bench-"))
    compared.push(measureNode([compareBin, "list", "--json", "--root", other]))
    rmSync(other, { recursive: true, force: true })
  }
}
const cpu = (samples) => median(samples.map((sample) => sample.cpu))
const wall = (samples) => median(samples.map((sample) => sample.wall))
const faults = (samples) => median(samples.map((sample) => sample.faults))
console.log(`P1 cold start, median of ${runs} runs each (CPU time; wall time in brackets; minor page faults):`)
console.log(`  node -e 0                 ${cpu(baseline).toFixed(1)} ms (${wall(baseline).toFixed(1)} ms), ${faults(baseline)} faults`)
console.log(`  host list --json (fresh)  ${cpu(host).toFixed(1)} ms (${wall(host).toFixed(1)} ms), ${faults(host)} faults`)
console.log(`  ratio                     ${(cpu(host) / cpu(baseline)).toFixed(2)}x (${(wall(host) / wall(baseline)).toFixed(2)}x) (goal <= 2.0x)`)
console.log(`  stack floor               ${cpu(floor).toFixed(1)} ms (${wall(floor).toFixed(1)} ms), ${faults(floor)} faults, ${(cpu(floor) / cpu(baseline)).toFixed(2)}x: bench/cli-floor.mjs, a plain Effect CLI answering the same command`)
console.log(`  host --help               ${cpu(help).toFixed(1)} ms (${wall(help).toFixed(1)} ms), ${(cpu(help) / cpu(baseline)).toFixed(2)}x`)
console.log(`  host add <folder> (fresh) ${cpu(add).toFixed(1)} ms (${wall(add).toFixed(1)} ms), ${(cpu(add) / cpu(host)).toFixed(2)}x host list`)
rmSync(source, { recursive: true, force: true })
rmSync(floorBuild.folder, { recursive: true, force: true })
const ratio = cpu(host) / cpu(baseline)
const floorRatio = cpu(floor) / cpu(baseline)
report({ id: "P1", measure: "host list --json cold vs node -e 0, CPU", value: `${ratio.toFixed(2)}x (stack floor ${floorRatio.toFixed(2)}x)`, goal: "<= 2.0x", met: ratio <= 2.0 })
const overFloor = cpu(host) / cpu(floor)
console.log(`  host list over the floor   ${overFloor.toFixed(2)}x (goal <= 1.15x)`)
report({ id: "P1 floor", measure: "host list --json cold vs the stack floor (bench/cli-floor.mjs), CPU", value: `${overFloor.toFixed(2)}x`, goal: "<= 1.15x", met: overFloor <= 1.15 })
const addRatio = cpu(add) / cpu(host)
report({ id: "add", measure: "host add of a small extension vs host list --json, cold, CPU", value: `${addRatio.toFixed(2)}x`, goal: "<= 2.5x", met: addRatio <= 2.5 })
if (compareBin !== undefined) {
  console.log(`  compared: ${compareBin}`)
  console.log(`    host list --json (fresh) ${cpu(compared).toFixed(1)} ms (${wall(compared).toFixed(1)} ms), ${(cpu(compared) / cpu(baseline)).toFixed(2)}x; this build / that one ${(cpu(host) / cpu(compared)).toFixed(2)}x`)
}
