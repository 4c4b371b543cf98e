// `npm start`: the main job on the bundled demo panel (this checkout is its root): converge it to
// desired-state/extensions.yaml with `host reconcile`, show it, then serve it (`host serve`, until Ctrl-C).
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
// The demo's desired state takes an API key from the environment, as a real one would.
const env = { ...process.env, FULL_API_KEY: process.env.FULL_API_KEY ?? "demo-api-key" }
const host = (...args) => {
  console.log(`\n$ host ${args.join(" ")}`)
  const run = spawnSync(process.execPath, ["bin/host.js", ...args], { cwd: root, stdio: "inherit", env })
  return run.status ?? 1
}

if (!existsSync(new URL("../dist/host.cjs", import.meta.url))) {
  const build = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: root, stdio: "inherit" })
  if (build.status !== 0) process.exit(build.status ?? 1)
}

// The demo registry (storage/demo-registry, a file:// registry) is made from the fixtures.
const registry = spawnSync(process.execPath, ["scripts/demo-registry.mjs"], { cwd: root, stdio: "inherit" })
if (registry.status !== 0) process.exit(registry.status ?? 1)

for (const step of [["reconcile"], ["list"], ["status"]]) {
  const code = host(...step)
  if (code !== 0) process.exit(code)
}

console.log("\nServing the demo panel. To sign in at /auth/login, issue a token: ./bin/host.js panel:token admin")
process.exit(host("serve"))
