// Builds the demo panel's file:// registry from fixtures/extensions: one archive per fixture made by the
// real `host export`, and a registry.json listing them with their sha256. Writes
// storage/demo-registry/ (gitignored), which config/host.yaml names as `file://./storage/demo-registry`.
//
//   node scripts/demo-registry.mjs [--out DIR] [--quiet]
//
// Needs the built CLI (node scripts/build.mjs). Exports are deterministic, so rebuilding gives the same bytes.
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { parse as parseYaml } from "yaml"

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

// Build next to the final folder and swap it in, so a reader never sees half a registry.
const building = `${out}.building`
rmSync(building, { recursive: true, force: true })
mkdirSync(join(building, "archives"), { recursive: true })

const extensions = []
for (const name of readdirSync(fixtures).sort()) {
  const folder = join(fixtures, name)
  if (!existsSync(join(folder, "extension.yaml"))) continue
  const manifest = parseYaml(readFileSync(join(folder, "extension.yaml"), "utf8"))
  const run = spawnSync(process.execPath, [join(root, "bin", "host.js"), "export", folder, "--output", `${join(building, "archives")}/`, "--json"], {
    cwd: root,
    encoding: "utf8"
  })
  if (run.status !== 0) fail(`host export ${relative(root, folder)} failed:\n${run.stderr}`)
  const archive = `${manifest.id.replace("/", "-")}-${manifest.version}.host`
  const sha256 = readFileSync(join(building, "archives", `${archive}.sha256`), "utf8").split(/\s+/)[0]
  extensions.push({
    id: manifest.id,
    name: manifest.name,
    description: manifest.description ?? "",
    repository: `https://example.invalid/${manifest.id}`,
    latest_version: manifest.version,
    versions: [manifest.version],
    license: manifest.license ?? "",
    authors: (manifest.authors ?? []).map((author) => ({ name: author.name, ...(author.email ? { email: author.email } : {}) })),
    tags: ["demo", ...(manifest.id.split("/")[1] ?? "").split("-")],
    requires: manifest.requires ?? {},
    dependencies: manifest.dependencies ?? {},
    archive_url: "archives/{archive}",
    sha256: { [manifest.version]: sha256 }
  })
}

const index = { version: "1.0", updated_at: new Date().toISOString(), extensions }
writeFileSync(join(building, "registry.json"), `${JSON.stringify(index, null, 2)}\n`)
rmSync(out, { recursive: true, force: true })
renameSync(building, out)
if (!quiet) {
  process.stdout.write(`Demo registry: ${pathToFileURL(out).href} (${extensions.map((e) => `${e.id} ${e.latest_version}`).join(", ")})\n`)
}
