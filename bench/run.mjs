// `npm run bench [-- <name>...]`: runs every bench/*.bench.mjs in name order, or those whose file name
// contains one of the names given. Each prints its own figures as ratios against a baseline measured in
// the same run, so numbers compare across machines, and states the figures that have a goal through
// report.mjs; after the benches ran, the goals table and a summary line (docs/operations.md "Benchmarks").
// A missed goal is a measurement, not a failure (exit 0); a bench that throws fails the run (exit 1).
import { readdirSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { reported } from "./report.mjs"

const folder = fileURLToPath(new URL(".", import.meta.url))
const names = process.argv.slice(2)
const benches = readdirSync(folder).filter((name) => name.endsWith(".bench.mjs")).sort()
const selected = names.length === 0 ? benches : benches.filter((file) => names.some((name) => file.includes(name)))
const unknown = names.filter((name) => !benches.some((file) => file.includes(name)))
if (unknown.length > 0) {
  console.error(`no bench matches ${unknown.map((name) => JSON.stringify(name)).join(", ")}; the benches are: ${benches.map((file) => file.replace(".bench.mjs", "")).join(", ")}`)
  process.exit(1)
}

// The figures of the goals table (issue "Performance"); a full run that leaves one unmeasured says so.
const goalIds = ["P1", "P2", "P3", "P4", "P5", "P6", "R4"]

const failed = []
for (const file of selected) {
  console.log(`\n== ${file}`)
  try {
    await import(new URL(file, import.meta.url).href)
  } catch (error) {
    failed.push(file)
    console.error(`${file} failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
  }
}

const rows = reported().map((figure) => ({ ...figure, verdict: figure.met ? "met" : "NOT met" }))
if (names.length === 0) {
  for (const id of goalIds) {
    if (!rows.some((row) => row.id === id)) rows.push({ id, measure: "(no bench reported it)", value: "not measured", goal: "—", met: false, verdict: "NOT met" })
  }
}
const header = { id: "id", measure: "measure", value: "value", goal: "goal", verdict: "" }
const columns = ["id", "measure", "value", "goal", "verdict"]
const widths = columns.map((column) => Math.max(...[header, ...rows].map((row) => String(row[column]).length)))
const line = (row) => columns.map((column, index) => String(row[column]).padEnd(widths[index])).join("  ").trimEnd()
console.log("\n== goals")
if (rows.length === 0) console.log("(no bench run reported a figure with a goal)")
else for (const row of [header, ...rows]) console.log(line(row))
const met = rows.filter((row) => row.met).length
const failures = failed.length === 0 ? "" : `; ${failed.length} of ${selected.length} benches failed: ${failed.join(", ")}`
console.log(`\n${met} of ${rows.length} goals met${failures}`)
process.exitCode = failed.length === 0 ? 0 : 1
