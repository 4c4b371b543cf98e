import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { runHost, tempDir } from "../support/cli.js"

// A registry index nesting 100,000 levels (docs/decisions.md "JSON from outside nests at most 64
// levels") is refused as an invalid index naming the limit. Before the bound, `registry:sync` ended with
// "unexpected failure: Maximum call stack size exceeded": the schema's refusal formatted the value.

const root = tempDir("host-registry-depth-")
afterAll(() => root.cleanup())

describe("registry index nesting", () => {
  it("100,000 levels are an invalid index that names the limit", async () => {
    mkdirSync(join(root.path, "config"), { recursive: true })
    mkdirSync(join(root.path, "registry"))
    writeFileSync(join(root.path, "config", "host.yaml"), `registry_url: file://${root.path}/registry\n`)
    const levels = 100_000
    writeFileSync(join(root.path, "registry", "registry.json"), `{"host":"1.0","extensions":${"[".repeat(levels)}${"]".repeat(levels)}}`)
    const sync = await runHost(["--root", root.path, "registry:sync"])
    expect(sync.code).not.toBe(0)
    expect(sync.stderr).toContain("(json): the JSON nests arrays and objects more than 64 levels deep; that is the limit")
    expect(sync.stderr).not.toContain("unexpected failure")
  })
})
