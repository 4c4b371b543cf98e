import Database from "better-sqlite3"
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { fixture, runHost, tempDirsPerTest } from "../support/cli.js"
import { inspectDatabase, writeExtension } from "../support/extensions.js"
import { entryFor, index as indexOf, unreachableRegistryUrl, writeIndex } from "../registry/helpers.js"

// Each kind of operation failure over the CLI: its own `error:` line naming the step and that nothing
// changed, and its own hint (docs/architecture.md "One install"). The HTTP side is test/http/failures.test.ts.

const temp = tempDirsPerTest()
const host = (root: string, ...args: Array<string>) => runHost([...args, "--root", root])

const throwingMigration = {
  id: "acme/bad-migration",
  version: "1.0.0",
  migrations: { "001_boom.js": "export const up = () => { throw new Error(\"boom in up\") }\nexport const down = () => {}\n" }
}

const stderrLines = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("error: ") || line.startsWith("hint: "))

describe("operation failures on the CLI, by kind", () => {
  it("a migration that throws: MigrationsFailed with the step and its hint", async () => {
    const root = temp("host-root-")
    const source = writeExtension(temp("host-src-"), throwingMigration)
    const run = await host(root, "add", source)
    expect(run.code).toBe(1)
    expect(stderrLines(run.stderr)).toEqual([
      `error: add ${source} failed while running migrations: migration 001_boom (up) of acme/bad-migration failed: boom in up; nothing was changed`,
      "hint: a migration of the extension failed and was rolled back; fix the extension and run the command again"
    ])
    expect(inspectDatabase(root).extensions).toEqual([])
  })

  it("a registry nothing answers at: SourceUnreachable's hint, for its index and for an archive, nothing installed", async () => {
    const root = temp("host-root-")
    const registry = await unreachableRegistryUrl()
    const run = await runHost(["add", "acme/hello-world", "--root", root], { env: { HOST_REGISTRY_URL: registry } })
    expect(run.code).toBe(1)
    expect(stderrLines(run.stderr)).toEqual([
      `error: add: cannot fetch ${registry}/registry.json: connect ECONNREFUSED ${new URL(registry).host}`,
      "hint: the source could not be fetched; check registry_url and the network, then retry"
    ])
    expect(inspectDatabase(root).extensions).toEqual([])

    // The index answers (a file:// registry) but its archive URL does not: the operation's own
    // SourceUnreachable, naming the step and that nothing changed.
    const index = writeIndex(temp("host-registry-"), indexOf([
      entryFor(new Map([["acme/hello-world@1.0.0", { id: "acme/hello-world", version: "1.0.0", name: "", file: "", sha256: "0".repeat(64), bytes: 0 }]]), "acme/hello-world", {
        archive_url: `${registry}/archives/{archive}`
      })
    ]))
    const download = await runHost(["add", "acme/hello-world", "--root", root], { env: { HOST_REGISTRY_URL: index } })
    expect(download.code).toBe(1)
    expect(stderrLines(download.stderr)).toEqual([
      `error: add acme/hello-world failed while verifying and staging acme/hello-world@1.0.0: cannot fetch ${registry}/archives/acme-hello-world-1.0.0.host: connect ECONNREFUSED ${new URL(registry).host}; nothing was changed`,
      "hint: the source could not be fetched; check registry_url and the network, then retry"
    ])
    expect(inspectDatabase(root).extensions).toEqual([])
  })

  it("a tampered archive: SourceRejected with its hint", async () => {
    const root = temp("host-root-")
    const work = temp("host-work-")
    const exported = await runHost(["--root", root, "export", fixture("extensions", "hello-world"), "--output", `${work}/`, "--json"])
    const archive = (JSON.parse(exported.stdout) as { archive: string }).archive
    const bytes = readFileSync(archive)
    bytes[bytes.length - 40] = bytes[bytes.length - 40]! ^ 0xff
    writeFileSync(archive, bytes)
    const run = await host(root, "add", archive)
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/^error: add .* failed while verifying and staging .*; nothing was changed$/m)
    expect(run.stderr).toContain("hint: the archive, its signature, its manifest or the registry's answer was refused")
    expect(inspectDatabase(root).extensions).toEqual([])
  })

  it("files that cannot be switched in: FilesFailed with its hint, and the install undone", async () => {
    const root = temp("host-root-")
    await host(root, "list")
    // A file where the vendor folder must go: the switch cannot create host/extensions/acme.
    mkdirSync(join(root, "host", "extensions"), { recursive: true })
    writeFileSync(join(root, "host", "extensions", "acme"), "not a folder")
    const run = await host(root, "add", fixture("extensions", "hello-world"))
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/^error: add \S+hello-world failed while switching files: .*EEXIST.*; nothing was changed$/m)
    expect(run.stderr).toContain("hint: check free disk space and that Host's root (--root) is writable")
    expect(inspectDatabase(root).extensions).toEqual([])
    expect(readFileSync(join(root, "host", "extensions", "acme"), "utf8")).toBe("not a folder")
    // Nothing is left half-done: once the file is gone the same add works (it used to stay stuck on
    // an entry recovery could not undo).
    rmSync(join(root, "host", "extensions", "acme"))
    const again = await host(root, "add", fixture("extensions", "hello-world"))
    expect(again.stderr).not.toContain("error:")
    expect(again.code).toBe(0)
    expect(readdirSync(join(root, "storage", "host", "journal"))).toEqual([])
  })

  it("a database that cannot be opened: one error line and the database hint, exit 1", async () => {
    const root = temp("host-root-")
    // The database file's place is taken by a folder.
    mkdirSync(join(root, "storage", "host", "host.db"), { recursive: true })
    const run = await host(root, "list", "--json")
    expect(run.code).toBe(1)
    expect(JSON.parse(run.stdout).error.code).toBe("DatabaseUnusable")
    expect(stderrLines(run.stderr)).toEqual([
      expect.stringMatching(/^error: list: the database .*host\.db cannot be read \(EISDIR\): /) as unknown as string,
      'hint: docs/operations.md, "When the database is unreadable"'
    ])
  })

  it("a database that stays locked during an operation: StoreUnavailable with its hint", async () => {
    const root = temp("host-root-")
    expect((await host(root, "add", fixture("extensions", "hello-world"))).code).toBe(0)
    const db = new Database(join(root, "storage", "host", "host.db"))
    try {
      // Another writer holds the database past the busy timeout.
      db.exec("BEGIN IMMEDIATE")
      const run = await host(root, "disable", "acme/hello-world")
      expect(run.code).toBe(1)
      expect(run.stderr).toMatch(/^error: disable acme\/hello-world failed while .*: database sqlite:storage\/host\/host\.db: .*; nothing was changed$/m)
      expect(run.stderr).toContain("hint: the database did not answer; check the database setting, then run the command again")
    } finally {
      db.exec("ROLLBACK")
      db.close()
    }
    expect(inspectDatabase(root).extensions.map((row) => row.enabled)).toEqual([1])
  })
})
