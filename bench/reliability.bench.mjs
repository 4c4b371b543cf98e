// R1: 200 kills (SIGKILL) at random points of add/update/remove, each followed by recovery (the next
// command) and a consistency check: records, installed files, checksums, migration rows and tables agree,
// and no journal, staging folder or lock is left. Prints consistent/total. BENCH_KILLS overrides 200.
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import Database from "better-sqlite3"

const kills = Number(process.env.BENCH_KILLS ?? 200)
const bin = fileURLToPath(new URL("../bin/host.js", import.meta.url))
const work = mkdtempSync(join(tmpdir(), "host-r1-"))
const root = join(work, "root")
mkdirSync(root)

const writeExtension = (version, migrations) => {
  const dir = join(work, `items-${version}`)
  mkdirSync(join(dir, "database", "migrations"), { recursive: true })
  writeFileSync(join(dir, "extension.yaml"), `host: "1.0"\nid: acme/items\nname: Items\nversion: ${version}\ndescription: R1\nlicense: MIT\n`)
  for (const [name, table] of migrations) {
    writeFileSync(join(dir, "database", "migrations", name), `-- up\nCREATE TABLE ${table} (id INTEGER);\n-- down\nDROP TABLE ${table};\n`)
  }
  for (let index = 0; index < 40; index++) writeFileSync(join(dir, `asset-${index}.txt`), `${version} ${index}\n`.repeat(200))
  return dir
}
const v1 = writeExtension("1.0.0", [["001_a.sql", "ext_items_a"]])
const v2 = writeExtension("2.0.0", [["001_a.sql", "ext_items_a"], ["002_b.sql", "ext_items_b"]])

const host = (args) => spawnSync(process.execPath, [bin, ...args, "--root", root], { encoding: "utf8" })

const runAndKill = (args, afterMs) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args, "--root", root], { stdio: "ignore" })
    const timer = setTimeout(() => child.kill("SIGKILL"), afterMs)
    child.on("exit", (code, signal) => {
      clearTimeout(timer)
      resolve(signal === "SIGKILL" ? "killed" : code === 0 ? "completed" : "failed")
    })
  })

const files = (dir) =>
  existsSync(dir) ? readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length : 0

const check = () => {
  const problems = []
  const recovered = host(["status", "--json"])
  if (recovered.status !== 0) return [`status failed: ${recovered.stderr}`]
  const status = JSON.parse(recovered.stdout)
  const db = new Database(join(root, "storage", "host", "host.db"), { readonly: true })
  const records = db.prepare("SELECT extension_id, version FROM host_extensions").all()
  const migrations = db.prepare("SELECT migration FROM host_migrations WHERE extension_id = 'acme/items' ORDER BY migration").all().map((r) => r.migration)
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'ext_%' ORDER BY name").all().map((r) => r.name)
  db.close()
  const target = join(root, "host", "extensions", "acme", "items")
  const record = records[0]
  if (record === undefined) {
    if (existsSync(target)) problems.push("files without a record")
    if (migrations.length > 0 || tables.length > 0) problems.push("migrations or tables without a record")
  } else {
    if (!existsSync(target)) problems.push("record without files")
    else if (!readFileSync(join(target, "extension.yaml"), "utf8").includes(`version: ${record.version}`)) problems.push("files of another version")
    const expected = record.version === "1.0.0" ? ["ext_items_a"] : ["ext_items_a", "ext_items_b"]
    if (JSON.stringify(tables) !== JSON.stringify(expected)) problems.push(`tables ${tables} for ${record.version}`)
    if (migrations.length !== expected.length) problems.push(`migrations ${migrations} for ${record.version}`)
  }
  if (status.drift.modified.length + status.drift.missing.length + status.drift.unverifiable.length > 0) problems.push("drift")
  if (status.lock !== null) problems.push("lock left behind")
  if (files(join(root, "storage", "host", "journal")) > 0) problems.push("journal left behind")
  if (files(join(root, "storage", "host", "staging")) > 0) problems.push("staging left behind")
  return problems.length === 0 ? [] : problems.map((p) => `${p} (state: ${JSON.stringify(records)})`)
}

host(["list"])
let consistent = 0
const outcomes = { killed: 0, completed: 0, failed: 0 }
const failures = []
for (let run = 0; run < kills; run++) {
  const state = JSON.parse(host(["list", "--json"]).stdout)[0]
  const args = state === undefined
    ? ["add", v1]
    : state.version === "1.0.0"
    ? (Math.random() < 0.5 ? ["update", "acme/items", "--source", v2] : ["remove", "acme/items"])
    : ["remove", "acme/items"]
  outcomes[await runAndKill(args, 150 + Math.random() * 300)]++
  const problems = check()
  if (problems.length === 0) consistent++
  else failures.push(`${args[0]}: ${problems.join("; ")}`)
}
rmSync(work, { recursive: true, force: true })
console.log(`R1 reliability: ${consistent}/${kills} consistent after a kill and recovery`)
console.log(`  processes killed mid-operation: ${outcomes.killed}, finished before the kill: ${outcomes.completed}, failed: ${outcomes.failed}`)
for (const failure of failures.slice(0, 10)) console.log(`  inconsistent: ${failure}`)
