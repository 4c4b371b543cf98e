// `npm start`: the main job on the bundled demo panel (this checkout is its root). It runs as far as
// the framework goes today: validate the demo extensions named in desired-state/, then show the panel.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync } from "node:fs"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const host = (...args) => {
  console.log(`\n$ host ${args.join(" ")}`)
  const run = spawnSync(process.execPath, ["bin/host.js", ...args], { cwd: root, stdio: "inherit" })
  return run.status ?? 1
}

if (!existsSync(new URL("../dist/host.cjs", import.meta.url))) {
  const build = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: root, stdio: "inherit" })
  if (build.status !== 0) process.exit(build.status ?? 1)
}

let failed = 0
for (const name of readdirSync(new URL("../fixtures/extensions", import.meta.url)).sort()) {
  failed += host("validate", `fixtures/extensions/${name}`) === 0 ? 0 : 1
}
failed += host("list") === 0 ? 0 : 1
failed += host("status") === 0 ? 0 : 1
process.exit(failed === 0 ? 0 : 1)
