// P4: `host reconcile --dry-run` with 500 and 1,000 desired extensions, all in sync, against `node -e 0`
// in the same run. The panel state is generated directly (folders, checksums.json and table rows, as an
// install leaves them) so the bench measures planning, not installing. Goals: ≤ 0.4 s (1,000: ≤ 0.6 s), 1,000/500 ≤ 2.2×,
// by CPU time (steadier than wall time on a shared machine; both shown). The first run of each size
// fills storage/host/cache (tree hashes, the parsed desired state), and the first of the build writes
// `reconcile`'s code cache; it is not counted: a panel is planned again and again, rarely once. One more
// run of each size writes its spans (HOST_DEBUG `spans`), and the bench prints where its time went.
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import Database from "better-sqlite3"
import { measureNode, median } from "./cpu.mjs"
import { report } from "./report.mjs"
import { benchExtensionFiles as files, writeTree } from "./trees.mjs"

const bin = fileURLToPath(new URL("../bin/host.js", import.meta.url))
const runs = Number(process.env.BENCH_RUNS ?? 5)

const setup = (count) => {
  const root = mkdtempSync(join(tmpdir(), `host-p4-${count}-`))
  execFileSync(process.execPath, [bin, "list", "--root", root])
  const db = new Database(join(root, "storage", "host", "host.db"))
  const insert = db.prepare(`INSERT INTO host_extensions (extension_id, name, version, enabled, manifest, source, signature, created_at, updated_at)
    VALUES (?, ?, '1.0.0', 1, ?, ?, '{"status":"unsigned","key":null}', '', '')`)
  const lines = ['host: "1.0"', "extensions:"]
  db.transaction(() => {
    for (let index = 0; index < count; index++) {
      const id = `bench/ext-${index}`
      const content = files(id, "1.0.0")
      const source = join(root, "sources", `ext-${index}`)
      writeTree(source, content, false)
      writeTree(join(root, "host", "extensions", "bench", `ext-${index}`), content, true)
      const manifest = { host: "1.0", id, name: id, version: "1.0.0", description: "bench", license: "MIT", backend: { permissions: ["bench.view"] } }
      insert.run(id, id, JSON.stringify(manifest), JSON.stringify({ type: "path", ref: source, sha256: null }))
      lines.push(`  ${id}:`, `    source: { path: ${source} }`)
    }
  })()
  db.close()
  mkdirSync(join(root, "desired-state"))
  writeFileSync(join(root, "desired-state", "extensions.yaml"), `${lines.join("\n")}\n`)
  return root
}

// HOST_BENCH_COMPARE=<another checkout's bin/host.js>: that build plans the same roots too, interleaved.
const compareBin = process.env.HOST_BENCH_COMPARE

const plan = (root, which = bin, env = {}) => {
  const sample = measureNode([which, "reconcile", "--dry-run", "--root", root], env)
  if (!sample.stdout.includes("No changes")) throw new Error(`not in sync:\n${sample.stdout.slice(0, 500)}`)
  return sample
}

/**
 * Where one run's wall time goes, from the spans it writes (HOST_DEBUG `spans`, docs/operations.md): the
 * start (node, the bundle, config, database) up to the desired file, then each phase of the plan, then
 * what is left until the process is gone (writing the tree cache, exiting).
 */
const phasesOf = (root) => {
  const file = join(root, "spans.jsonl")
  const sample = plan(root, bin, { HOST_DEBUG: JSON.stringify({ spans: file }) })
  const lines = readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line))
  rmSync(file)
  const all = (name) => lines.filter((line) => line.name === name)
  const total = (name) => all(name).reduce((sum, line) => sum + line.duration_ms, 0)
  const end = (line) => line.start_ms + line.duration_ms
  const [desired] = all("Reconcile.readDesiredFile")
  const [printed] = all("Reconcile.printPlan")
  const lastPlanned = all("Reconcile.planActions").at(-1)
  return [
    ["start", desired.start_ms],
    ["desired file", desired.duration_ms],
    ["tree cache", total("TreeCache.read")],
    ["installed rows", total("ExtensionsRepo.list")],
    ["installed files", total("Reconcile.readInstalledFiles")],
    ["candidates", total("Reconcile.readCandidates")],
    ["planning", total("Reconcile.planActions")],
    ["basis", printed.start_ms - end(lastPlanned)],
    ["rendering", printed.duration_ms],
    ["exit", sample.wall - end(printed)]
  ].map(([name, ms]) => `${name} ${ms.toFixed(0)}`).join(", ")
}

const baseline = []
const results = {}
for (const count of [500, 1000]) {
  const root = setup(count)
  const first = plan(root)
  if (compareBin !== undefined) plan(root, compareBin)
  const samples = []
  const comparedSamples = []
  for (let run = 0; run < runs; run++) {
    baseline.push(measureNode(["-e", "0"]))
    samples.push(plan(root))
    if (compareBin !== undefined) comparedSamples.push(plan(root, compareBin))
  }
  results[count] = {
    first,
    cpu: median(samples.map((s) => s.cpu)),
    wall: median(samples.map((s) => s.wall)),
    faults: median(samples.map((s) => s.faults)),
    compared: comparedSamples.length === 0 ? undefined : median(comparedSamples.map((s) => s.cpu)),
    phases: phasesOf(root)
  }
  rmSync(root, { recursive: true, force: true })
}
const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`
console.log(
  `P4 reconcile --dry-run, all in sync, median of ${runs} runs, CPU time (wall; minor page faults) ` +
    `(node -e 0: ${median(baseline.map((s) => s.cpu)).toFixed(0)} ms, ${median(baseline.map((s) => s.faults))} faults):`
)
for (const count of [500, 1000]) {
  const { cpu, faults, first, wall } = results[count]
  console.log(`  ${String(count).padEnd(5)} extensions  ${seconds(cpu)} (${seconds(wall)}; ${faults} faults); first run, filling the cache: ${seconds(first.cpu)}${count === 500 ? " (goal <= 0.4 s)" : " (goal <= 0.6 s)"}`)
  console.log(`        phases of one more run, wall ms (HOST_DEBUG spans): ${results[count].phases}`)
  if (results[count].compared !== undefined) console.log(`        compared: ${compareBin} ${seconds(results[count].compared)}; this build / that one ${(cpu / results[count].compared).toFixed(2)}x`)
}
console.log(`  1,000/500 ratio    ${(results[1000].cpu / results[500].cpu).toFixed(2)}x (goal <= 2.2x)`)
// The goals of issue 23 (the goals table of `npm run bench`): 500 in sync within 0.4 s of CPU, 1,000 within 0.6 s.
for (const [count, goal] of [[500, 400], [1000, 600]]) {
  report({
    id: "P4",
    measure: `reconcile --dry-run, ${count.toLocaleString("en")} extensions in sync, CPU`,
    value: seconds(results[count].cpu),
    goal: `<= ${seconds(goal)}`,
    met: results[count].cpu <= goal
  })
}
