// D1, replicas: convergence time — an install committed through replica A's admin API, until replica B
// serves the extension's route — with two `host serve` processes on separate roots sharing one MariaDB
// (or MySQL) database and one artifact store (docs/operations.md, "Running replicas"). Median of 10
// (BENCH_REPLICA_RUNS); goal ≤ 2 s. Each round removes the extension through A and waits until B stops
// serving it. The server is HOST_BENCH_MYSQL_URL or HOST_TEST_MYSQL_URL, in a fresh database dropped
// afterwards; without one the bench says it skipped. Servers run with the default poll interval.
import { execFileSync, spawn } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { median } from "./cpu.mjs"
import { stopServer } from "./serve.mjs"

const bin = fileURLToPath(new URL("../bin/host.js", import.meta.url))
const probeFolder = fileURLToPath(new URL("../fixtures/runtime/probe", import.meta.url))
const rounds = Number(process.env.BENCH_REPLICA_RUNS ?? 10)
const serverUrl = [process.env.HOST_BENCH_MYSQL_URL, process.env.HOST_TEST_MYSQL_URL].find((url) => url !== undefined && url !== "")

const tokens = { admin: "host_bench_admin_token", user: "host_bench_user_token" }
const sha = (text) => createHash("sha256").update(text).digest("hex")

const replicaRoot = (parent, name, artifacts) => {
  const root = join(parent, name)
  mkdirSync(join(root, "config"), { recursive: true })
  writeFileSync(join(root, "config", "host.yaml"), `artifacts_path: ${artifacts}\n`)
  writeFileSync(join(root, "config", "panel.yaml"), [
    "panel: { name: Bench Panel, version: 1.11.0, php: 8.2.0 }",
    "users:",
    `  - { id: 1, username: admin, email: admin@example.test, admin: true, token_sha256: ${sha(tokens.admin)} }`,
    `  - { id: 2, username: user, email: user@example.test, token_sha256: ${sha(tokens.user)} }`,
    "servers: []",
    ""
  ].join("\n"))
  return root
}

/** `host serve --port 0` in `root`; resolves with its URL once /host/ready answers 200. */
const serve = async (root, env) => {
  const child = spawn(process.execPath, [bin, "--root", root, "serve", "--port", "0"], {
    env: { ...process.env, ...env, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const url = await new Promise((resolve, reject) => {
    let stdout = ""
    const timer = setTimeout(() => reject(new Error(`host serve did not listen: ${stderr}`)), 30_000)
    child.stdout.on("data", (chunk) => {
      stdout += chunk
      const match = /Listening on (http:\/\/\S+)/.exec(stdout)
      if (match !== null) {
        clearTimeout(timer)
        resolve(match[1])
      }
    })
    child.once("exit", (code) => reject(new Error(`host serve exited with ${code}: ${stderr}`)))
  })
  await until(async () => (await fetch(`${url}/host/ready`).catch(() => undefined))?.status === 200, 30_000)
  return { url, stop: () => stopServer(child) }
}

/** Polls `check` every 10 ms until it holds (or fails after `timeoutMs`); returns the milliseconds it took. */
const until = async (check, timeoutMs) => {
  const started = performance.now()
  for (;;) {
    if (await check()) return performance.now() - started
    if (performance.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

const call = (url, token, method = "GET", body) =>
  fetch(url, { method, headers: { authorization: `Bearer ${token}` }, body }).then(async (response) => ({ status: response.status, text: await response.text() }))

if (serverUrl === undefined) {
  console.log("D1 replica convergence: skipped (set HOST_BENCH_MYSQL_URL to a MariaDB/MySQL server)")
} else {
  const { default: mysql } = await import("mysql2/promise")
  const admin = () => mysql.createConnection(serverUrl.replace(/^mariadb:/i, "mysql:"))
  const database = `host_d1r_${process.pid}_${randomBytes(3).toString("hex")}`
  const adminConnection = await admin()
  await adminConnection.query(`CREATE DATABASE ${database}`)
  const url = new URL(serverUrl.replace(/^mariadb:/i, "mysql:"))
  url.pathname = `/${database}`
  const env = { HOST_DATABASE_URL: url.toString() }
  const parent = mkdtempSync(join(tmpdir(), "host-d1-replicas-"))
  const servers = []
  try {
    const archiveFolder = join(parent, "archive")
    const exported = JSON.parse(execFileSync(process.execPath, [bin, "export", probeFolder, "--output", `${archiveFolder}/`, "--json"], { encoding: "utf8" }))
    const archive = readFileSync(exported.archive)
    const artifacts = join(parent, "artifacts")
    const [a, b] = await Promise.all([
      serve(replicaRoot(parent, "a", artifacts), env),
      serve(replicaRoot(parent, "b", artifacts), env)
    ])
    servers.push(a, b)
    const route = `${b.url}/api/client/host/acme/probe/open`
    const times = []
    for (let round = 0; round < rounds; round++) {
      const form = new FormData()
      form.append("archive", new Blob([archive]), exported.archive.split("/").pop())
      const installed = await call(`${a.url}/admin/host/api/extensions`, tokens.admin, "POST", form)
      if (installed.status !== 201) throw new Error(`install on A: ${installed.status} ${installed.text}`)
      times.push(await until(async () => (await call(route, tokens.user)).status === 200, 30_000))
      const removed = await call(`${a.url}/admin/host/api/extensions/acme/probe/remove`, tokens.admin, "POST")
      if (removed.status !== 200) throw new Error(`remove on A: ${removed.status} ${removed.text}`)
      await until(async () => (await call(route, tokens.user)).status === 404, 30_000)
    }
    console.log(`D1 replica convergence (MariaDB/MySQL, two host serve replicas, default poll interval), ${rounds} installs on A:`)
    console.log(`  committed on A -> served by B: median ${(median(times) / 1000).toFixed(2)} s, max ${(Math.max(...times) / 1000).toFixed(2)} s (goal <= 2 s)`)
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
    await adminConnection.query(`DROP DATABASE IF EXISTS ${database}`)
    await adminConnection.end()
    rmSync(parent, { recursive: true, force: true })
  }
}
