// Builds the demo panel's file:// registry from fixtures/extensions with the real CLI: `host export` of each
// fixture into the folder, then `host registry:build` over it (docs/registry.md "Publishing"). Writes
// storage/demo-registry/ (gitignored), which config/host.yaml names as `file://./storage/demo-registry`.
//
//   node scripts/demo-registry.mjs [--out DIR] [--quiet]
//
// Needs the built CLI (node scripts/build.mjs). Exports are deterministic, so rebuilding gives the same bytes;
// the serial continues from the registry already there, so a panel that synced it never sees it go back.
import { spawnSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const args = process.argv.slice(2)
const outIndex = args.indexOf("--out")
const out = resolve(root, outIndex === -1 ? "storage/demo-registry" : args[outIndex + 1] ?? "")
const quiet = args.includes("--quiet")
const fixtures = join(root, "fixtures", "extensions")

const fail = (message) => {
  process.stderr.write(`error: demo-registry: ${message}\n`)
  process.exit(1)
}

if (!existsSync(join(root, "dist", "host.cjs"))) fail("the CLI is not built; run node scripts/build.mjs first")

const host = (command) => {
  const run = spawnSync(process.execPath, [join(root, "bin", "host.js"), ...command], { cwd: root, encoding: "utf8" })
  if (run.status !== 0) fail(`host ${command.join(" ")} failed:\n${run.stderr}`)
  return run.stdout
}

// Build next to the final folder and swap it in, so a reader never sees half a registry.
const building = `${out}.building`
rmSync(building, { recursive: true, force: true })
mkdirSync(building, { recursive: true })
const previous = join(out, "registry.json")
if (existsSync(previous)) {
  try {
    JSON.parse(readFileSync(previous, "utf8"))
    copyFileSync(previous, join(building, "registry.json"))
  } catch {
    // A broken demo index is simply replaced (its serial cannot be read); the demo panel re-syncs.
  }
}

for (const name of readdirSync(fixtures).sort()) {
  const folder = join(fixtures, name)
  if (!existsSync(join(folder, "extension.yaml"))) continue
  host(["export", relative(root, folder), "--output", `${building}/`, "--json"])
}
host(["registry:build", building, "--json"])
const index = JSON.parse(readFileSync(join(building, "registry.json"), "utf8"))
rmSync(out, { recursive: true, force: true })
renameSync(building, out)
if (!quiet) {
  process.stdout.write(
    `Demo registry: ${pathToFileURL(out).href} (${index.extensions.map((e) => `${e.id} ${e.latest_version}`).join(", ")})\n`
  )
}
