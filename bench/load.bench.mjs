// R4 (docs/operations.md#reliability-suites): a mixed load of BENCH_R4_REQUESTS (default 50,000)
// requests at 128 connections against `host serve` — the framework's client endpoints, api-client, web
// and admin routes of extensions (tokens of a user, a subuser and an admin), the admin API and readiness —
// while other processes disable and enable three of the extensions being called, over
// and over. Goals (issue 36's): 0 5xx, ≥ 0.15× bare node:http's req/s and p99 ≤ 6× its p99 under the same load, RSS growth < 10 %
// after a warm-up run (judged on the RSS level: medians of the run's first and last thirds). Shown beside them, not
// judged: the platform's floor under the same load and toggling (bench/effect-floor.mjs `any`, the cheapest Effect
// app, one route answering every request), what any Effect server stands on here (docs/decisions.md "R4 against
// the platform's floor").
import { execFileSync, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import autocannon from "autocannon"
import { report } from "./report.mjs"
import { startServe, stopServer } from "./serve.mjs"

const repo = fileURLToPath(new URL("..", import.meta.url))
const bin = join(repo, "bin", "host.js")
const amount = Number(process.env.BENCH_R4_REQUESTS ?? 50_000)
// The server's heap takes some 40,000 requests at this concurrency to reach its working size (RSS then
// stays level over 150,000 requests and 90+ toggles), so the warm-up is one run of the same size.
const warmup = Number(process.env.BENCH_R4_WARMUP ?? amount)
const connections = 128
const root = mkdtempSync(join(tmpdir(), "host-r4-"))
const sources = mkdtempSync(join(tmpdir(), "host-r4-src-"))
const env = { PATH: process.env.PATH ?? "", NO_COLOR: "1" }
const host = (...args) => execFileSync(process.execPath, [bin, "--root", root, ...args], { env, stdio: ["ignore", "pipe", "pipe"] })
const tokens = { admin: "r4_admin_token", bob: "r4_bob_token", dave: "r4_dave_token" }
const sha = (text) => createHash("sha256").update(text).digest("hex")

const toggled = ["r4/t1", "r4/t2", "r4/t3"]
const writeToggled = (id) => {
  const dir = join(sources, id.replace("/", "-"))
  mkdirSync(join(dir, "src", "routes"), { recursive: true })
  mkdirSync(join(dir, "resources", "frontend", "dist"), { recursive: true })
  writeFileSync(join(dir, "extension.yaml"), `host: "1.0"\nid: ${id}\nname: ${id}\nversion: 1.0.0\ndescription: Toggled during R4.\nlicense: MIT\n`)
  writeFileSync(join(dir, "src", "routes", "api-client.ts"), `import { defineRoutes } from "@host/sdk/server"\nexport default defineRoutes((r) => { r.get("/ping", () => ({ pong: "${id}" })) })\n`)
  writeFileSync(join(dir, "resources", "frontend", "dist", "extension.js"), `window.__HOST__.sdk.createExtension({ id: "${id}", slots: [{ slot: "dashboard.widgets", component: function () { return null; } }] });\n`)
  return dir
}

const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024

const startServer = () => startServe({ bin, root, env, args: ["--poll-ms", "250"] })

const bearer = (who) => ({ authorization: `Bearer ${tokens[who]}` })
const mix = [
  { path: "/api/client/host/slots", headers: bearer("dave") },
  { path: "/api/client/host/extensions", headers: bearer("bob") },
  { path: "/api/client/host/config", headers: bearer("dave") },
  { path: "/api/client/host/acme/probe/open", headers: bearer("dave") },
  { path: "/api/client/host/acme/probe/secret", headers: bearer("bob") },
  { path: "/api/client/host/acme/probe/servers/srv-bob/info", headers: bearer("bob") },
  { method: "POST", path: "/api/client/host/acme/probe/echo", headers: { ...bearer("dave"), "content-type": "application/json" }, body: "{\"n\":1}" },
  { path: "/host/acme/probe/open" },
  { path: "/admin/host/acme/probe/open", headers: bearer("admin") },
  { path: "/admin/host/api/extensions", headers: bearer("admin") },
  { path: "/host/ready" },
  { path: "/api/client/host/acme/probe/async", headers: bearer("dave") },
  ...toggled.map((id) => ({ path: `/api/client/host/${id}/ping`, headers: bearer("dave") })),
  { path: "/api/client/host/extensions/acme/probe/settings", headers: bearer("dave") }
]

// A run of `count` requests, and its rate over the time it took. autocannon ends a run of a set amount at its
// next one-second tick and averages whole-second samples, so its own req/s counts a run of 5.1 s as 6 s (and
// the bare server's run of about one second as one or two): the rate here is the requests answered over the
// time from the start to the last answer, measured the same way on both sides.
const load = (url, count) =>
  new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    let lastAnswer = started
    const run = autocannon({ url, connections, amount: count, requests: mix, timeout: 30 }, (error, result) =>
      error ? reject(error) : resolve(Object.assign(result, { rate: result.requests.total / (Number(lastAnswer - started) / 1e9) })))
    run.on("response", () => {
      lastAnswer = process.hrtime.bigint()
    })
  })

