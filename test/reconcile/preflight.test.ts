import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { entryFor, index, writeIndex, type BuiltArchive } from "../registry/helpers.js"
import { fixture, runHost, tempDirsPerTest } from "../support/cli.js"
import { inspectDatabase, writeExtension } from "../support/extensions.js"

// The upgrade preflight (docs/operations.md#upgrade-preflight), against a real file:// registry whose
// versions require different panel versions.

const temp = tempDirsPerTest()

/** Exports each folder with `host export` and lists every version in a registry; returns its URL. */
const registryOf = async (dir: string, sources: ReadonlyArray<{ readonly id: string; readonly version: string; readonly panel: string }>) => {
  const archives = new Map<string, BuiltArchive>()
  const made = temp("host-src-")
  for (const source of sources) {
    const folder = writeExtension(made, { id: source.id, version: source.version, requires: { panel: source.panel } })
    const run = await runHost(["export", folder, "--output", `${join(dir, "archives")}/`, "--json"])
    expect(run.code).toBe(0)
    const result = JSON.parse(run.stdout) as { archive: string; sha256: string; bytes: number }
    archives.set(`${source.id}@${source.version}`, {
      id: source.id,
      version: source.version,
      name: result.archive.split("/").pop()!,
      file: result.archive,
      sha256: result.sha256,
      bytes: result.bytes
    })
  }
  const ids = [...new Set(sources.map((source) => source.id))]
  return writeIndex(dir, index(ids.map((id) => entryFor(archives, id))))
}

const panelWith = async () => {
  const url = await registryOf(temp("host-registry-"), [
    { id: "acme/widget", version: "1.0.0", panel: "^1.0" },
    { id: "acme/widget", version: "1.1.0", panel: ">=1.0 <3" },
    { id: "acme/widget", version: "2.0.0", panel: ">=2.0" },
    { id: "acme/legacy", version: "1.0.0", panel: "^1.0" },
    { id: "acme/legacy", version: "1.2.0", panel: "^1.0" },
    { id: "acme/legacy", version: "2.0.0", panel: "^2.0" }
  ])
  const root = temp("host-root-")
  mkdirSync(join(root, "config"))
  writeFileSync(join(root, "config", "host.yaml"), `registry_url: ${url}\n`)
  mkdirSync(join(root, "desired-state"))
  const desire = (widget: string, legacy: string) =>
    writeFileSync(
      join(root, "desired-state", "extensions.yaml"),
      `host: "1.0"\nextensions:\n  acme/widget: "${widget}"\n  acme/legacy: "${legacy}"\n` +
        `  acme/hello-world:\n    source: { path: ${fixture("extensions", "hello-world")} }\n`
    )
  const host = (...args: Array<string>) => runHost([...args, "--root", root])
  // Installed on today's panel: widget 1.0.0 and legacy 1.2.0 (the newest ^1.0).
  desire("1.0.0", "^1.0")
  expect((await host("reconcile")).code).toBe(0)
  desire("^1.0", "^1.0")
  return { root, host, desire }
}

