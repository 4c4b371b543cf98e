// R2 at full size (docs/operations.md#reliability-suites): 10,000 generated manifests (every one
// validated, every tenth also installed and removed) and 1,000 mutated archives (verified and
// installed), through the real CLI in this process. Each answer must come within 5 s, exit 0/1/2,
// print no stack trace or defect, print one JSON document with --json, leave no half-install and write
// nothing outside the root. Prints the counts, the slowest answer and p99 against the 5 s bound, and
// `node -e 0` (a process start) as the baseline. BENCH_FUZZ_MANIFESTS / BENCH_FUZZ_ARCHIVES override.
import { execFileSync, spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { build } from "esbuild"

const repo = fileURLToPath(new URL("..", import.meta.url))
const manifests = Number(process.env.BENCH_FUZZ_MANIFESTS ?? 10_000)
const archives = Number(process.env.BENCH_FUZZ_ARCHIVES ?? 1_000)
const seed = Number(process.env.BENCH_FUZZ_SEED ?? 20261122)
const bound = 5_000

// The suite's TypeScript (with the CLI it drives), bundled once so this plain script can import it.
const bundle = join(repo, "dist", "bench", "reliability.mjs")
await build({
  entryPoints: [join(repo, "test", "support", "reliability.ts")],
  outfile: bundle,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external: ["better-sqlite3", "esbuild"],
  banner: { js: "import { createRequire as __benchRequire } from 'node:module'; const require = __benchRequire(import.meta.url);" },
  logLevel: "warning"
})
const suite = await import(pathToFileURL(bundle).href)
const fc = (await import("fast-check")).default

const baselineStart = performance.now()
spawnSync(process.execPath, ["-e", "0"])
const baseline = performance.now() - baselineStart

const sandbox = mkdtempSync(join(tmpdir(), "host-r2-"))
const root = join(sandbox, "root")
const source = join(sandbox, "src")
mkdirSync(root)
mkdirSync(source)

const times = []
const violations = []
const run = async (argv) => {
  const answer = await suite.runInProcess(repo, [...argv, "--root", root], sandbox)
  times.push(answer.ms)
  if (answer.ms > bound) violations.push(`${argv[0]} took ${Math.round(answer.ms)} ms`)
  return answer
}
/** A progress line on stderr (the big run takes long on a busy machine). */
const progress = (label, values) =>
  process.stderr.write(`  … ${label}: ${violations.length} violations so far, slowest ${Math.max(0, ...values).toFixed(0)} ms\n`)
const check = (label, answer, detail) => {
  for (const problem of suite.answerProblems(answer, true)) violations.push(`${label}: ${problem} (${detail()})`)
}

const manifestStarted = performance.now()
const manifestCases = fc.sample(suite.manifestCase, { numRuns: manifests, seed })
let installed = 0
for (const [index, testCase] of manifestCases.entries()) {
  const folder = join(source, "extension")
  suite.writeManifestCase(folder, testCase)
  const detail = () => testCase.yaml.slice(0, 200).replace(/\n/g, "\\n")
  check("validate", await run(["validate", folder, "--json"]), detail)
  if (index % 10 === 0) {
    const added = await run(["add", folder, "--json"])
    check("add", added, detail)
    if (added.code === 0) {
      installed++
      check("remove", await run(["remove", JSON.parse(added.stdout).id, "--json", "--force"]), detail)
    }
    for (const problem of suite.rootProblems(root)) violations.push(`add: ${problem} (${detail()})`)
  }
  for (const problem of suite.sandboxProblems(sandbox, ["root", "src"])) violations.push(problem)
  if ((index + 1) % 1000 === 0) progress(`${index + 1} manifests`, times)
}
const manifestSeconds = (performance.now() - manifestStarted) / 1000
const manifestTimes = times.splice(0)

const exportDir = join(sandbox, "base")
execFileSync(process.execPath, [join(repo, "bin", "host.js"), "export", join(repo, "fixtures", "extensions", "hello-world"), "--output", `${exportDir}/`, "--json"])
const base = new Uint8Array(readFileSync(join(exportDir, "acme-hello-world-1.0.0.host")))
const archiveStarted = performance.now()
let accepted = 0
let archivesDone = 0
for (const mutation of fc.sample(suite.archiveMutation, { numRuns: archives, seed })) {
  const file = join(source, "mutated.host")
  writeFileSync(file, suite.mutateArchive(base, mutation))
  const detail = () => JSON.stringify(mutation, (_, value) => (value instanceof Uint8Array ? `${value.length} bytes` : value))
  check("verify", await run(["verify", file, "--json"]), detail)
  const added = await run(["add", file, "--json"])
  check("add", added, detail)
  if (added.code === 0) {
    accepted++
    check("remove", await run(["remove", JSON.parse(added.stdout).id, "--json", "--force"]), detail)
  }
  for (const problem of suite.rootProblems(root)) violations.push(`add: ${problem} (${detail()})`)
  for (const problem of suite.sandboxProblems(sandbox, ["base", "root", "src"])) violations.push(problem)
  if (++archivesDone % 200 === 0) progress(`${archivesDone} archives`, times)
}
const archiveSeconds = (performance.now() - archiveStarted) / 1000
const archiveTimes = times.splice(0)
rmSync(sandbox, { recursive: true, force: true })

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}
const line = (label, values, seconds) =>
  `  ${label}: ${values.length} answers in ${seconds.toFixed(0)} s; p50 ${percentile(values, 50).toFixed(0)} ms, p99 ${percentile(values, 99).toFixed(0)} ms, ` +
  `slowest ${Math.max(0, ...values).toFixed(0)} ms (${(Math.max(0, ...values) / bound).toFixed(2)}× the 5 s bound; ${(percentile(values, 99) / baseline).toFixed(1)}× a node start)`
console.log(`R2 fuzzing (seed ${seed}): ${manifests} manifests (${installed} installed), ${archives} mutated archives (${accepted} accepted)`)
console.log(`  baseline: node -e 0 takes ${baseline.toFixed(0)} ms`)
console.log(line("manifests", manifestTimes, manifestSeconds))
console.log(line("archives", archiveTimes, archiveSeconds))
console.log(`  violations: ${violations.length}${violations.length === 0 ? "" : " (by kind, then the first of each kind)"}`)
// The kind is the property that failed (the text before the case's details).
const kinds = new Map()
for (const violation of violations) {
  const kind = violation.replace(/ \(.*$/s, "").replace(/: ".*$/s, "").replace(/took \d+ ms/, "took > 5 s").replace(/^(\w+: a defect): .*$/, "$1")
  const entry = kinds.get(kind) ?? { count: 0, first: violation }
  entry.count++
  kinds.set(kind, entry)
}
for (const [kind, { count, first }] of kinds) console.log(`    ${count} × ${kind}\n      e.g. ${first.slice(0, 300)}`)
