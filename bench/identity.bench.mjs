// Identity under a real panel (docs/panels.md "Drivers"), against a stand-in of Pterodactyl's client API
// answering /api/client/account and /api/client/permissions (the test stand-in, test/support/pterodactyl-api.ts,
// is TypeScript; this one is the same two answers in plain JS so the bench runs under node alone).
//  - warm cache: p50/p99 of an api-client extension route signed in by the panel's session cookie, against
//    the embedded driver (Bearer token) in the same run; the difference is what identity adds (goal ≤ 1 ms).
//  - cold cache: N distinct credentials, each asked 3 times at once → panel requests per credential and window.
//  - single flight: 200 concurrent first requests with one new session → panel calls (goal exactly 1).
import { execFileSync, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { createServer } from "node:http"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import autocannon from "autocannon"
import { stopServer } from "./serve.mjs"

const bin = fileURLToPath(new URL("../bin/host.js", import.meta.url))
const probe = fileURLToPath(new URL("../fixtures/runtime/probe", import.meta.url))
const duration = Number(process.env.BENCH_SECONDS ?? 5)
const coldCredentials = Number(process.env.BENCH_COLD_CREDENTIALS ?? 300)
const connections = 16
const token = "host_bench_identity_token"

const root = mkdtempSync(join(tmpdir(), "host-bench-identity-"))
const env = { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("HOST_"))), NO_COLOR: "1" }
execFileSync(process.execPath, [bin, "--root", root, "add", probe], { env, stdio: ["ignore", "pipe", "pipe"] })
mkdirSync(join(root, "config"), { recursive: true })
writeFileSync(join(root, "config", "panel.yaml"), `users:\n  - { id: 1, username: alice, token_sha256: ${createHash("sha256").update(token).digest("hex")} }\n`)
const panelRoot = join(root, "panel")
mkdirSync(join(panelRoot, "config"), { recursive: true })
writeFileSync(join(panelRoot, "config", "app.php"), "<?php\nreturn ['version' => '1.11.8'];\n")
writeFileSync(join(panelRoot, ".env"), "APP_NAME=Pterodactyl\n")

// The panel stand-in: sessions `s-<n>` are user n; counts account requests per session.
const accountCalls = new Map()
const panel = createServer((request, response) => {
  const session = /pterodactyl_session=([^;]+)/.exec(request.headers.cookie ?? "")?.[1]
  const answer = (status, body) => {
    response.writeHead(status, { "content-type": "application/json", "set-cookie": `pterodactyl_session=${Math.random()}` })
    response.end(JSON.stringify(body))
  }
  if (session === undefined) return answer(401, { errors: [{ code: "AuthenticationException", status: "401", detail: "Unauthenticated." }] })
  const id = Number(session.slice(2)) || 1
  const reply = () => {
    if (request.url === "/api/client/account") {
      accountCalls.set(session, (accountCalls.get(session) ?? 0) + 1)
      return answer(200, { object: "user", attributes: { id, admin: false, username: `user${id}`, email: `u${id}@bench.test` } })
    }
    if (request.url === "/api/client/permissions") return answer(200, { object: "system_permissions", attributes: { permissions: {} } })
    answer(404, { errors: [{ code: "NotFoundHttpException", status: "404", detail: "not found" }] })
  }
  // A PHP panel takes tens of milliseconds per request; 30 ms keeps concurrent first requests overlapping.
  setTimeout(reply, 30)
})
await new Promise((resolve) => panel.listen(0, "127.0.0.1", resolve))
const panelUrl = `http://127.0.0.1:${panel.address().port}`

const startServer = (extraEnv) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "--root", root, "serve", "--port", "0"], { env: { ...env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    child.stderr.on("data", (chunk) => (err += chunk))
    child.stdout.on("data", (chunk) => {
      out += chunk
      const match = /Listening on (http:\/\/\S+)/.exec(out)
      if (match !== null) resolve({ child, url: match[1] })
    })
    child.once("exit", (code) => reject(new Error(`host serve exited ${code}: ${err}`)))
  })
