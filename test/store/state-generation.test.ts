import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { StateGeneration } from "../../src/store/StateGeneration.js"
import { writeTransaction } from "../../src/store/Transaction.js"
import { fixture, runHost, tempDirsPerTest } from "../support/cli.js"
import { describeDatabases, type TestDatabase } from "../support/databases.js"

// The state generation (docs/operations.md "Running replicas"): raised inside the transaction of every
// committed operation, so a replica polling it sees a change exactly when the change's rows are visible.

const temp = tempDirsPerTest()

const generationOn = (db: TestDatabase, root: string) => StateGeneration.Default.pipe(Layer.provideMerge(db.layer(root)))

const readGeneration = async (db: TestDatabase, root: string): Promise<number> => {
  const rows = await db.query<{ value: string }>(
    root,
    db.dialect === "mysql"
      ? "SELECT value FROM host_settings WHERE extension_id = 'host/core' AND `key` = 'state_generation'"
      : `SELECT value FROM host_settings WHERE extension_id = 'host/core' AND "key" = 'state_generation'`
  )
  return rows.length === 0 ? 0 : Number(rows[0]!.value)
}

describeDatabases("state generation", (db) => {
  it.effect("starts at 0, rises by one per committed transaction and not at all in one rolled back", () => {
    const root = temp("host-generation-")
    return Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const generation = yield* StateGeneration
      expect(yield* generation.current).toBe(0)
      yield* writeTransaction(sql, generation.bump)
      expect(yield* generation.current).toBe(1)
      yield* writeTransaction(sql, generation.bump)
      yield* writeTransaction(sql, generation.bump)
      expect(yield* generation.current).toBe(3)
      const failed = yield* Effect.flip(writeTransaction(sql, Effect.zipRight(generation.bump, Effect.fail("refused" as const))))
      expect(failed).toBe("refused")
      expect(yield* generation.current).toBe(3)
    }).pipe(Effect.provide(generationOn(db(), root)))
  })

  it("moves with every operation that commits: add, disable, enable, reconcile (install and configure), remove", async () => {
    const root = temp("host-generation-ops-")
    const host = (...args: Array<string>) => runHost([...args, "--root", root])
    expect((await host("list")).code).toBe(0)
    expect(await readGeneration(db(), root)).toBe(0)

    expect((await host("add", fixture("extensions", "hello-world"))).code).toBe(0)
    expect(await readGeneration(db(), root)).toBe(1)
    expect((await host("disable", "acme/hello-world")).code).toBe(0)
    expect(await readGeneration(db(), root)).toBe(2)
    // Nothing to change: no transaction, no new generation.
    expect((await host("disable", "acme/hello-world")).code).toBe(0)
    expect(await readGeneration(db(), root)).toBe(2)
    expect((await host("enable", "acme/hello-world")).code).toBe(0)
    expect(await readGeneration(db(), root)).toBe(3)
    // Refused before anything is written (already installed): the generation stays.
    expect((await host("add", fixture("extensions", "hello-world"))).code).toBe(1)
    expect(await readGeneration(db(), root)).toBe(3)

    const desired = join(root, "desired.yaml")
    writeFileSync(
      desired,
      `host: "1.0"\nextensions:\n  acme/hello-world: { source: { path: ${fixture("extensions", "hello-world")} } }\n` +
        `  acme/probe:\n    source: { path: ${fixture("runtime", "probe")} }\n    settings: { greeting: hi }\n`
    )
    const applied = await host("reconcile", "--file", desired)
    expect(applied.code, applied.stderr).toBe(0)
    // Two actions (install acme/probe, then its settings): one generation each.
    expect(await readGeneration(db(), root)).toBe(5)

    expect((await host("remove", "acme/probe", "--yes")).code).toBe(0)
    expect(await readGeneration(db(), root)).toBe(6)
  })
})
