// D1: the P4 plan (`host reconcile --dry-run`, 500 extensions in sync) and a 20-extension apply
// (`host reconcile` on a panel with none of them) on each database dialect, side by side with SQLite
// measured in the same run. MariaDB/MySQL and PostgreSQL run when HOST_BENCH_MYSQL_URL / HOST_BENCH_PG_URL
// (or HOST_TEST_MYSQL_URL / HOST_TEST_PG_URL) name a server; each run gets its own fresh database there,
// dropped afterwards. Without them only SQLite runs, and the bench says which dialects it skipped.
// Figures are CPU time of the `host` process (user + system, its own threads) and wall time, medians.
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import Database from "better-sqlite3"
import { measureNode, median } from "./cpu.mjs"
import { benchExtensionFiles as files, writeTree } from "./trees.mjs"

const bin = fileURLToPath(new URL("../bin/host.js", import.meta.url))
const runs = Number(process.env.BENCH_RUNS ?? 5)
const planCount = Number(process.env.BENCH_PLAN_EXTENSIONS ?? 500)
const applyCount = 20

const measure = (args, env) => measureNode([bin, ...args], env)

// ---- the dialects and their fresh databases -------------------------------------------------------

const serverUrl = (names) => names.map((name) => process.env[name]).find((value) => value !== undefined && value !== "")

const withDatabase = (url, database) => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/** An admin connection to a server: `exec(sql)` and `insertRows(url, rows)` on the bench database. */
const serverDriver = async (dialect, url) => {
  if (dialect === "mysql") {
    const mysql = await import("mysql2/promise")
    const connect = (target) => mysql.createConnection(new URL(target.replace(/^mariadb:/i, "mysql:")).toString())
    return {
      exec: async (statement) => {
        const connection = await connect(url)
        try {
          await connection.query(statement)
        } finally {
          await connection.end()
        }
      },
      insert: async (target, rows) => {
        const connection = await connect(target)
        try {
          for (let index = 0; index < rows.length; index += 200) {
            const chunk = rows.slice(index, index + 200)
            await connection.query(
              `INSERT INTO host_extensions (extension_id, name, version, enabled, manifest, source, signature, created_at, updated_at) VALUES ${
                chunk.map(() => "(?, ?, '1.0.0', 1, ?, ?, '{\"status\":\"unsigned\",\"key\":null}', '', '')").join(", ")
              }`,
              chunk.flat()
            )
          }
        } finally {
          await connection.end()
        }
      }
    }
  }
  const { default: pg } = await import("pg")
  const withClient = async (target, use) => {
    const client = new pg.Client({ connectionString: target })
    await client.connect()
    try {
      await use(client)
    } finally {
      await client.end()
    }
  }
  return {
    exec: (statement) => withClient(url, (client) => client.query(statement)),
    insert: (target, rows) =>
      withClient(target, async (client) => {
        for (let index = 0; index < rows.length; index += 200) {
          const chunk = rows.slice(index, index + 200)
          await client.query(
            `INSERT INTO host_extensions (extension_id, name, version, enabled, manifest, source, signature, created_at, updated_at) VALUES ${
              chunk.map((_, row) => `($${row * 4 + 1}, $${row * 4 + 2}, '1.0.0', true, $${row * 4 + 3}, $${row * 4 + 4}, '{"status":"unsigned","key":null}', '', '')`).join(", ")
            }`,
            chunk.flat()
          )
        }
      })
  }
}

const dialects = [{ name: "sqlite", label: "SQLite" }]
const skipped = []
for (const [name, label, envs] of [
  ["mysql", "MariaDB/MySQL", ["HOST_BENCH_MYSQL_URL", "HOST_TEST_MYSQL_URL"]],
  ["pg", "PostgreSQL", ["HOST_BENCH_PG_URL", "HOST_TEST_PG_URL"]]
]) {
  const url = serverUrl(envs)
  if (url === undefined) skipped.push(`${label} (set ${envs[0]})`)
  else dialects.push({ name, label, url, driver: await serverDriver(name, url) })
}

/** A fresh database for one panel root: its environment for `host`, its row inserter, and how to drop it. */
const freshDatabase = async (dialect, root) => {
  if (dialect.name === "sqlite") {
    return {
      env: {},
      insert: async (rows) => {
        const db = new Database(join(root, "storage", "host", "host.db"))
        const statement = db.prepare(`INSERT INTO host_extensions (extension_id, name, version, enabled, manifest, source, signature, created_at, updated_at)
          VALUES (?, ?, '1.0.0', 1, ?, ?, '{"status":"unsigned","key":null}', '', '')`)
        db.transaction(() => rows.forEach((row) => statement.run(...row)))()
        db.close()
      },
      drop: async () => {}
    }
  }
  const database = `host_d1_${process.pid}_${randomBytes(3).toString("hex")}`
  await dialect.driver.exec(`CREATE DATABASE ${database}`)
  const url = withDatabase(dialect.url, database)
  return {
    env: { HOST_DATABASE_URL: url },
    insert: (rows) => dialect.driver.insert(url, rows),
    drop: () => dialect.driver.exec(dialect.name === "pg" ? `DROP DATABASE IF EXISTS ${database} WITH (FORCE)` : `DROP DATABASE IF EXISTS ${database}`)
  }
}

