import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { fixture, runHost, tempDirsPerTest } from "../support/cli.js"
import { inspectDatabase } from "../support/extensions.js"

// Health gates (docs/operations.md#health-gates): fixtures/health-gate holds acme/gated 1.0.0, whose
// critical `storage` check passes, 2.0.0, whose check fails (and which adds a migration), and
// acme/after, which depends on acme/gated.

const temp = tempDirsPerTest()

const panel = () => {
  const root = temp("host-root-")
  mkdirSync(join(root, "desired-state"))
  const desire = (entries: Record<string, string>) =>
    writeFileSync(
      join(root, "desired-state", "extensions.yaml"),
      `host: "1.0"\nextensions:\n${Object.entries(entries).map(([id, dir]) => `  ${id}:\n    source: { path: ${fixture("health-gate", dir)} }\n`).join("")}`
    )
  const host = (...args: Array<string>) => runHost([...args, "--root", root])
  return { root, desire, host }
}

const staging = (root: string) => {
  const dir = join(root, "storage", "host", "staging")
  return existsSync(dir) ? readdirSync(dir) : []
}

describe("health-gated reconcile", () => {
  it("a passing critical check lets the apply go on", async () => {
    const { desire, host, root } = panel()
    desire({ "acme/gated": "v1", "acme/after": "after" })
    const run = await host("reconcile")
    expect(run.code).toBe(0)
    expect(run.stderr).toContain("health gate: acme/gated (storage)")
    expect(inspectDatabase(root).extensions.map((e) => [e.extension_id, e.version])).toEqual([["acme/after", "1.0.0"], ["acme/gated", "1.0.0"]])
    expect(staging(root)).toEqual([])
  })

  it("an update whose critical check fails is rolled back (files, migrations, record) and the apply stops before its dependents", async () => {
    const { desire, host, root } = panel()
    desire({ "acme/gated": "v1" })
    expect((await host("reconcile")).code).toBe(0)
    const before = inspectDatabase(root)

    desire({ "acme/gated": "v2", "acme/after": "after" })
    const run = await host("reconcile", "--json")
    expect(run.code).toBe(1)
    const result = JSON.parse(run.stdout)
    expect(result.apply.failed.action).toMatchObject({ type: "update", id: "acme/gated", from: "1.0.0", to: "2.0.0" })
    expect(result.apply.failed.error).toBe(
      "health gate failed: critical check storage (Storage reachable) is error: storage driver v2 cannot open the bucket; it was rolled back to 1.0.0"
    )
    expect(result.apply.applied).toEqual([])
    expect(result.apply.not_applied.map((a: { id: string }) => a.id)).toEqual(["acme/after"])

    const db = inspectDatabase(root)
    expect(db.extensions).toEqual([{ extension_id: "acme/gated", version: "1.0.0", enabled: 1 }])
    expect(db.tables).toContain("ext_gated_items")
    expect(db.tables).not.toContain("ext_gated_events")
    expect(db.migrations.map((m) => m.migration)).toEqual(["001_create_ext_gated_items"])
    // The rollback is an ordinary update in the activity log, saying why; the record keeps its real source.
    const last = db.activity.at(-1)!
    expect(last.summary).toBe("Updated 2.0.0 → 1.0.0")
    expect(JSON.parse(last.context)).toMatchObject({ reason: "health gate", plan: result.id })
    expect(before.extensions).toEqual(db.extensions)
    const listed = JSON.parse((await host("list", "--json")).stdout)
    expect(listed[0].source).toMatchObject({ type: "path", ref: fixture("health-gate", "v1") })
    // Its sha256 names the artifact installed (the kept copy), and 2.0.0's artifact is gone with it.
    expect(readdirSync(join(root, "storage", "host", "artifacts")).filter((name) => name.endsWith(".host"))).toEqual([`${listed[0].source.sha256}.host`])
    expect(staging(root)).toEqual([])
    // The installed files are 1.0.0's again and intact.
    const status = JSON.parse((await host("status", "--json")).stdout)
    expect(status.drift).toMatchObject({ modified: [], missing: [] })
  })

  it("an install whose critical check fails is removed", async () => {
    const { desire, host, root } = panel()
    desire({ "acme/gated": "v2" })
    const run = await host("reconcile")
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("error: reconcile: install acme/gated failed: health gate failed: critical check storage")
    expect(run.stderr).toContain("it was removed")
    const db = inspectDatabase(root)
    expect(db.extensions).toEqual([])
    expect(db.tables.filter((t) => t.startsWith("ext_"))).toEqual([])
    expect(existsSync(join(root, "host", "extensions", "acme", "gated"))).toBe(false)
  })

  it("--no-health-gates applies without running the checks", async () => {
    const { desire, host, root } = panel()
    desire({ "acme/gated": "v1" })
    expect((await host("reconcile")).code).toBe(0)
    desire({ "acme/gated": "v2", "acme/after": "after" })
    const run = await host("reconcile", "--no-health-gates")
    expect(run.code).toBe(0)
    expect(run.stderr).not.toContain("health gate")
    expect(inspectDatabase(root).extensions.map((e) => [e.extension_id, e.version])).toEqual([["acme/after", "1.0.0"], ["acme/gated", "2.0.0"]])
    // status --health agrees that the gate would have failed.
    expect((await host("status", "--health")).code).toBe(1)
  })
})
