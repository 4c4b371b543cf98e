import { cpSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { fixture, runHost, tempDirsPerTest } from "../support/cli.js"

// Finding 8 of issue 16: YAML alias errors give one JSON document with --json and a clear message.

const temp = tempDirsPerTest()

const extensionWith = (extra: string) => {
  const folder = join(temp("host-yaml-json-"), "ext")
  cpSync(fixture("extensions", "hello-world"), folder, { recursive: true })
  writeFileSync(join(folder, "extension.yaml"), readFileSync(join(folder, "extension.yaml"), "utf8") + extra)
  return folder
}

describe("validate --json on YAML alias errors", () => {
  it.each([
    ["an undefined alias", "extra: *missing\n", /^Unresolved alias/],
    [
      "an alias bomb",
      "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
      /^aliases expand to too many nodes/
    ]
  ])("%s", async (_name, extra, message) => {
    const run = await runHost(["validate", extensionWith(extra), "--json"])
    expect(run.code).toBe(1)
    const report = JSON.parse(run.stdout) as { valid: boolean; errors: Array<{ path: string; message: string }> }
    expect(report.valid).toBe(false)
    expect(report.errors[0]!.message).toMatch(message)
    expect(run.stderr).not.toContain("unexpected failure")
  })
})