// ---- the two figures -----------------------------------------------------------------------------

/** P4's panel: `count` extensions installed from folder sources and listed in the desired state. */
const planPanel = async (dialect, count) => {
  const root = mkdtempSync(join(tmpdir(), `host-d1-plan-${dialect.name}-`))
  const database = await freshDatabase(dialect, root)
  execFileSync(process.execPath, [bin, "list", "--root", root], { env: { ...process.env, ...database.env } })
  const rows = []
  const lines = ['host: "1.0"', "extensions:"]
  for (let index = 0; index < count; index++) {
    const id = `bench/ext-${index}`
    const source = join(root, "sources", `ext-${index}`)
    writeTree(source, files(id), false)
    writeTree(join(root, "host", "extensions", "bench", `ext-${index}`), files(id), true)
    const manifest = { host: "1.0", id, name: id, version: "1.0.0", description: "bench", license: "MIT", backend: { permissions: ["bench.view"] } }
    rows.push([id, id, JSON.stringify(manifest), JSON.stringify({ type: "path", ref: source, sha256: null })])
    lines.push(`  ${id}:`, `    source: { path: ${source} }`)
  }
  await database.insert(rows)
  mkdirSync(join(root, "desired-state"))
  writeFileSync(join(root, "desired-state", "extensions.yaml"), `${lines.join("\n")}\n`)
  return { root, database }
}

const planFigures = async (dialect) => {
  const { database, root } = await planPanel(dialect, planCount)
  try {
    const samples = []
    // The first run fills storage/host/cache (as in bench/reconcile.bench.mjs) and is not counted.
    for (let run = -1; run < runs; run++) {
      const sample = measure(["reconcile", "--dry-run", "--root", root], database.env)
      if (!sample.stdout.includes("No changes")) throw new Error(`not in sync on ${dialect.label}:\n${sample.stdout.slice(0, 400)}`)
      if (run >= 0) samples.push(sample)
    }
    return { cpu: median(samples.map((s) => s.cpu)), wall: median(samples.map((s) => s.wall)) }
  } finally {
    rmSync(root, { recursive: true, force: true })
    await database.drop()
  }
}

/** A fresh panel whose desired state lists 20 folder extensions, none installed: one apply installs them all. */
const applyFigures = async (dialect) => {
  const samples = []
  for (let run = 0; run < runs; run++) {
    const root = mkdtempSync(join(tmpdir(), `host-d1-apply-${dialect.name}-`))
    const database = await freshDatabase(dialect, root)
    try {
      const lines = ['host: "1.0"', "extensions:"]
      for (let index = 0; index < applyCount; index++) {
        const id = `bench/apply-${index}`
        const source = join(root, "sources", `apply-${index}`)
        writeTree(source, files(id), false)
        lines.push(`  ${id}:`, `    source: { path: ${source} }`)
      }
      mkdirSync(join(root, "desired-state"))
      writeFileSync(join(root, "desired-state", "extensions.yaml"), `${lines.join("\n")}\n`)
      execFileSync(process.execPath, [bin, "list", "--root", root], { env: { ...process.env, ...database.env } })
      const sample = measure(["reconcile", "--no-health-gates", "--root", root], database.env)
      if (!sample.stdout.includes(`${applyCount} action(s) applied`)) throw new Error(`apply on ${dialect.label}:\n${sample.stdout.slice(-400)}`)
      samples.push(sample)
    } finally {
      rmSync(root, { recursive: true, force: true })
      await database.drop()
    }
  }
  return { cpu: median(samples.map((s) => s.cpu)), wall: median(samples.map((s) => s.wall)) }
}

const results = []
for (const dialect of dialects) {
  results.push({ dialect, plan: await planFigures(dialect), apply: await applyFigures(dialect) })
}

const sqlite = results[0]
const cell = (figure, base) => `${(figure.cpu / 1000).toFixed(2)} s cpu (${(figure.cpu / base.cpu).toFixed(2)}x), ${(figure.wall / 1000).toFixed(2)} s wall`
console.log(`D1 on each database, median of ${runs} runs; ratios against SQLite in this run:`)
for (const { apply, dialect, plan } of results) {
  console.log(`  ${dialect.label.padEnd(14)} plan ${planCount} in sync: ${cell(plan, sqlite.plan)} | apply ${applyCount}: ${cell(apply, sqlite.apply)}`)
}
if (skipped.length > 0) console.log(`  skipped: ${skipped.join(", ")}`)
