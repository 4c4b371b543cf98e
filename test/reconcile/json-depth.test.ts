import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { fixture, runHost, tempDir } from "../support/cli.js"

// A saved plan (`--plan`) and a journal entry read back nest at most 64 levels (docs/decisions.md "JSON
// from outside nests at most 64 levels"). Before the bound, a 100,000-level plan file ended
// `host reconcile --plan` with "unexpected failure: Maximum call stack size exceeded" (the schema's
// refusal formatted the value), and a journal entry like it broke the warning that reports it.

const root = tempDir("host-plan-depth-")
afterAll(() => root.cleanup())

const levels = 100_000
const deepArrays = "[".repeat(levels) + "]".repeat(levels)

describe("JSON files nesting 100,000 levels", () => {
  it("a plan file is refused as not a plan, naming the limit", async () => {
    const plan = join(root.path, "plan.json")
    writeFileSync(plan, deepArrays)
    const run = await runHost(["--root", root.path, "reconcile", "--plan", plan])
    expect(run.code).not.toBe(0)
    expect(run.stderr).toContain(`${plan} is not a plan file: the JSON nests arrays and objects more than 64 levels deep; that is the limit`)
    expect(run.stderr).not.toContain("unexpected failure")
  })

  it("a journal entry is reported as unreadable, naming the limit, and the operation goes on", async () => {
    expect((await runHost(["--root", root.path, "add", fixture("extensions", "hello-world")])).code).toBe(0)
    mkdirSync(join(root.path, "storage", "host", "journal"), { recursive: true })
    writeFileSync(join(root.path, "storage", "host", "journal", "0001-deep.json"), deepArrays)
    const run = await runHost(["--root", root.path, "disable", "acme/hello-world"])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toContain("journal entry 0001-deep.json is unreadable and was left in place")
    expect(run.stderr).toContain("more than 64 levels deep")
  })
})