/** The body bare node:http and the floor answer every request with. */
const smallBody = '{"data":{}}'

/** Bare node:http answering every request with a small JSON body, as the baseline under the same load. */
const startBaseline = () =>
  new Promise((resolve) => {
    const code = `require("node:http").createServer((req, res) => { req.resume(); req.on("end", () => { res.writeHead(200, { "content-type": "application/json" }); res.end(${JSON.stringify(smallBody)}) }) })
      .listen(0, "127.0.0.1", function () { console.log("http://127.0.0.1:" + this.address().port) })`
    const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] })
    child.stdout.once("data", (chunk) => resolve({ child, url: String(chunk).trim() }))
  })

/** bench/effect-floor.mjs `any` answering every request with the same body, in a child process like host serve. */
const startFloor = () =>
  new Promise((resolve, reject) => {
    const file = join(root, "floor-body.json")
    writeFileSync(file, smallBody)
    const child = spawn(process.execPath, [fileURLToPath(new URL("./effect-floor.mjs", import.meta.url)), "any", file], { stdio: ["ignore", "pipe", "inherit"] })
    child.once("exit", (code) => reject(new Error(`effect-floor.mjs any exited (${code})`)))
    child.stdout.once("data", (chunk) => {
      child.removeAllListeners("exit")
      resolve({ child, url: String(chunk).trim() })
    })
  })

/**
 * One process at a time disables or enables the next toggled extension, until stopped; it stops at the end
 * of a whole turn (each disabled, then each enabled again), so every toggled extension is enabled after it.
 */
const startToggler = () => {
  let toggling = true
  let toggles = 0
  const turn = 2 * toggled.length
  const done = (async () => {
    for (let index = 0; toggling || index % turn !== 0; index++) {
      const id = toggled[index % toggled.length]
      await new Promise((resolve) => {
        const child = spawn(process.execPath, [bin, "--root", root, Math.floor(index / toggled.length) % 2 === 0 ? "disable" : "enable", id, "--lock-timeout", "30"], { env, stdio: "ignore" })
        child.on("close", resolve)
      })
      toggles++
    }
  })()
  return {
    count: () => toggles,
    stop: () => {
      toggling = false
      return done
    }
  }
}

