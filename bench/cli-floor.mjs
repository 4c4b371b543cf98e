// The stack's floor for P1 (docs/decisions.md "P1: the stack's floor"): the least an Effect CLI on Host's
// stack does to answer `list --json --root DIR` on a fresh root — @effect/cli parses the command, the Node
// services it needs (files, paths, terminal: what Host's platform layer gives it, without Host's lazy
// loading and narrower than NodeContext) serve it, @effect/sql-sqlite-node creates the database file
// with one table, one SELECT reads it and the rows are printed as JSON. bench/startup.bench.mjs bundles it
// the way dist/host.cjs is bundled and runs it through a copy of bin/host.js (same V8 flags, same code
// cache per command), so the difference to `host list --json` is Host's own work: its configuration,
// recovery, locks, four tables and repositories.
import { Command, Options } from "@effect/cli"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { Console, Effect, Layer } from "effect"
import { mkdirSync } from "node:fs"
import { join } from "node:path"

const args = process.argv.slice(2)
const rootAt = args.indexOf("--root")
const root = rootAt === -1 ? process.cwd() : args.splice(rootAt, 2)[1]
// A built-in command of this bundle: bin/host.js keeps the code cache of `list` for it.
globalThis[Symbol.for("host.builtin")]?.()

const list = Command.make(
  "list",
  {
    enabled: Options.boolean("enabled"),
    disabled: Options.boolean("disabled"),
    json: Options.boolean("json")
  },
  ({ json }) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE IF NOT EXISTS host_extensions (extension_id TEXT PRIMARY KEY, name TEXT NOT NULL, version TEXT NOT NULL, enabled INTEGER NOT NULL)`
      const rows = yield* sql`SELECT * FROM host_extensions ORDER BY extension_id`
      yield* Console.log(json ? JSON.stringify(rows, null, 2) : `${rows.length} extensions`)
    }).pipe(Effect.provide(SqliteClient.layer({ filename: join(root, "storage", "host.sqlite") })))
)

mkdirSync(join(root, "storage"), { recursive: true })
const run = Command.run(Command.make("floor").pipe(Command.withSubcommands([list])), { name: "floor", version: "0.0.0" })
const platform = Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer)
Effect.runPromise(run(["node", "floor", ...args]).pipe(Effect.provide(platform))).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