describe("reconcile --dry-run --panel-version (upgrade preflight)", () => {
  it("says ok, update needed (naming the version) or blocked (naming the registry version that passes), and exits 1 when blocked", async () => {
    const { host, root } = await panelWith()
    const before = inspectDatabase(root)
    const run = await host("reconcile", "--dry-run", "--panel-version", "2.0.0", "--json")
    expect(run.code).toBe(1)
    const plan = JSON.parse(run.stdout)
    expect(plan.format).toBe(1)
    expect(plan.preflight).toEqual({
      panel_version: "2.0.0",
      host_version: expect.any(String),
      extensions: [
        { id: "acme/hello-world", status: "ok", installed: "1.0.0", planned: "1.0.0", target: null, problems: [], passing_version: null },
        {
          id: "acme/legacy",
          status: "blocked",
          installed: "1.2.0",
          planned: "1.2.0",
          target: null,
          problems: ['requires.panel "^1.0" is not met by panel 2.0.0'],
          passing_version: "2.0.0"
        },
        {
          id: "acme/widget",
          status: "update needed",
          installed: "1.0.0",
          planned: "1.0.0",
          target: "1.1.0",
          problems: ['requires.panel "^1.0" is not met by panel 2.0.0'],
          passing_version: "1.1.0"
        }
      ],
      summary: { ok: 1, update_needed: 1, blocked: 1 }
    })
    expect(inspectDatabase(root)).toEqual(before)

    const text = await host("reconcile", "--dry-run", "--panel-version", "2.0.0")
    expect(text.code).toBe(1)
    expect(text.stdout).toContain("Preflight for panel 2.0.0 and host")
    expect(text.stdout).toMatch(/update needed {2}acme\/widget 1\.0\.0 → 1\.1\.0: requires\.panel "\^1\.0" is not met by panel 2\.0\.0/)
    expect(text.stdout).toMatch(/blocked +acme\/legacy 1\.2\.0: .*; 2\.0\.0 would pass \(change the desired version to allow it\)/)
    expect(text.stdout).toContain("Preflight: 1 ok, 1 update needed, 1 blocked.")
    expect(text.stdout).toContain("No changes. Panel matches desired state.")
    expect(text.stderr).toContain("error: reconcile: 1 extension(s) blocked on panel 2.0.0")

    // The pull request comment calls the blocked extension out (docs/gitops.md fails the job on exit 1).
    const markdown = await host("reconcile", "--dry-run", "--panel-version", "2.0.0", "--format", "markdown")
    expect(markdown.code).toBe(1)
    expect(markdown.stdout).toContain("**Blocked: 1 extension(s) cannot run on the target panel; this plan must not be applied.**")
    expect(markdown.stdout).toMatch(/`acme\/legacy`: 1\.2\.0: requires\.panel .*; 2\.0\.0 would pass/)
    expect(markdown.stdout).not.toContain("acme/widget`:")
  })

  it("without a blocked extension keeps the usual exit codes; a desired state moved forward passes", async () => {
    const { desire, host } = await panelWith()
    const today = await host("reconcile", "--dry-run", "--panel-version", "1.5.0", "--json")
    expect(today.code).toBe(0)
    expect(JSON.parse(today.stdout).preflight.summary).toEqual({ ok: 3, update_needed: 0, blocked: 0 })

    desire("^2.0", "^2.0")
    const moved = await host("reconcile", "--dry-run", "--panel-version", "2.0.0", "--detailed-exitcode", "--json")
    expect(moved.code).toBe(2)
    const plan = JSON.parse(moved.stdout)
    expect(plan.preflight.extensions.map((item: { status: string }) => item.status)).toEqual(["ok", "update needed", "update needed"])
    expect(plan.preflight.extensions[2]).toMatchObject({ installed: "1.0.0", planned: "2.0.0", target: "2.0.0" })
    expect(plan.summary.update).toBe(2)
  })

  it("checks --host-version too, and refuses the flags outside a dry run or with a non-version", async () => {
    const root = temp("host-root-")
    mkdirSync(join(root, "desired-state"))
    writeFileSync(join(root, "desired-state", "extensions.yaml"),
      `host: "1.0"\nextensions:\n  acme/full:\n    source: { path: ${fixture("extensions", "full")} }\n  acme/hello-world:\n    source: { path: ${fixture("extensions", "hello-world")} }\n`)
    const host = (...args: Array<string>) => runHost([...args, "--root", root])
    const run = await host("reconcile", "--dry-run", "--panel-version", "1.11.0", "--host-version", "2.0.0", "--json")
    expect(run.code).toBe(1)
    const full = JSON.parse(run.stdout).preflight.extensions.find((item: { id: string }) => item.id === "acme/full")
    expect(full).toMatchObject({ status: "blocked", installed: null, planned: "1.2.0", passing_version: null })
    expect(full.problems).toEqual(['requires.host "^1.2" is not met by host 2.0.0'])

    const applying = await host("reconcile", "--panel-version", "2.0.0")
    expect(applying.code).toBe(2)
    expect(applying.stderr).toContain("--dry-run only")
    const bad = await host("reconcile", "--dry-run", "--panel-version", "soon")
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--panel-version "soon" is not a version')
    expect(inspectDatabase(root).extensions).toEqual([])
  })
})
