// Sync and resolve over an index of 5,000 entries in two registries (issue 38, docs/registry.md "Several
// registries"), each against `host list --json` on the same root, interleaved in one loop, medians of CPU time
// (the steadier figure on a shared machine; wall time beside it). Goal: each <= 1.5x.
// - sync: `host registry:sync --force` fetches and checks both indexes (2,500 entries each, file://, the first
//   one signed and checked against its public_key) and writes both caches;
// - resolve: `host update --check` with one extension installed from the second registry: its id is looked up in
//   the first registry (which does not list it), then found in the second, from the caches.
import * as ed from "@noble/ed25519"
import { execFileSync } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { measureNode, median } from "./cpu.mjs"
import { report } from "./report.mjs"

const repo = fileURLToPath(new URL("..", import.meta.url))
const bin = join(repo, "bin", "host.js")
const RUNS = Number(process.env.BENCH_RUNS ?? 9)
const PER_REGISTRY = 2500

const entry = (id, sha256) => ({
  id,
  name: `Bench ${id}`,
  description: "A registry entry of the resolve bench.",
  latest_version: "1.0.0",
  versions: ["1.0.0"],
  license: "MIT",
  authors: [],
  tags: [],
  requires: {},
  dependencies: {},
  archive_url: "{archive}",
  sha256: { "1.0.0": sha256 }
})

const work = mkdtempSync(join(tmpdir(), "host-bench-registry-resolve-"))
try {
  // The second registry holds the demo registry's real hello-world archive among its entries, built here
  // (scripts/demo-registry.mjs, into this bench's own folder) so the bench needs no earlier `npm start`.
  const demo = join(work, "demo")
  execFileSync(process.execPath, [join(repo, "scripts", "demo-registry.mjs"), "--out", demo, "--quiet"], { stdio: ["ignore", "ignore", "inherit"] })
  const demoIndex = JSON.parse(readFileSync(join(demo, "registry.json"), "utf8"))
  const hello = demoIndex.extensions.find((extension) => extension.id === "acme/hello-world")
  if (hello === undefined) throw new Error("the demo registry lacks acme/hello-world (fixtures/extensions/hello-world)")
  const fake = "0".repeat(64)
  const first = join(work, "first")
  const second = join(work, "second")
  mkdirSync(first)
  mkdirSync(second)
  const now = Date.now()
  const index = (extensions) => ({
    version: "1.0",
    serial: 1,
    updated_at: new Date(now).toISOString(),
    expires_at: new Date(now + 30 * 86_400_000).toISOString(),
    extensions
  })
  const firstBytes = JSON.stringify(index(Array.from({ length: PER_REGISTRY }, (_, n) => entry(`bench-one/ext-${n}`, fake))), null, 2)
  writeFileSync(join(first, "registry.json"), firstBytes)
  const secretKey = ed.utils.randomSecretKey()
  const publicKey = Buffer.from(await ed.getPublicKeyAsync(secretKey)).toString("hex")
  writeFileSync(join(first, "registry.json.sig"), Buffer.from(await ed.signAsync(new TextEncoder().encode(firstBytes), secretKey)).toString("hex"))
  writeFileSync(
    join(second, "registry.json"),
    JSON.stringify(index([...Array.from({ length: PER_REGISTRY - 1 }, (_, n) => entry(`bench-two/ext-${n}`, fake)), hello]), null, 2)
  )
  cpSync(join(demo, "acme-hello-world-1.0.0.host"), join(second, "acme-hello-world-1.0.0.host"))

  const root = join(work, "root")
  mkdirSync(join(root, "config"), { recursive: true })
  writeFileSync(
    join(root, "config", "host.yaml"),
    `registries:\n  - name: one\n    url: file://${first}\n    public_key: "${publicKey}"\n  - name: two\n    url: file://${second}\n`
  )
  const host = (...args) => measureNode([bin, "--root", root, ...args])
  host("registry:sync", "--force")
  host("add", "acme/hello-world", "--registry", "two")
  const checked = host("update", "--check")
  if (!checked.stdout.includes("up to date")) throw new Error(`update --check did not resolve acme/hello-world:\n${checked.stdout}`)
  host("list", "--json") // each command's code cache written once before the loop

  const list = []
  const sync = []
  const resolve = []
  for (let run = 0; run < RUNS; run++) {
    list.push(host("list", "--json"))
    sync.push(host("registry:sync", "--force"))
    resolve.push(host("update", "--check"))
  }
  const cpu = (samples) => median(samples.map((sample) => sample.cpu))
  const wall = (samples) => median(samples.map((sample) => sample.wall))
  console.log(`sync and resolve over ${2 * PER_REGISTRY} entries in two registries (one signed), median of ${RUNS} interleaved runs (CPU, wall):`)
  console.log(`  host list --json          ${cpu(list).toFixed(1)} ms, ${wall(list).toFixed(1)} ms`)
  for (const [name, samples] of [["registry:sync --force", sync], ["update --check", resolve]]) {
    console.log(`  ${name.padEnd(25)} ${cpu(samples).toFixed(1)} ms, ${wall(samples).toFixed(1)} ms: ${(cpu(samples) / cpu(list)).toFixed(2)}x (wall ${(wall(samples) / wall(list)).toFixed(2)}x)`)
  }
  const syncRatio = cpu(sync) / cpu(list)
  const resolveRatio = cpu(resolve) / cpu(list)
  report({ id: "registry sync", measure: "registry:sync of 5,000 entries in two registries vs host list --json (CPU)", value: `${syncRatio.toFixed(2)}x`, goal: "<= 1.5x", met: syncRatio <= 1.5 })
  report({ id: "registry resolve", measure: "update --check resolving across two registries of 5,000 entries vs host list --json (CPU)", value: `${resolveRatio.toFixed(2)}x`, goal: "<= 1.5x", met: resolveRatio <= 1.5 })
} finally {
  rmSync(work, { recursive: true, force: true })
}
