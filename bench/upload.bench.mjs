// Hostile uploads and the event loop (docs/operations.md "Uploads and leftovers"): `/host/ready` latency
// of a running `host serve`, idle and while admin uploads of hostile archives are inspected back to back —
// a manifest at the entry limit and a 40 MiB archive of incompressible data. The server inspects
// uploads in a worker thread, so readiness answers keep their pace; before, one such upload stalled
// `/host/ready` for seconds. Reported: median, p99 and max latency in both phases, and their ratio.
import { spawn } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as tar from "tar"
import { stopServer } from "./serve.mjs"

const repo = fileURLToPath(new URL("..", import.meta.url))
const bin = join(repo, "bin", "host.js")
const seconds = Number(process.env.BENCH_UPLOAD_SECONDS ?? 6)
const root = mkdtempSync(join(tmpdir(), "host-upload-bench-"))
const work = mkdtempSync(join(tmpdir(), "host-upload-bench-src-"))
const env = { PATH: process.env.PATH ?? "", NO_COLOR: "1" }
const token = "upload_bench_admin"
const sha = (data) => createHash("sha256").update(data).digest("hex")

mkdirSync(join(root, "config"), { recursive: true })
writeFileSync(
  join(root, "config", "panel.yaml"),
  `panel: { name: Bench, version: 1.11.0, php: 8.2.0 }\nusers:\n  - { id: 1, username: admin, email: a@e.test, admin: true, token_sha256: ${sha(token)} }\n`
)

/** A .host archive of `files` (name → bytes), with its checksums.json. */
const archive = async (name, files) => {
  const dir = join(work, name)
  mkdirSync(dir, { recursive: true })
  const checksums = {}
  for (const [file, bytes] of Object.entries(files)) {
    writeFileSync(join(dir, file), bytes)
    checksums[file] = sha(bytes)
  }
  writeFileSync(join(dir, "checksums.json"), `${JSON.stringify(checksums, null, 2)}\n`)
  const file = join(work, `${name}.host`)
  await tar.c({ gzip: true, file, cwd: dir, portable: true }, [...Object.keys(files), "checksums.json"])
  return readFileSync(file)
}

const manifestHead = `host: "1.0"\nid: bench/hostile\nname: Hostile\nversion: 1.0.0\ndescription: x\nlicense: MIT\n`
// Just under the manifest limits (256 KiB, 5,000 entries): the most a manifest may cost to read.
const manyKeys = `${manifestHead}keywords:\n${
  Array.from({ length: 4_900 }, (_, i) => `  - keyword-${String(i).padStart(5, "0")}-${"k".repeat(30)}`).join("\n")
}\n`
const hostile = [
  ["many-entries", await archive("many-entries", { "extension.yaml": Buffer.from(manyKeys) })],
  // 40 MiB that barely compress: inflating and hashing them is the most CPU an archive under the limits costs.
  ["large", await archive("large", { "extension.yaml": Buffer.from(manifestHead), "data.bin": randomBytes(40 * 1024 * 1024) })]
]

const server = await new Promise((resolve, reject) => {
  const child = spawn(process.execPath, [bin, "--root", root, "serve", "--port", "0"], { env, stdio: ["ignore", "pipe", "pipe"] })
  let out = ""
  let err = ""
  child.stderr.on("data", (chunk) => (err += chunk))
  child.once("exit", (code) => reject(new Error(`host serve exited (${code}): ${err}`)))
  child.stdout.on("data", (chunk) => {
    out += chunk
    const match = /Listening on (http:\/\/\S+)/.exec(out)
    if (match !== null) resolve({ child, url: match[1] })
  })
})

const readiness = async (until) => {
  const latencies = []
  while (Date.now() < until) {
    const started = performance.now()
    const answer = await fetch(`${server.url}/host/ready`)
    await answer.arrayBuffer()
    latencies.push(performance.now() - started)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return latencies
}

const summary = (latencies) => {
  const sorted = [...latencies].sort((a, b) => a - b)
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
  return { count: sorted.length, median: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] }
}

try {
  await readiness(Date.now() + 1_000) // warm-up
  const idle = summary(await readiness(Date.now() + seconds * 1_000))
  let uploads = 0
  const refusals = new Map()
  let stopUploads = false
  const uploader = (async () => {
    for (let i = 0; !stopUploads; i++) {
      const [name, bytes] = hostile[i % hostile.length]
      const form = new FormData()
      form.append("archive", new Blob([bytes]), `${name}.host`)
      const answer = await fetch(`${server.url}/admin/host/api/extensions/preview`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        body: form
      })
      const body = await answer.text()
      uploads++
      refusals.set(name, `${answer.status} ${body.slice(0, 120)}`)
    }
  })()
  const busy = summary(await readiness(Date.now() + seconds * 1_000))
  stopUploads = true
  await uploader
  const ms = (value) => `${value.toFixed(1)} ms`
  console.log(`hostile archives: ${hostile.map(([name, bytes]) => `${name} ${(bytes.length / 1024).toFixed(0)} KiB`).join(", ")}`)
  for (const [name, answer] of refusals) console.log(`  ${name}: ${answer}`)
  console.log(`/host/ready idle:   ${idle.count} answers, median ${ms(idle.median)}, p99 ${ms(idle.p99)}, max ${ms(idle.max)}`)
  console.log(`/host/ready busy:   ${busy.count} answers during ${uploads} uploads, median ${ms(busy.median)}, p99 ${ms(busy.p99)}, max ${ms(busy.max)}`)
  console.log(`ratio busy/idle:    median ${(busy.median / idle.median).toFixed(2)}x, p99 ${(busy.p99 / idle.p99).toFixed(2)}x (goal: max < 250 ms, never a stall)`)
} finally {
  // The server may still be writing under the root as it stops: wait for it before removing the folder.
  await stopServer(server.child)
  rmSync(root, { recursive: true, force: true })
  rmSync(work, { recursive: true, force: true })
}
