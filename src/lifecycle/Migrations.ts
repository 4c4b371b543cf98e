import { FileSystem, Path } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Cause, Data, Effect } from "effect"
import { awaitableSql } from "../store/AwaitableSql.js"
import { MigrationsRepo } from "../store/MigrationsRepo.js"
import { ModuleLoader } from "./ModuleLoader.js"

// Per-extension migrations (docs/architecture.md "One install"): files of the migrations folder sorted by name; `.ts`/`.js`
// modules export `up(sql)`/`down(sql)` returning an Effect or a Promise, `.sql` files hold `-- up` and
// `-- down` sections. The caller runs a batch inside its transaction.

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
  /** The name recorded in host_migrations: the file name without its extension. */
  readonly name: string
  readonly file: string
}

/** The migration files of a folder, sorted by name (a missing folder has none). */
export const discoverMigrations = Effect.fn("Migrations.discover")(function*(directory: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  if (!(yield* fs.exists(directory))) return []
  const names = (yield* fs.readDirectory(directory)).filter((name) => migrationExtensions.includes(path.extname(name))).sort()
  return names.map((name): MigrationFile => ({ name: name.slice(0, -path.extname(name).length), file: path.join(directory, name) }))
})

/** Splits a `.sql` migration into its `-- up` and `-- down` statements (one statement per `;`-terminated line). */
export const parseSqlMigration = (text: string): { readonly up: ReadonlyArray<string>; readonly down: ReadonlyArray<string> } => {
  const sections: Record<"up" | "down" | "none", Array<string>> = { up: [], down: [], none: [] }
  let section: "up" | "down" | "none" = "none"
  for (const line of text.split(/\r?\n/)) {
    const marker = /^\s*--\s*(up|down)\b/i.exec(line)
    if (marker !== null) section = marker[1]!.toLowerCase() as "up" | "down"
    else sections[section].push(line)
  }
  const statements = (lines: ReadonlyArray<string>) =>
    lines
      .filter((line) => !/^\s*--/.test(line))
      .join("\n")
      .split(/;\s*(?:\n|$)/)
      .map((statement) => statement.trim())
      .filter((statement) => statement !== "")
  return { up: statements(sections.up), down: statements(sections.down) }
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
  if (migration.file.endsWith(".sql")) {
    const text = yield* fs.readFileString(migration.file).pipe(Effect.mapError((error) => fail(error.message)))
    for (const statement of parseSqlMigration(text)[direction]) {
      yield* sql.unsafe(statement).pipe(Effect.mapError((error) => fail(describeError(error))))
    }
    return
  }
  const loaded = yield* Effect.flatMap(ModuleLoader, (loader) => loader.load(migration.file)).pipe(
    Effect.mapError((error) => fail(error.detail))
  )
  yield* runModuleFunction(extensionId, migration, direction, loaded[direction])
})

/** Runs the folder's migrations not yet recorded for the extension, recording each in `batch`. */
export const migrateUp = Effect.fn("Migrations.up")(function*(extensionId: string, directory: string | undefined) {
  if (directory === undefined) return []
  const repo = yield* MigrationsRepo
  const recorded = new Set((yield* repo.listFor(extensionId)).map((row) => row.migration))
  const pending = (yield* discoverMigrations(directory)).filter((migration) => !recorded.has(migration.name))
  if (pending.length === 0) return []
  const batch = yield* repo.nextBatch(extensionId)
  for (const migration of pending) {
    yield* runMigration(extensionId, migration, "up")
    yield* repo.record(extensionId, migration.name, batch)
  }
  return pending.map((migration) => migration.name)
})

/**
 * Rolls back every recorded migration of the extension in reverse order (batch desc, id desc), using the
 * files of `directory` (the installed tree). A recorded migration whose file is gone fails the rollback.
 */
export const migrateDownAll = Effect.fn("Migrations.downAll")(function*(extensionId: string, directory: string | undefined) {
  const repo = yield* MigrationsRepo
  const recorded = [...(yield* repo.listFor(extensionId))].sort((a, b) => b.batch - a.batch || b.id - a.id)
  if (recorded.length === 0) return []
  const files = new Map((directory === undefined ? [] : yield* discoverMigrations(directory)).map((m) => [m.name, m]))
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
    yield* runMigration(extensionId, migration, "down")
    yield* repo.forget(extensionId, row.migration)
  }
  return recorded.map((row) => row.migration)
})
