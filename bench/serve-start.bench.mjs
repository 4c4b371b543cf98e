// P5: time from spawn until `host serve` answers /host/ready 200, and its RSS then, with 100 and 1,000
// enabled extensions (goals: 100 ≤ 0.8 s and ≤ 150 MB; 1,000 ≤ 5 s and ≤ 400 MB). Each extension has a
// TypeScript api-client route file and a frontend bundle registering two slots. The panel state is
// generated directly (installed trees with checksums.json and table rows, as `host add` leaves them), so
// the bench measures starting, not installing. The first start of each size compiles every module
// (shown, not counted); the figure is the median of the starts after it, as a panel restarts far more
// often than its extensions change.
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import Database from "better-sqlite3"
import { median } from "./cpu.mjs"
import { report } from "./report.mjs"
import { startServe, stopServer } from "./serve.mjs"
import { writeTree } from "./trees.mjs"

const bin = fileURLToPath(new URL("../bin/host.js", import.meta.url))
const runs = Number(process.env.BENCH_RUNS ?? 3)
const sizes = (process.env.BENCH_SERVE_SIZES ?? "100,1000").split(",").map(Number)
const goals = { 100: { ms: 800, mb: 150 }, 1000: { ms: 5000, mb: 400 } }
const token = "host_bench_token"
const env = { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("HOST_"))), NO_COLOR: "1" }
const slots = ["dashboard.widgets", "navbar.after", "server.console.sidebar", "server.files.actions", "account.overview.after"]

const extensionFiles = (index, id) => ({
  "extension.yaml": `host: "1.0"\nid: ${id}\nname: Bench ${index}\nversion: 1.0.0\ndescription: Benchmark extension ${index}.\nlicense: MIT\nbackend:\n  permissions: [bench.view]\n`,
  "src/routes/api-client.ts":
    `import { defineRoutes } from "@host/sdk/server"\nexport default defineRoutes((r) => {\n  r.get("/stats", () => ({ n: ${index} }), { permission: "bench.view" })\n})\n`,
  "resources/frontend/dist/extension.js":
    `window.__HOST__.sdk.createExtension({ id: "${id}", slots: [` +
    `{ slot: "${slots[index % slots.length]}", component: function () { return null; }, order: ${index} }, ` +
    `{ slot: "${slots[(index + 1) % slots.length]}", component: function () { return null; }, order: ${100 - index} }] });\n`
})

const setup = (count) => {
  const root = mkdtempSync(join(tmpdir(), `host-p5-${count}-`))
  mkdirSync(join(root, "config"), { recursive: true })
  writeFileSync(
    join(root, "config", "panel.yaml"),
    `panel: { name: Bench, version: 1.11.0, php: 8.2.0 }\nusers:\n  - { id: 1, username: admin, admin: true, token_sha256: ${createHash("sha256").update(token).digest("hex")} }\n`
  )
  execFileSync(process.execPath, [bin, "list", "--root", root], { env })
  const db = new Database(join(root, "storage", "host", "host.db"))
  const insert = db.prepare(`INSERT INTO host_extensions (extension_id, name, version, enabled, manifest, source, signature, created_at, updated_at)
    VALUES (?, ?, '1.0.0', 1, ?, ?, '{"status":"unsigned","key":null}', '', '')`)
  db.transaction(() => {
    for (let index = 0; index < count; index++) {
      const name = `bench-${String(index).padStart(4, "0")}`
      const id = `bench/${name}`
      const directory = join(root, "host", "extensions", "bench", name)
      writeTree(directory, extensionFiles(index, id), true)
      const manifest = { host: "1.0", id, name: `Bench ${index}`, version: "1.0.0", description: `Benchmark extension ${index}.`, license: "MIT", backend: { permissions: ["bench.view"] } }
      insert.run(id, manifest.name, JSON.stringify(manifest), JSON.stringify({ type: "path", ref: directory, sha256: null }))
    }
  })()
  db.close()
  return root
}

const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024
/** CPU time (user + system, every thread) the process used so far: steadier than wall time on a busy machine. */
const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** One start: ready time, RSS once ready, and how many extensions the generation booted (from its log line). */
const start = async (root, readyWithinMs = 120_000) => {
  const server = await startServe({ bin, root, env, readyWithinMs })
  const rss = rssMb(server.child.pid)
  const cpu = cpuMs(server.child.pid)
  const slotsBody = await (await fetch(`${server.url}/api/client/host/slots`, { headers: { authorization: `Bearer ${token}` } })).json()
  await stopServer(server.child)
  return { readyMs: server.readyMs, rss, cpu, registrations: Object.values(slotsBody.data).flat().length }
}

for (const count of sizes) {
  const root = setup(count)
  try {
    // Compiling a thousand modules on a busy machine can take minutes.
    const first = await start(root, 900_000)
    const samples = []
    for (let run = 0; run < runs; run++) samples.push(await start(root))
    if (samples.some((sample) => sample.registrations !== count * 2)) {
      throw new Error(`expected ${count * 2} slot registrations, got ${samples.map((s) => s.registrations).join(", ")}`)
    }
    const ms = median(samples.map((sample) => sample.readyMs))
    const mb = median(samples.map((sample) => sample.rss))
    console.log(`P5 host serve ready, ${count} enabled extensions: first start (compiling) ${first.readyMs.toFixed(0)} ms, ${first.rss.toFixed(1)} MB; ` +
      `then ${samples.map((s) => `${s.readyMs.toFixed(0)} ms (CPU ${s.cpu} ms)/${s.rss.toFixed(0)} MB`).join(", ")}`)
    const goal = goals[count]
    if (goal === undefined) continue
    report({ id: "P5", measure: `host serve ready, ${count} extensions, time`, value: `${ms.toFixed(0)} ms`, goal: `≤ ${goal.ms} ms`, met: ms <= goal.ms })
    report({ id: "P5", measure: `host serve ready, ${count} extensions, RSS`, value: `${mb.toFixed(0)} MB`, goal: `≤ ${goal.mb} MB`, met: mb <= goal.mb })
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
