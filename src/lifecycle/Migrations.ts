import { FileSystem, Path } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Cause, Data, Effect } from "effect"
import { awaitableSql } from "../store/AwaitableSql.js"
import { type DialectName, dialectOf, transactionalDdl } from "../store/Dialect.js"
import { MigrationsRepo } from "../store/MigrationsRepo.js"
import { ModuleLoader } from "../kernel/ModuleLoader.js"
import { splitSqlScript } from "./SqlScript.js"

// Per-extension migrations (docs/plan-format.md lists them per plan): files of the migrations folder sorted by name; `.ts`/`.js`
// modules export `up(sql)`/`down(sql)` returning an Effect or a Promise (the client knows its dialect:
// `sql.onDialectOrElse`), `.sql` files hold `-- up` and `-- down` sections and may come per dialect
// (`<name>.mysql.sql`, docs/operations.md). The caller runs a batch inside its transaction.

export class MigrationFailed extends Data.TaggedError("MigrationFailed")<{
  readonly extensionId: string
  readonly migration: string
  readonly direction: "up" | "down"
  readonly detail: string
}> {
  override get message() {
    return `migration ${this.migration} (${this.direction}) of ${this.extensionId} failed: ${this.detail}`
  }
}

const migrationExtensions = [".sql", ".ts", ".js", ".mjs"]

export interface MigrationFile {
  /** The name recorded in host_migrations: the file name without its extension (and dialect). */
  readonly name: string
  readonly file: string
  /** Set when the migration has files for other dialects only: why it cannot run on this one. */
  readonly unavailable?: string
}

/** `<name>.sqlite.sql`, `<name>.mysql.sql`, `<name>.pg.sql`: a `.sql` migration for one dialect. */
const perDialect = /^(.*)\.(sqlite|mysql|pg)\.sql$/

/**
 * The migration files of a folder, sorted by name (a missing folder has none). With `dialect`, a
 * `<name>.<dialect>.sql` file wins over `<name>.sql` and other dialects' files are left out; without it
 * (listing names only) each name appears once.
 */
export const discoverMigrations = Effect.fn("Migrations.discover")(function*(directory: string, dialect?: DialectName) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  if (!(yield* fs.exists(directory))) return []
  const names = (yield* fs.readDirectory(directory)).filter((name) => migrationExtensions.includes(path.extname(name))).sort()
  const byName = new Map<string, { generic?: string; dialects: Map<string, string> }>()
  for (const file of names) {
    const specific = perDialect.exec(file)
    const name = specific !== null ? specific[1]! : file.slice(0, -path.extname(file).length)
    const entry = byName.get(name) ?? { dialects: new Map<string, string>() }
    if (specific !== null) entry.dialects.set(specific[2]!, file)
    else entry.generic = file
    byName.set(name, entry)
  }
  return [...byName.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, entry]): MigrationFile => {
    const chosen = (dialect === undefined ? undefined : entry.dialects.get(dialect)) ?? entry.generic ??
      (dialect === undefined ? [...entry.dialects.values()][0] : undefined)
    return chosen !== undefined
      ? { name, file: path.join(directory, chosen) }
      : {
        name,
        file: "",
        unavailable: `it has no ${name}.${dialect}.sql or ${name}.sql for this database (only ${[...entry.dialects.values()].join(", ")})`
      }
  })
})

/**
 * Splits a `.sql` migration into its `-- up` and `-- down` statements, each section by the rules of the
 * dialect it runs on (lifecycle/SqlScript.ts: trigger bodies, dollar-quoted bodies and comments keep their `;`).
 */
export const parseSqlMigration = (
  text: string,
  dialect: DialectName
): { readonly up: ReadonlyArray<string>; readonly down: ReadonlyArray<string> } => {
  const sections: Record<"up" | "down" | "none", Array<string>> = { up: [], down: [], none: [] }
  let section: "up" | "down" | "none" = "none"
  for (const line of text.split(/\r?\n/)) {
    const marker = /^\s*--\s*(up|down)\b/i.exec(line)
    if (marker !== null) section = marker[1]!.toLowerCase() as "up" | "down"
    else sections[section].push(line)
  }
  return { up: splitSqlScript(sections.up.join("\n"), dialect), down: splitSqlScript(sections.down.join("\n"), dialect) }
}

type Direction = "up" | "down"

