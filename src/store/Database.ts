import type { FileSystem, Path } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { Context, Data, Effect, Layer, type Scope } from "effect"
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readSync, rmSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { HostConfig } from "../config/HostConfig.js"
import { statIfExists } from "../config/LocalFiles.js"
import { clientLayer, type DatabaseTarget, sqliteClient, dialectOfUrl, redactUrl, sqliteImage } from "./Dialect.js"
import { ensureSchema } from "./Schema.js"
import { beforeAnyChange, type StoreError, storeError } from "./StoreError.js"

/**
 * The database file exists but cannot be the panel's database: empty, unreadable, not SQLite, or
 * damaged. Nothing is created over it (docs/operations.md, "When the database is unreadable").
 */
export class DatabaseUnusable extends Data.TaggedError("DatabaseUnusable")<{
  readonly file: string
  readonly problem: "empty" | "unreadable" | "not-sqlite" | "damaged"
  readonly detail: string
}> {
  override get message() {
    const what = this.problem === "empty"
      ? "is empty (0 bytes)"
      : this.problem === "unreadable"
      ? `cannot be read (${this.detail})`
      : this.problem === "not-sqlite"
      ? "is not a SQLite database"
      : `is damaged (${this.detail})`
    const remedy = this.problem === "empty"
      ? "restore it from a backup, or run the command again with --init-database to create empty framework tables in it on purpose"
      : this.problem === "unreadable"
      ? "give this user read and write access to it, or restore it from a backup"
      : "restore it from a backup (docs/operations.md); nothing was written to it"
    return `the database ${this.file} ${what}: ${remedy}`
  }
}

/** Whether an empty existing database file may be given the framework tables (`--init-database`). */
export class DatabaseInitialisation extends Context.Reference<DatabaseInitialisation>()("host/store/DatabaseInitialisation", {
  defaultValue: () => ({ allowEmpty: false })
}) {}

const sqliteHeader = "SQLite format 3\u0000"

/** SQLite's own words for a damaged or foreign file, as the driver reports them. */
export const isDamagedDatabase = (error: unknown): boolean => {
  const text = `${String((error as { message?: unknown })?.message ?? "")} ${String((error as { cause?: { message?: unknown } })?.cause?.message ?? "")} ${String((error as { code?: unknown })?.code ?? "")}`
  return /malformed|file is not a database|SQLITE_CORRUPT|SQLITE_NOTADB/i.test(text)
}

/** Reads the first 16 bytes: the SQLite header, or why the file cannot be used. */
const checkExisting = (filename: string, size: number, allowEmpty: boolean): Effect.Effect<void, DatabaseUnusable> =>
  Effect.suspend(() => {
    let head: string
    try {
      const fd = openSync(filename, "r")
      try {
        const buffer = Buffer.alloc(16)
        const read = readSync(fd, buffer, 0, 16, 0)
        head = buffer.subarray(0, read).toString("latin1")
      } finally {
        closeSync(fd)
      }
    } catch (error) {
      return Effect.fail(new DatabaseUnusable({ file: filename, problem: "unreadable", detail: (error as NodeJS.ErrnoException).code ?? String(error) }))
    }
    if (size === 0) return allowEmpty ? Effect.void : Effect.fail(new DatabaseUnusable({ file: filename, problem: "empty", detail: "" }))
    if (head !== sqliteHeader) return Effect.fail(new DatabaseUnusable({ file: filename, problem: "not-sqlite", detail: "" }))
    return Effect.void
  })

/**
 * Creates a missing database file whole: the framework tables are made in memory, written to a private
 * file (synced) that is then linked into place (an atomic create that never replaces anything), so no
 * other process ever sees a half-made, empty file (which it would rightly refuse). The file work is
 * synchronous, like the checks before it: a fresh panel's first command should not start the thread
 * pool for a few small writes (docs/architecture.md, "Startup").
 */
const createAtomically = (filename: string) =>
  Effect.flatMap(Effect.mapError(sqliteImage(ensureSchema), storeError(`creating ${filename}`)), (bytes) =>
    Effect.try({
      try: () => {
        const creating = `${filename}.${process.pid}-${Math.random().toString(36).slice(2, 10)}.creating`
        try {
          const fd = openSync(creating, "wx")
          try {
            writeFileSync(fd, bytes)
            fsyncSync(fd)
          } finally {
            closeSync(fd)
          }
          try {
            linkSync(creating, filename)
          } catch (error) {
            // Another process created it meanwhile: theirs is as good as ours.
            if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
          }
        } finally {
          rmSync(creating, { force: true })
        }
      },
      catch: storeError(`creating ${filename}`)
    }))

