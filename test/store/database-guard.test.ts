import { existsSync, mkdirSync, statSync, truncateSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runHost, tempDirsPerTest } from "../support/cli.js"

// Finding 3 of issue 16: an existing database file that is empty, foreign or damaged is never given a
// fresh schema (not even by read-only commands); a missing one on a fresh root is still created.

const temp = tempDirsPerTest()
const dbOf = (root: string) => join(root, "storage", "host", "host.db")

describe("the database file", () => {
  it("is created whole on a fresh root", async () => {
    const root = temp("host-db-fresh-")
    const run = await runHost(["--root", root, "list"])
    expect(run.code).toBe(0)
    expect(statSync(dbOf(root)).size).toBeGreaterThan(0)
  })

  it("an empty file is refused by list and status, naming the file and what to do; --init-database initialises it", async () => {
    const root = temp("host-db-empty-")
    expect((await runHost(["--root", root, "list"])).code).toBe(0)
    truncateSync(dbOf(root), 0)
    for (const command of ["list", "status"]) {
      const run = await runHost(["--root", root, command])
      expect(run.code).toBe(1)
      expect(run.stderr).toContain(`error: ${command}: the database ${dbOf(root)} is empty (0 bytes): restore it from a backup, or run the command again with --init-database`)
      expect(statSync(dbOf(root)).size).toBe(0)
    }
    const init = await runHost(["--root", root, "--init-database", "list"])
    expect(init.code).toBe(0)
    expect(statSync(dbOf(root)).size).toBeGreaterThan(0)
  })

  it("a file that is not SQLite is refused with the same clear error, and left as it was", async () => {
    const root = temp("host-db-foreign-")
    mkdirSync(join(root, "storage", "host"), { recursive: true })
    writeFileSync(dbOf(root), "not a database at all\n".repeat(100))
    const run = await runHost(["--root", root, "list"])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(`the database ${dbOf(root)} is not a SQLite database: restore it from a backup`)
    expect(run.stderr).not.toContain("unexpected failure")
    expect(statSync(dbOf(root)).size).toBe(2200)
    expect(existsSync(`${dbOf(root)}-wal`)).toBe(false)
  })
})