const runModuleFunction = (
  extensionId: string,
  migration: MigrationFile,
  direction: Direction,
  fn: unknown
) =>
  Effect.gen(function*() {
    const fail = (detail: string) => new MigrationFailed({ extensionId, migration: migration.name, direction, detail })
    if (typeof fn !== "function") return yield* fail(`it exports no ${direction}() function`)
    const sql = awaitableSql(yield* SqlClient.SqlClient, yield* Effect.runtime<never>())
    const result: unknown = yield* Effect.try({
      try: () => (fn as (sql: unknown) => unknown)(sql),
      catch: (error) => fail(error instanceof Error ? error.message : String(error))
    })
    if (Effect.isEffect(result)) {
      yield* (result as Effect.Effect<unknown, unknown>).pipe(
        Effect.catchAllCause((cause) => Effect.fail(fail(describeError(Cause.squash(cause)))))
      )
    } else if (result !== null && typeof result === "object" && typeof (result as PromiseLike<unknown>).then === "function") {
      yield* Effect.tryPromise({
        try: () => Promise.resolve(result as PromiseLike<unknown>),
        catch: (error) => fail(error instanceof Error ? error.message : String(error))
      })
    }
  })

/** The most specific message of a failure (a SqlError's driver message rather than its summary). */
const describeError = (error: unknown): string => {
  const failure = error as { message?: unknown; cause?: { message?: unknown } } | null | undefined
  if (typeof failure?.cause?.message === "string") return failure.cause.message
  if (typeof failure?.message === "string") return failure.message
  return String(error)
}

/** Runs one migration in one direction (on the caller's transaction). */
export const runMigration = Effect.fn("Migrations.run")(function*(
  extensionId: string,
  migration: MigrationFile,
  direction: Direction
) {
  const fs = yield* FileSystem.FileSystem
  const sql = yield* SqlClient.SqlClient
  const fail = (detail: string) => new MigrationFailed({ extensionId, migration: migration.name, direction, detail })
  if (migration.unavailable !== undefined) return yield* fail(migration.unavailable)
  if (migration.file.endsWith(".sql")) {
    const text = yield* fs.readFileString(migration.file).pipe(Effect.mapError((error) => fail(error.message)))
    const dialect = dialectOf(sql)
    for (const statement of parseSqlMigration(text, dialect)[direction]) {
      const query = sql.unsafe(statement)
      // MySQL gets the text protocol: its prepared-statement protocol refuses some DDL (triggers and routines
      // among them), and a migration has no parameters. SQLite's unprepared path throws instead of failing.
      yield* (dialect === "mysql" ? query.unprepared : query).pipe(Effect.mapError((error) => fail(describeError(error))))
    }
    return
  }
  const loaded = yield* Effect.flatMap(ModuleLoader, (loader) => loader.load(migration.file)).pipe(
    Effect.mapError((error) => fail(error.detail))
  )
  yield* runModuleFunction(extensionId, migration, direction, loaded[direction])
})

/**
 * Runs the folder's migrations not yet recorded for the extension, recording each in `batch`. `starting`
 * hears of each one before its `up` runs (the journal keeps them for undoMigrations).
 */
export const migrateUp = Effect.fn("Migrations.up")(function*(
  extensionId: string,
  directory: string | undefined,
  starting: (migration: MigrationFile) => Effect.Effect<void, unknown> = () => Effect.void
) {
  if (directory === undefined) return []
  const repo = yield* MigrationsRepo
  const recorded = new Set((yield* repo.listFor(extensionId)).map((row) => row.migration))
  const dialect = dialectOf(yield* SqlClient.SqlClient)
  const pending = (yield* discoverMigrations(directory, dialect)).filter((migration) => !recorded.has(migration.name))
  if (pending.length === 0) return []
  const batch = yield* repo.nextBatch(extensionId)
  for (const migration of pending) {
    yield* starting(migration).pipe(Effect.orDie)
    yield* runMigration(extensionId, migration, "up")
    yield* repo.record(extensionId, migration.name, batch)
  }
  return pending.map((migration) => migration.name)
})

/**
 * Rolls back every recorded migration of the extension in reverse order (batch desc, id desc), using the
 * files of `directory` (the installed tree). A recorded migration whose file is gone fails the rollback.
 */
export const migrateDownAll = Effect.fn("Migrations.downAll")(function*(
  extensionId: string,
  directory: string | undefined,
  starting: (migration: MigrationFile, batch: number) => Effect.Effect<void, unknown> = () => Effect.void
) {
  const repo = yield* MigrationsRepo
  const recorded = [...(yield* repo.listFor(extensionId))].sort((a, b) => b.batch - a.batch || b.id - a.id)
  if (recorded.length === 0) return []
  const dialect = dialectOf(yield* SqlClient.SqlClient)
  const files = new Map((directory === undefined ? [] : yield* discoverMigrations(directory, dialect)).map((m) => [m.name, m]))
  for (const row of recorded) {
    const migration = files.get(row.migration)
    if (migration === undefined) {
      return yield* new MigrationFailed({
        extensionId,
        migration: row.migration,
        direction: "down",
        detail: "its file is no longer in the installed extension; use --keep-data to remove the extension without rolling back"
      })
    }
    yield* starting(migration, row.batch).pipe(Effect.orDie)
    yield* runMigration(extensionId, migration, "down")
    yield* repo.forget(extensionId, row.migration)
  }
  return recorded.map((row) => row.migration)
})

