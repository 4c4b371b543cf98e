// `npm run bench`: runs every bench/*.bench.mjs in name order. Each prints its own figures as ratios
// against a baseline measured in the same run, so numbers compare across machines.
import { readdirSync } from "node:fs"
import { fileURLToPath } from "node:url"

const folder = fileURLToPath(new URL(".", import.meta.url))
const only = process.argv[2]
for (const file of readdirSync(folder).filter((name) => name.endsWith(".bench.mjs")).sort()) {
  if (only !== undefined && !file.includes(only)) continue
  console.log(`\n== ${file}`)
  await import(new URL(file, import.meta.url).href)
}