try {
  mkdirSync(join(root, "config"), { recursive: true })
  writeFileSync(join(root, "config", "panel.yaml"), `panel: { name: R4, version: 1.11.0, php: 8.2.0 }
users:
  - { id: 1, username: admin, admin: true, token_sha256: ${sha(tokens.admin)} }
  - { id: 2, username: bob, token_sha256: ${sha(tokens.bob)} }
  - { id: 3, username: dave, token_sha256: ${sha(tokens.dave)} }
servers:
  - { uuid: srv-bob, name: Bob's, owner: 1, subusers: [{ user: bob, permissions: [probe.view] }] }
`)
  host("add", join(repo, "fixtures", "runtime", "probe"))
  host("add", join(repo, "fixtures", "extensions", "hello-world"))
  for (const id of toggled) host("add", writeToggled(id))

  const baseline = await startBaseline()
  await load(baseline.url, Math.min(10_000, amount))
  const bare = await load(baseline.url, amount)
  await stopServer(baseline.child)

  // The platform's floor under the same load, the toggling processes taking their share of the cores as
  // they do below (here they toggle a root no server reads).
  const floor = await startFloor()
  const floorToggler = startToggler()
  await load(floor.url, Math.min(10_000, amount))
  const floorResult = await load(floor.url, amount)
  await floorToggler.stop()
  await stopServer(floor.child)

  const server = await startServer()
  // Every kind of request succeeds while nothing is toggled, so a 4xx in the run is a disabled route.
  for (const entry of mix) {
    const answer = await fetch(`${server.url}${entry.path}`, { method: entry.method ?? "GET", headers: entry.headers, body: entry.body })
    if (answer.status >= 300) console.log(`  note: ${entry.method ?? "GET"} ${entry.path} answers ${answer.status} before the run`)
  }
  // Toggling from the warm-up to the end.
  const toggler = startToggler()
  // Warm-up, already toggling: JIT, module caches, connection pools, runtime swaps, the heap's working size.
  await load(server.url, warmup)
  const rssAfterWarmup = rssMb(server.child.pid)
  const togglesInWarmup = toggler.count()
  // RSS once a second during the measured run, to show whether it levels off.
  const samples = []
  const sampler = setInterval(() => samples.push(rssMb(server.child.pid)), 1_000)
  const result = await load(server.url, amount)
  clearInterval(sampler)
  const toggles = toggler.count()
  await toggler.stop()
  const rssAfter = rssMb(server.child.pid)
  const serverErrors = (server.stderr().match(/^error/gm) ?? []).length
  await stopServer(server.child)

  const growth = ((rssAfter - rssAfterWarmup) / rssAfterWarmup) * 100
  console.log(`R4 mixed load: ${result.requests.total} requests (${mix.length} kinds) at ${connections} connections after a ${warmup}-request warm-up; ${toggles - togglesInWarmup} disable/enable operations meanwhile (${togglesInWarmup} during the warm-up)`)
  console.log(`  status: ${result["2xx"]} 2xx, ${result["4xx"]} 4xx (the toggled extensions' routes while disabled), ${result["5xx"]} 5xx (goal 0), ${result.errors} errors, ${result.timeouts} timeouts`)
  console.log(`  latency: p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms (bare node:http: p99 ${bare.latency.p99} ms, ${(result.latency.p99 / Math.max(1, bare.latency.p99)).toFixed(1)}×); ${result.rate.toFixed(0)} req/s (${(result.rate / bare.rate).toFixed(2)}× bare, whose ${bare.rate.toFixed(0)} req/s)`)
  const ratio = result.rate / bare.rate
  const p99Times = result.latency.p99 / Math.max(1, bare.latency.p99)
  const floorRatio = floorResult.rate / bare.rate
  const floorP99Times = floorResult.latency.p99 / Math.max(1, bare.latency.p99)
  console.log(`  the platform's floor (bench/effect-floor.mjs any) under the same load and toggling: ${floorResult.rate.toFixed(0)} req/s (${floorRatio.toFixed(2)}× bare), p99 ${floorResult.latency.p99} ms (${floorP99Times.toFixed(1)}× bare's); host serve at ${(result.rate / floorResult.rate).toFixed(2)}× the floor's req/s`)
  report({
    id: "R4",
    measure: `mixed load, ${mix.length} kinds, ${connections} connections, vs bare node:http`,
    value: `${ratio.toFixed(2)}×, p99 ${p99Times.toFixed(1)}× bare, ${result["5xx"]} 5xx (the Effect floor: ${floorRatio.toFixed(2)}×, p99 ${floorP99Times.toFixed(1)}×)`,
    goal: "≥ 0.15×, p99 ≤ 6× bare, 0 5xx",
    met: ratio >= 0.15 && p99Times <= 6 && result["5xx"] === 0
  })
  // GC makes RSS swing by tens of MB between samples; a leak shows as the level rising, so the goal is
  // judged on the median of the run's last third against its first third (the raw figure is shown too).
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? rssAfter
  const third = Math.max(1, Math.floor(samples.length / 3))
  const early = median(samples.slice(0, third))
  const late = median(samples.slice(-third))
  const level = ((late - early) / early) * 100
  const tenths = Array.from({ length: 10 }, (_, index) => samples[Math.floor(((index + 1) / 10) * (samples.length - 1))] ?? rssAfter)
  const signed = (value) => `${value >= 0 ? "+" : ""}${value.toFixed(1)} %`
  console.log(`  RSS level (median of the last third vs the first third of the run): ${early.toFixed(0)} → ${late.toFixed(0)} MB, ${signed(level)} (goal < 10 %)`)
  console.log(`  RSS raw: ${rssAfterWarmup.toFixed(1)} MB right after warm-up, ${rssAfter.toFixed(1)} MB at the end (${signed(growth)}); at each tenth of the run: ${tenths.map((mb) => mb.toFixed(0)).join(", ")} MB`)
  console.log(`  server error lines: ${serverErrors}`)
} finally {
  rmSync(root, { recursive: true, force: true })
  rmSync(sources, { recursive: true, force: true })
}
