// P4: `host reconcile --dry-run` with 500 and 1,000 desired extensions, all in sync, against `node -e 0`
// in the same run. The panel state is generated directly (folders, checksums.json and table rows, as an
// install leaves them) so the bench measures planning, not installing. Goals: ≤ 0.5 s, 1,000/500 ≤ 2.2×.
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import Database from "better-sqlite3"

const bin = fileURLToPath(new URL("../bin/host.js", import.meta.url))
const runs = Number(process.env.BENCH_RUNS ?? 5)
const sha = (data) => createHash("sha256").update(data).digest("hex")
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

const files = (id, version) => ({
  "extension.yaml": `host: "1.0"\nid: ${id}\nname: ${id}\nversion: ${version}\ndescription: bench\nlicense: MIT\nbackend:\n  permissions: [bench.view]\n`,
  "resources/frontend/dist/extension.js": `window.__HOST__.sdk.createExtension({ id: "${id}", slots: [{ slot: "dashboard.widgets", component: null }] })\n`
})

const writeTree = (root, content, withChecksums) => {
  const checksums = {}
  for (const [path, text] of Object.entries(content)) {
    mkdirSync(join(root, path, ".."), { recursive: true })
    writeFileSync(join(root, path), text)
    checksums[path] = sha(text)
  }
  const sorted = Object.fromEntries(Object.keys(checksums).sort().map((key) => [key, checksums[key]]))
  if (withChecksums) writeFileSync(join(root, "checksums.json"), `${JSON.stringify(sorted, null, 2)}\n`)
}

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

const time = (args) => {
  const samples = []
  for (let run = 0; run < runs; run++) {
    const start = process.hrtime.bigint()
    const out = execFileSync(process.execPath, args, { encoding: "utf8" })
    samples.push(Number(process.hrtime.bigint() - start) / 1e6)
    if (args.includes("--dry-run") && !out.includes("No changes")) throw new Error(`not in sync:\n${out.slice(0, 500)}`)
  }
  return median(samples)
}

const baseline = time(["-e", "0"])
const results = {}
for (const count of [500, 1000]) {
  const root = setup(count)
  results[count] = time([bin, "reconcile", "--dry-run", "--root", root])
  rmSync(root, { recursive: true, force: true })
}
console.log(`P4 reconcile --dry-run, all in sync, median of ${runs} runs (node -e 0: ${baseline.toFixed(0)} ms):`)
console.log(`  500 extensions    ${(results[500] / 1000).toFixed(2)} s (goal <= 0.5 s)`)
console.log(`  1,000 extensions  ${(results[1000] / 1000).toFixed(2)} s`)
console.log(`  1,000/500 ratio   ${(results[1000] / results[500]).toFixed(2)}x (goal <= 2.2x)`)