/**
 * Makes sure a SQLite file can be opened: a missing file is created whole with the framework tables
 * (true: nothing left to check); an existing one must be a readable SQLite database (an empty one only
 * with `--init-database`), so a truncated or foreign file is never silently given a fresh, empty schema.
 */
const prepareSqliteFile = (filename: string): Effect.Effect<boolean, StoreError | DatabaseUnusable> =>
  Effect.gen(function*() {
    if (filename === ":memory:") return false
    const info = yield* statIfExists(filename)
    if (info !== undefined) {
      const { allowEmpty } = yield* DatabaseInitialisation
      yield* checkExisting(filename, info.size, allowEmpty)
      return false
    }
    yield* Effect.try({
      try: () => mkdirSync(dirname(filename), { recursive: true }),
      catch: storeError(`creating the folder of ${filename}`)
    })
    yield* createAtomically(filename)
    return true
  })

/** A SQLite client for a file or `:memory:`, the file guarded or created as prepareSqliteFile says. */
export const sqliteLayer = (filename: string): Layer.Layer<SqlClient.SqlClient, StoreError | DatabaseUnusable, FileSystem.FileSystem | Path.Path> =>
  Layer.scopedContext(Effect.zipRight(prepareSqliteFile(filename), sqliteClient(filename)))

/** The database a `database` setting names (`file` is the SQLite file it resolves to inside the root). */
export const targetOf = (database: string, file: string): DatabaseTarget => {
  const dialect = dialectOfUrl(database)
  return dialect === "mysql" || dialect === "pg" ? { dialect, url: database } : { dialect: "sqlite", file }
}

/** How a failure names the database: a server's URL without its password, or the SQLite file. */
const labelOf = (target: DatabaseTarget) => target.dialect === "sqlite" ? target.file : redactUrl(target.url)

const schemaOutcome = "no extension was changed; the framework tables are completed on the next run"

/** Makes the framework tables on a client for `target`, failing as a damaged file or a store error. */
const schemaOn = (target: DatabaseTarget) =>
  ensureSchema.pipe(
    Effect.mapError((error) =>
      target.dialect === "sqlite" && isDamagedDatabase(error)
        ? new DatabaseUnusable({ file: target.file, problem: "damaged", detail: String(error.cause instanceof Error ? error.cause.message : error.message) })
        // Making the tables comes before any command changes anything; they are created with IF NOT EXISTS,
        // so a cut while creating them is finished by the next run.
        : beforeAnyChange(labelOf(target), schemaOutcome)(storeError("creating the framework tables")(error))
    )
  )

/**
 * A client for `target` with the framework schema in place, made in the caller's scope: a SQLite file is
 * guarded or created as prepareSqliteFile says, and a file this process just created holds the whole schema
 * already (or another process's copy, made the same way), so checking it again would cost a fresh panel's
 * first command for nothing. SQLite's client is made without a layer build (docs/decisions.md "P1: the
 * stack's floor").
 */
const openTarget = (
  target: DatabaseTarget
): Effect.Effect<Context.Context<SqlClient.SqlClient>, StoreError | DatabaseUnusable, FileSystem.FileSystem | Path.Path | Scope.Scope> =>
  target.dialect !== "sqlite"
    ? Layer.build(Layer.provideMerge(Layer.effectDiscard(schemaOn(target)), clientLayer(target)))
    : Effect.gen(function*() {
      const created = yield* prepareSqliteFile(target.file)
      const client = yield* sqliteClient(target.file)
      if (!created) yield* Effect.provide(schemaOn(target), client)
      return client
    })

/** The database of the `database` setting with the framework schema in place, opened in the caller's scope. */
export const open: Effect.Effect<
  Context.Context<SqlClient.SqlClient>,
  StoreError | DatabaseUnusable,
  HostConfig | FileSystem.FileSystem | Path.Path | Scope.Scope
> = Effect.flatMap(HostConfig, ({ config, paths }) => openTarget(targetOf(config.database, paths.databaseFile)))

/** A client for `target` with the framework schema in place (a SQLite file guarded as sqliteLayer says). */
export const layerFor = (
  target: DatabaseTarget
): Layer.Layer<SqlClient.SqlClient, StoreError | DatabaseUnusable, FileSystem.FileSystem | Path.Path> => Layer.scopedContext(openTarget(target))

/** The database of the `database` setting with the framework schema in place. */
export const layer: Layer.Layer<SqlClient.SqlClient, StoreError | DatabaseUnusable, HostConfig | FileSystem.FileSystem | Path.Path> = Layer
  .scopedContext(open)