const waitReady = async (url) => {
  for (let i = 0; i < 200; i++) {
    const answer = await fetch(`${url}/host/ready`).catch(() => undefined)
    if (answer?.status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error("not ready")
}
const load = (url, headers) =>
  new Promise((resolve, reject) => autocannon({ url, connections, duration, headers }, (error, result) => (error ? reject(error) : resolve(result))))

try {
  const route = "/api/client/host/acme/probe/open"
  // Both servers run at once and are measured in alternating rounds (the median of each), so a noisy
  // neighbour on the machine weighs on both alike.
  const embedded = await startServer({})
  const real = await startServer({ HOST_PANEL_DRIVER: "pterodactyl", HOST_PANEL_URL: panelUrl, HOST_PANEL_ROOT: panelRoot })
  await waitReady(embedded.url)
  await waitReady(real.url)
  const cookie = "pterodactyl_session=s-1"
  const bearer = { authorization: `Bearer ${token}` }
  await load(`${embedded.url}${route}`, bearer) // warm-up (JIT) of both
  await load(`${real.url}${route}`, { cookie })
  const bases = []
  const warms = []
  for (let round = 0; round < 3; round++) {
    bases.push(await load(`${embedded.url}${route}`, bearer))
    warms.push(await load(`${real.url}${route}`, { cookie }))
  }
  const median = (runs, pick) => runs.map(pick).sort((a, b) => a - b)[Math.floor(runs.length / 2)]
  const base = { latency: { p50: median(bases, (r) => r.latency.p50), p99: median(bases, (r) => r.latency.p99) }, requests: { average: median(bases, (r) => r.requests.average) } }
  const warm = { latency: { p50: median(warms, (r) => r.latency.p50), p99: median(warms, (r) => r.latency.p99) }, requests: { average: median(warms, (r) => r.requests.average) } }
  const warmCalls = accountCalls.get("s-1") ?? 0
  const non2xx = [...bases, ...warms].reduce((sum, run) => sum + run.non2xx, 0)
  await stopServer(embedded.child)

  // Cold: distinct credentials, three concurrent requests each.
  accountCalls.clear()
  const started = Date.now()
  const statuses = await Promise.all(Array.from({ length: coldCredentials }, (_, n) => n + 1000).flatMap((n) =>
    [0, 1, 2].map(() => fetch(`${real.url}${route}`, { headers: { cookie: `pterodactyl_session=s-${n}` } }).then((answer) => answer.status))))
  const coldMs = Date.now() - started
  const coldCalls = [...accountCalls.values()].reduce((sum, count) => sum + count, 0)

  // Single flight: 200 concurrent first requests with one new session.
  const flight = await Promise.all(Array.from({ length: 200 }, () =>
    fetch(`${real.url}${route}`, { headers: { cookie: "pterodactyl_session=s-999999" } }).then((answer) => answer.status)))
  await stopServer(real.child)

  const ms = (value) => `${value.toFixed(2)} ms`
  // How many answers of each status: a 429 is the per-address limit on new credentials (panel.lookups_per_second,
  // docs/http.md "Limits"), which these bursts of new sessions from one address run into by design.
  const statusCounts = (list) => [...new Set(list)].sort().map((status) => `${list.filter((one) => one === status).length}× ${status}`).join(", ")
  console.log(`identity, ${connections} connections, 3 alternating rounds of ${duration} s (medians, same run):`)
  console.log(`  embedded (Bearer):              p50 ${ms(base.latency.p50)}, p99 ${ms(base.latency.p99)}, ${base.requests.average.toFixed(0)} req/s`)
  console.log(`  pterodactyl, warm cache:        p50 ${ms(warm.latency.p50)}, p99 ${ms(warm.latency.p99)}, ${warm.requests.average.toFixed(0)} req/s`)
  console.log(`  warm credential: ${warmCalls} account request(s) over all rounds (one per 30 s cache window)`)
  console.log(`  added by identity (warm, p99):  ${ms(warm.latency.p99 - base.latency.p99)} (goal ≤ 1 ms); req/s ratio ${(warm.requests.average / base.requests.average).toFixed(2)}x; non-2xx ${non2xx}`)
  console.log(`  cold cache: ${coldCredentials} credentials × 3 concurrent requests → ${coldCalls} account requests (${(coldCalls / coldCredentials).toFixed(2)} per credential), answers ${statusCounts(statuses)}, ${coldMs} ms`)
  console.log(`  single flight: 200 concurrent first requests, one new session → ${accountCalls.get("s-999999") ?? 0} account request(s), answers ${statusCounts(flight)}`)
} finally {
  panel.close()
  rmSync(root, { recursive: true, force: true })
}
