import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { repoRoot, runHost, tempDir } from "../support/cli.js"
import { writeConfig } from "./helpers.js"

// The demo registry of `npm start`: built from fixtures/ by scripts/demo-registry.mjs, named in
// config/host.yaml as file://./storage/demo-registry (relative to the panel root).

const cleanups: Array<() => void> = []
afterEach(() => cleanups.splice(0).forEach((cleanup) => cleanup()))

describe("demo registry", () => {
  it("is built from the fixtures and installs through a root-relative file:// URL", async () => {
    const dir = tempDir("host-demo-")
    cleanups.push(dir.cleanup)
    const root = dir.path
    const build = spawnSync(process.execPath, ["scripts/demo-registry.mjs", "--out", join(root, "storage", "demo-registry")], {
      cwd: repoRoot,
      encoding: "utf8"
    })
    expect(build.status).toBe(0)
    expect(build.stdout).toContain("acme/full 1.2.0, acme/hello-world 1.0.0")
    const index = JSON.parse(readFileSync(join(root, "storage", "demo-registry", "registry.json"), "utf8"))
    expect(index.extensions.map((entry: { id: string }) => entry.id)).toEqual(["acme/full", "acme/hello-world"])

    writeConfig(root, "registry_url: file://./storage/demo-registry\n")
    const search = await runHost(["registry:sync", "--search=hello", "--json", "--root", root])
    expect(search.code).toBe(0)
    expect(JSON.parse(search.stdout)).toMatchObject({
      registry_url: `file://${root}/storage/demo-registry`,
      results: [expect.objectContaining({ id: "acme/hello-world" })]
    })
    const add = await runHost(["add", "acme/hello-world", "--root", root])
    expect(add.code).toBe(0)
    expect(add.stdout).toBe("Installed acme/hello-world v1.0.0 (enabled).\n")
    expect((await runHost(["add", "acme/full", "--root", root])).code).toBe(0)
    expect(JSON.parse((await runHost(["update", "--check", "--json", "--root", root])).stdout)).toEqual([])
  })

  it("is what the checked-in demo config names", () => {
    expect(readFileSync(join(repoRoot, "config", "host.yaml"), "utf8")).toMatch(/^registry_url: file:\/\/\.\/storage\/demo-registry$/m)
  })
})
