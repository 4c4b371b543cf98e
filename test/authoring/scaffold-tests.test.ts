import { execFile } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { repoRoot, tempDirsPerTest } from "../support/cli.js"
import { mustRun, scaffold } from "./helpers.js"

// The tests `host new --with-tests` writes run as the author runs them (the framework's vitest, the
// scaffold's own vitest.config.mjs, @host/sdk/testing booting a temporary panel) and pass; and they
// can fail: a route that answers something else makes them fail.

const run = promisify(execFile)
const temp = tempDirsPerTest()
const vitest = join(repoRoot, "node_modules", "vitest", "vitest.mjs")

const runScaffoldTests = (folder: string) =>
  run(process.execPath, [vitest, "run"], { cwd: folder, env: { ...process.env, NO_COLOR: "1", CI: "1" } }).then(
    ({ stdout }) => ({ code: 0, output: stdout }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? 1, output: `${error.stdout ?? ""}${error.stderr ?? ""}` })
  )

describe("scaffolded tests (@host/sdk/testing)", () => {
  it("pass for the full preset, and fail when a route changes its answer", async () => {
    const { path } = await scaffold(temp("host-scaffold-tests-"), "acme/tested", "--preset", "full")
    const passing = await runScaffoldTests(path)
    expect(passing.output).toMatch(/Tests\s+6 passed \(6\)/)
    expect(passing.code).toBe(0)

    const routes = join(path, "src", "routes", "api-client.ts")
    writeFileSync(routes, readFileSync(routes, "utf8").replaceAll("${user.username}!`", "${user.username}`"))
    const failing = await runScaffoldTests(path)
    expect(failing.code).toBe(1)
    expect(failing.output).toMatch(/greets the signed-in user/)
    expect(failing.output).toMatch(/Tests\s+1 failed \| 5 passed \(6\)/)
  }, 180_000)

  it("pass for a minimal scaffold with api routes and tests added", async () => {
    const { path } = await scaffold(temp("host-scaffold-tests-"), "acme/small-tested", "--preset", "minimal", "--with-api-routes", "--with-tests")
    await mustRun(["validate", "--strict", path])
    const result = await runScaffoldTests(path)
    expect(result.output).toMatch(/Tests\s+4 passed \(4\)/)
    expect(result.code).toBe(0)
  }, 180_000)
})
