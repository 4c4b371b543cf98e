// Memory of open `/api/client/host/events` streams (docs/http.md "Live updates: caps"): the server's RSS
// with no stream open, with BENCH_STREAMS (default 500) open — spread over users, at most 8 each, the
// per-user cap — and after they close, over BENCH_ROUNDS rounds. Against, in the same run, a bare
// node:http server holding as many open text/event-stream responses (the floor: a socket, its parser
// and buffers), so the figures compare across machines as a ratio to that floor.
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startServe } from "./serve.mjs"

const bin = fileURLToPath(new URL("../bin/host.js", import.meta.url))
const streams = Number(process.env.BENCH_STREAMS ?? 500)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const perUser = 8
const users = Math.ceil(streams / perUser)
const root = mkdtempSync(join(tmpdir(), "host-bench-events-"))
const env = { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("HOST_"))), NO_COLOR: "1" }
const token = (index) => `host_bench_events_${index}`
const sha = (text) => createHash("sha256").update(text).digest("hex")

mkdirSync(join(root, "config"), { recursive: true })
writeFileSync(join(root, "config", "panel.yaml"), [
  "panel: { name: Bench, version: 1.11.0, php: 8.2.0 }",
  "users:",
  ...Array.from({ length: users }, (_, index) => `  - { id: ${index + 1}, username: user${index + 1}, email: u${index + 1}@example.test, token_sha256: ${sha(token(index + 1))} }`),
  "servers: []",
  ""
].join("\n"))
if (process.env.BENCH_EVENTS_BEFORE !== "1") writeFileSync(join(root, "config", "host.yaml"), `limits: { event_streams: ${streams + 100} }\n`)

const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024

const start = () => startServe({ bin, root, env }).then(({ child, url }) => Object.assign(child, { url }))

/** Opens one stream and resolves once its first `generation` event arrived. */
const open = (url, user) =>
  new Promise((resolve, reject) => {
    const request = http.get(`${url}/api/client/host/events`, { headers: { authorization: `Bearer ${token(user)}` }, agent: false }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`stream answered ${response.statusCode}`))
      let text = ""
      response.on("data", (chunk) => {
        text += chunk
        if (text.includes("event: generation")) resolve(request)
      })
    })
    request.on("error", reject)
  })

const settle = () => new Promise((r) => setTimeout(r, 1500))

/** A bare node:http server that keeps every response open after its first event. */
const startBare = () =>
  new Promise((resolve) => {
    const code = `const open = new Set(); require("node:http").createServer((q, r) => { r.writeHead(200, { "content-type": "text/event-stream" }); ` +
      `r.write("retry: 2000\\n\\nevent: generation\\ndata: {}\\n\\n"); open.add(r); r.on("close", () => open.delete(r)) })` +
      `.listen(0, "127.0.0.1", function () { console.log(this.address().port) })`
    const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] })
    child.stdout.once("data", (data) => resolve(Object.assign(child, { url: `http://127.0.0.1:${Number(String(data))}` })))
  })

const bare = await startBare()
let floorKb
try {
  await settle()
  const before = rssMb(bare.pid)
  const held = []
  for (let index = 0; index < streams; index++) held.push(await open(bare.url, 1))
  await settle()
  floorKb = ((rssMb(bare.pid) - before) * 1024) / streams
  console.log(`bare node:http, ${streams} open responses: +${floorKb.toFixed(1)} KB per stream (the floor)`)
  for (const request of held) request.destroy()
} finally {
  bare.kill("SIGTERM")
}

const server = await start()
try {
  await settle()
  const idle = rssMb(server.pid)
  console.log(`${streams} event streams (${users} users × ≤ ${perUser}), ${rounds} rounds; idle server RSS ${idle.toFixed(1)} MB`)
  let peak = idle
  for (let round = 1; round <= rounds; round++) {
    const before = rssMb(server.pid)
    const open_ = []
    for (let index = 0; index < streams; index++) open_.push(await open(server.url, (index % users) + 1))
    await settle()
    const opened = rssMb(server.pid)
    peak = Math.max(peak, opened)
    for (const request of open_) request.destroy()
    await settle()
    const closed = rssMb(server.pid)
    const perStream = ((opened - before) * 1024) / streams
    console.log(
      `  round ${round}: RSS ${before.toFixed(1)} → ${opened.toFixed(1)} MB open (+${perStream.toFixed(1)} KB per stream, ` +
        `${(perStream / floorKb).toFixed(2)}× the floor, growth ${((opened - before) / idle).toFixed(2)}× idle RSS) → ${closed.toFixed(1)} MB closed`
    )
  }
  console.log(`  peak RSS ${peak.toFixed(1)} MB = ${(peak / idle).toFixed(2)}× idle`)
} finally {
  server.kill("SIGTERM")
  await new Promise((r) => server.once("exit", r))
  rmSync(root, { recursive: true, force: true })
}