/**
 * Rolls back the named recorded migrations of the extension, newest first, using the files of
 * `directory` (the installed tree): how a health gate takes an update's batch back (docs/operations.md).
 */
export const migrateDownNamed = Effect.fn("Migrations.downNamed")(function*(
  extensionId: string,
  directory: string | undefined,
  names: ReadonlyArray<string>
) {
  const repo = yield* MigrationsRepo
  const wanted = new Set(names)
  const recorded = [...(yield* repo.listFor(extensionId))]
    .filter((row) => wanted.has(row.migration))
    .sort((a, b) => b.batch - a.batch || b.id - a.id)
  const files = new Map((directory === undefined ? [] : yield* discoverMigrations(directory)).map((m) => [m.name, m]))
  for (const row of recorded) {
    const migration = files.get(row.migration)
    if (migration === undefined) {
      return yield* new MigrationFailed({ extensionId, migration: row.migration, direction: "down", detail: "its file is not in the installed extension" })
    }
    yield* runMigration(extensionId, migration, "down")
    yield* repo.forget(extensionId, row.migration)
  }
  return recorded.map((row) => row.migration)
})

/**
 * Undoes a batch that did not commit where DDL commits at once (MySQL/MariaDB; docs/decisions.md,
 * "Undoing a failed batch on MySQL"): the `down` of each started migration, newest first, and its
 * host_migrations row if one was kept. The newest may have failed halfway, so its down may fail too and
 * is only warned about. A failing down of a completed step is warned about and the rest still run when an
 * operation undoes its own batch (its own failure is what the caller reports); crash recovery passes
 * `strict`: there it stops and fails, keeping that step's row, because nothing else would ever say the
 * database kept its changes (DESIGN.md §23). A completed step with no row left was undone by an earlier
 * attempt and is skipped, so recovery can be run again once the database is fixed by hand. Where DDL is
 * transactional, the rollback already did this and nothing runs.
 */
export const undoMigrations = Effect.fn("Migrations.undo")(function*(
  extensionId: string,
  started: ReadonlyArray<MigrationFile>,
  options: { readonly strict?: boolean } = {}
) {
  const sql = yield* SqlClient.SqlClient
  if (transactionalDdl(sql) || started.length === 0) return []
  const repo = yield* MigrationsRepo
  const strict = options.strict === true
  const recorded = strict ? new Set((yield* repo.listFor(extensionId)).map((row) => row.migration)) : undefined
  const undone: Array<string> = []
  const newestFirst = [...started].reverse()
  for (const [index, migration] of newestFirst.entries()) {
    if (recorded !== undefined && index > 0 && !recorded.has(migration.name)) continue
    const result = yield* Effect.either(runMigration(extensionId, migration, "down"))
    if (result._tag === "Left") {
      if (strict && index > 0) {
        return yield* new MigrationFailed({
          extensionId,
          migration: migration.name,
          direction: "down",
          detail: result.left.detail
        })
      }
      yield* Effect.logWarning(
        index === 0
          ? `undoing ${migration.name} of ${extensionId} (the step that failed): ${result.left.message}`
          : `could not undo ${migration.name} of ${extensionId}; its changes stay in the database: ${result.left.message}`
      )
    } else {
      undone.push(migration.name)
    }
    yield* strict ? repo.forget(extensionId, migration.name) : Effect.ignore(repo.forget(extensionId, migration.name))
  }
  return undone
})

/**
 * The counterpart of undoMigrations for a remove that did not commit: the `up` of each migration whose
 * down started, oldest first, recorded again in its batch. Only where DDL commits at once.
 */
export const redoMigrations = Effect.fn("Migrations.redo")(function*(
  extensionId: string,
  reverted: ReadonlyArray<MigrationFile & { readonly batch: number }>
) {
  const sql = yield* SqlClient.SqlClient
  if (transactionalDdl(sql) || reverted.length === 0) return []
  const repo = yield* MigrationsRepo
  const recorded = new Set((yield* repo.listFor(extensionId)).map((row) => row.migration))
  const redone: Array<string> = []
  for (const migration of [...reverted].reverse()) {
    if (recorded.has(migration.name)) continue
    const result = yield* Effect.either(runMigration(extensionId, migration, "up"))
    if (result._tag === "Left") {
      yield* Effect.logWarning(`could not restore ${migration.name} of ${extensionId}: ${result.left.message}`)
      continue
    }
    yield* repo.record(extensionId, migration.name, migration.batch)
    redone.push(migration.name)
  }
  return redone
})
