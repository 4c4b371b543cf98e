import { FileSystem, Path } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import { dependentsOf, installedStates, migrationsFolderOf } from "../domain/Installed.js"
import { enabledDependents } from "../domain/Rules.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { MigrationsRepo } from "../store/MigrationsRepo.js"
import { SettingsRepo } from "../store/SettingsRepo.js"
import { discoverMigrations } from "./Migrations.js"
import { OperationRefused } from "./Errors.js"

// What an operation would take away, read before the admin confirms it (docs/admin.md): the enabled
// dependents that would lose the extension, and for a remove the tables its migrations created, with
// their row counts. Nothing here changes anything.

export interface TableImpact {
  readonly name: string
  /** null when the table is named by a migration but does not exist (or cannot be counted). */
  readonly rows: number | null
}

export interface RemovalImpact {
  readonly id: string
  readonly version: string
  readonly enabled: boolean
  /** Enabled extensions declaring a dependency on it: disable/remove is refused without force. */
  readonly dependents: ReadonlyArray<string>
  /** Every installed extension declaring a dependency on it, enabled or not. */
  readonly allDependents: ReadonlyArray<string>
  /** Recorded migrations that a remove rolls back (down), newest last. */
  readonly migrations: ReadonlyArray<string>
  /** Tables created by those migrations, each with its current row count. */
  readonly tables: ReadonlyArray<TableImpact>
  /** How many stored settings a remove deletes. */
  readonly settings: number
}

const CREATE_TABLE = /CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?[`"[]?([A-Za-z_][A-Za-z0-9_]*)[`"\]]?/gi

/**
 * The tables a migration file creates, read from its text: `.sql` sections and the SQL strings of
 * `.ts`/`.js` migrations alike (extensions write their DDL as SQL text, docs/backend.md).
 */
export const createdTables = (text: string): ReadonlyArray<string> => [...new Set([...text.matchAll(CREATE_TABLE)].map((match) => match[1]!))]

/** What removing (or disabling) `id` would affect. */
export const removalImpact = Effect.fn("Impact.removal")(function*(id: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const sql = yield* SqlClient.SqlClient
  const { paths } = yield* HostConfig
  const repo = yield* ExtensionsRepo
  const found = yield* repo.find(id)
  if (Option.isNone(found)) {
    return yield* new OperationRefused({ operation: "remove", extensionId: id, reason: "not-installed", detail: "it is not installed", hint: "see host list" })
  }
  const record = found.value
  const all = yield* repo.list
  const installed = installedStates(all)
  const allDependents = dependentsOf(id, all).map((other) => other.extensionId).sort()
  const recorded = yield* Effect.flatMap(MigrationsRepo, (migrations) => migrations.listFor(id))
  const files = yield* discoverMigrations(path.join(paths.extensions, ...id.split("/"), migrationsFolderOf(record))).pipe(Effect.orElseSucceed(() => []))
  const ran = new Set(recorded.map((migration) => migration.migration))
  const names: Array<string> = []
  for (const file of files) {
    if (!ran.has(file.name)) continue
    const text = yield* fs.readFileString(file.file).pipe(Effect.orElseSucceed(() => ""))
    for (const table of createdTables(text)) if (!names.includes(table)) names.push(table)
  }
  const tables = yield* Effect.forEach(names, (name) =>
    sql<{ readonly n: number | string }>`SELECT COUNT(*) AS n FROM ${sql(name)}`.pipe(
      Effect.map(([row]): TableImpact => ({ name, rows: row === undefined ? 0 : Number(row.n) })),
      Effect.orElseSucceed((): TableImpact => ({ name, rows: null }))
    ))
  const settings = Object.keys(yield* Effect.flatMap(SettingsRepo, (repo) => repo.getAll(id))).length
  return {
    id,
    version: record.version,
    enabled: record.enabled,
    dependents: enabledDependents(id, installed),
    allDependents,
    migrations: recorded.map((migration) => migration.migration),
    tables,
    settings
  } satisfies RemovalImpact
})
