import { FileSystem, Path } from "@effect/platform"
import { SqlClient, type Statement } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import * as Reactivity from "@effect/experimental/Reactivity"
import type { SqliteClient as SqliteClientTag } from "@effect/sql-sqlite-node/SqliteClient"
import { Cause, Context, Effect, Layer, Option, Redacted, type Scope } from "effect"
import type pgTypes from "pg-types"
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import { ReadConnection, type ReadConnectionService } from "./PerRequestRead.js"
import { nothingChanged, StoreError, storeError } from "./StoreError.js"

// Everything the store knows about the three database dialects lives here (docs/operations.md,
// "Running on MySQL/MariaDB or PostgreSQL, and replicas"): which URL means which client, the column types of
// the four tables, how a write transaction and the schema lock are taken. Repositories write one SQL for all.

export type DialectName = "sqlite" | "mysql" | "pg"

/** Where the framework's database is: a SQLite file (or `:memory:`), or a database server's URL. */
export type DatabaseTarget =
  | { readonly dialect: "sqlite"; readonly file: string }
  | { readonly dialect: "mysql" | "pg"; readonly url: string }

/** The dialect a `database` URL names, or undefined for a URL that is none of them. */
export const dialectOfUrl = (url: string): DialectName | undefined => {
  if (url.startsWith("sqlite:")) return "sqlite"
  if (/^(mysql|mariadb):\/\//i.test(url)) return "mysql"
  if (/^(postgres|postgresql):\/\//i.test(url)) return "pg"
  return undefined
}

/** The URL with its password replaced by `***`, fit for messages and logs. */
export const redactUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password === "") return url
    parsed.password = "***"
    return parsed.toString()
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, "//$1:***@")
  }
}

/** A connection failure as a StoreError naming the URL without its password (nor the password anywhere). */
const connectFailure = (url: string) => (cause: unknown): StoreError => {
  const root = (cause as { cause?: unknown } | undefined)?.cause ?? cause
  const errors = (root as { errors?: ReadonlyArray<unknown> } | undefined)?.errors
  // Several refused addresses come as an AggregateError with an empty message and its reasons in `errors`.
  const reason = root instanceof Error && root.message !== ""
    ? root.message
    : errors !== undefined && errors.length > 0
    ? errors.map((error) => (error instanceof Error ? error.message : String(error))).join("; ")
    : String((root as { code?: unknown } | undefined)?.code ?? root)
  let password = ""
  try {
    password = decodeURIComponent(new URL(url).password)
  } catch {
    // an unparsable URL: the driver said so, and there is no password to hide
  }
  const safe = password === "" ? reason : reason.split(password).join("***")
  return new StoreError({ operation: `connecting to ${redactUrl(url)}`, cause: new Error(safe), outcome: nothingChanged })
}

/**
 * The SQLite client for a file (its folder created) or `:memory:`, under both of its tags, made in the
 * caller's scope once the driver's module is loaded: what SqliteClient.layer gives, without its three layer
 * builds (each a memoised build of its own, docs/decisions.md "P1: the stack's floor").
 */
export const sqliteClient = (
  file: string
): Effect.Effect<Context.Context<SqliteClientTag | SqlClient.SqlClient>, StoreError, Scope.Scope> =>
  Effect.gen(function*() {
    // better-sqlite3 is the client's own driver (already loaded with it), for the read connection below.
    const [{ SqliteClient }, { default: Database }] = yield* Effect.promise(() => Promise.all([import("@effect/sql-sqlite-node"), import("better-sqlite3")]))
    if (file !== ":memory:") {
      // Synchronous, like the other checks a command makes while it starts (docs/architecture.md, "Startup").
      yield* Effect.try({
        try: () => mkdirSync(dirname(file), { recursive: true }),
        catch: storeError(`creating the folder of ${file}`)
      })
    }
    // better-sqlite3 throws when the file cannot be opened, which the client lets through as a defect: it
    // is the database being unavailable, so it fails as a StoreError like any other.
    const client = yield* Effect.flatMap(Reactivity.make, (reactivity) =>
      SqliteClient.make({ filename: file }).pipe(Effect.provideService(Reactivity.Reactivity, reactivity))).pipe(
        Effect.catchAllCause((cause) => Effect.fail(storeError(`opening ${file}`)(Cause.squash(cause))))
      )
    const services = Context.make(SqliteClient.SqliteClient, client).pipe(Context.add(SqlClient.SqlClient, client))
    if (file === ":memory:") return services
    // A second connection for the reads a server makes on every request (store/PerRequestRead.ts): the
    // file is opened on the first such read.
    const open = (path: string): ReadDatabase => {
      const database = new Database(path, { readonly: true, fileMustExist: true })
      return { prepare: (sql) => database.prepare<Array<unknown>>(sql), close: () => database.close() }
    }
    const reads = yield* Effect.acquireRelease(Effect.sync(() => makeReadConnection(file, open)), (reads) => Effect.sync(reads.close))
    // Not in the type: the repositories take it where it is (`Effect.serviceOption`), and only SQLite files have one.
    return Context.add(services, ReadConnection, reads)
  })

/** What a read connection needs of better-sqlite3 (a narrow view, so a test can count what it does). */
interface ReadDatabase {
  readonly prepare: (sql: string) => { readonly reader: boolean; readonly all: (...params: Array<unknown>) => ReadonlyArray<unknown> }
  readonly close: () => unknown
}

/**
 * A read-only connection to `file`, opened on the first read. If it cannot be opened it is not used again
 * (each read answers `undefined`, and its caller runs the statement on the client's connection); a
 * statement that fails to prepare or run fails that read, as it would on the client. Prepared statements
 * are kept per SQL text (a few fixed texts; at most 64, then it starts again).
 */
export const makeReadConnection = (file: string, open: (file: string) => ReadDatabase): ReadConnectionService & { readonly close: () => void } => {
  let database: ReadDatabase | undefined
  let unusable = false
  const prepared = new Map<string, ReturnType<ReadDatabase["prepare"]>>()
  return {
    all: (sql, params) => {
      if (unusable) return undefined
      if (database === undefined) {
        try {
          database = open(file)
        } catch {
          unusable = true
          return undefined
        }
      }
      let statement = prepared.get(sql)
      if (statement === undefined) {
        statement = database.prepare(sql)
        // Only reads belong here; anything else goes to the client's connection.
        if (!statement.reader) return undefined
        if (prepared.size >= 64) prepared.clear()
        prepared.set(sql, statement)
      }
      return statement.all(...params)
    },
    close: () => {
      prepared.clear()
      database?.close()
      database = undefined
    }
  }
}

/** sqliteClient as a layer: one layer build. */
export const sqliteClientLayer = (file: string): Layer.Layer<SqliteClientTag | SqlClient.SqlClient, StoreError> =>
  Layer.scopedContext(sqliteClient(file))

/**
 * The SQL client of a target: the file's folder is created for SQLite; a server is connected to at once.
 * Each dialect's driver is imported only when its client is built: mysql2 and pg (with the fetch
 * implementation pg pulls in) cost a SQLite command about a third of its cold start
 * (docs/architecture.md, "Startup").
 */
export const clientLayer = (
  target: DatabaseTarget
): Layer.Layer<SqlClient.SqlClient, StoreError, FileSystem.FileSystem | Path.Path> => {
  switch (target.dialect) {
    case "sqlite":
      return sqliteClientLayer(target.file)
    case "mysql": {
      // mysql2 knows only mysql://; MariaDB speaks the same protocol.
      const url = new URL(target.url.replace(/^mariadb:/i, "mysql:"))
      return Layer.unwrapEffect(Effect.map(Effect.promise(() => import("@effect/sql-mysql2")), ({ MysqlClient }) => MysqlClient.layer({
        host: url.hostname,
        port: url.port === "" ? 3306 : Number(url.port),
        database: decodeURIComponent(url.pathname.slice(1)),
        username: decodeURIComponent(url.username),
        ...(url.password === "" ? {} : { password: Redacted.make(decodeURIComponent(url.password)) }),
        maxConnections: 8,
        poolConfig: {
          connectTimeout: 5000,
          // JSON columns come back as their text, as on the other dialects (repositories decode it once).
          jsonStrings: true
        }
      }))).pipe(Layer.mapError(connectFailure(target.url)))
    }
    case "pg": {
      const modules = Effect.promise(() => Promise.all([import("@effect/sql-pg"), import("pg-types")]))
      return Layer.unwrapEffect(Effect.map(modules, ([{ PgClient }, { default: types }]) =>
        PgClient.layer({
          url: Redacted.make(target.url),
          maxConnections: 8,
          connectTimeout: "5 seconds",
          // JSON columns come back as their text, as on the other dialects (repositories decode it once).
          types: { getTypeParser: jsonAsText(types) }
        }))).pipe(Layer.mapError(connectFailure(target.url)))
    }
  }
}

/**
 * The bytes of a new SQLite database file holding what `fill` writes, made in memory: no journal, WAL
 * or checkpoint on disk while it is made, which is most of what creating a panel's database costs its
 * first command. The file is marked as being in WAL mode (bytes 18 and 19 of the header are 2, what
 * `PRAGMA journal_mode = WAL` writes; https://www.sqlite.org/fileformat2.html#database_header), so it
 * starts in the mode every client opens it in.
 */
export const sqliteImage = <E, R>(
  fill: Effect.Effect<void, E, R | SqlClient.SqlClient>
): Effect.Effect<Uint8Array, E | StoreError | SqlError, Exclude<R, SqlClient.SqlClient>> =>
  Effect.scoped(
    Effect.gen(function*() {
      const { SqliteClient } = yield* Effect.promise(() => import("@effect/sql-sqlite-node"))
      // The client itself, not its layer: a layer build costs the run loop more than the client does.
      const client = yield* Effect.flatMap(Reactivity.make, (reactivity) =>
        SqliteClient.make({ filename: ":memory:", disableWAL: true }).pipe(Effect.provideService(Reactivity.Reactivity, reactivity))).pipe(
          Effect.catchAllCause((cause) => Effect.fail(storeError("opening an in-memory database")(Cause.squash(cause))))
        )
      yield* Effect.provideService(fill, SqlClient.SqlClient, client)
      const bytes = yield* client.export
      bytes[18] = 2
      bytes[19] = 2
      return bytes
    })
  )

// PostgreSQL type ids: json 114 and jsonb 3802 stay text (extension tables may use them); int8 20
// (COUNT, SUM) becomes a number, as the other drivers return it.
const jsonAsText = (types: typeof pgTypes) =>
  ((oid: number, format: "text" | "binary" = "text") => {
    if (oid === 114 || oid === 3802) return (value: string) => value
    if (oid === 20) return (value: string) => Number(value)
    return format === "binary" ? types.getTypeParser(oid, "binary") : types.getTypeParser(oid, "text")
  }) as typeof pgTypes.getTypeParser


/** Column types of the framework tables, per dialect (the tables themselves are written once, in Schema). */
export interface ColumnTypes {
  /** An auto-increment integer primary key (read back as a number on every dialect). */
  readonly id: string
  /** A required JSON document (with its NOT NULL): stored as JSON, read back as text everywhere. */
  readonly json: (column: string) => string
  readonly bool: string
  /** A UTC instant as ISO-8601 text with milliseconds, which sorts as time does on every dialect. */
  readonly timestamp: string
  /** After a CREATE TABLE's closing parenthesis. */
  readonly tableOptions: string
}

export const columnTypes = (dialect: DialectName): ColumnTypes => {
  switch (dialect) {
    case "sqlite":
      return { id: "INTEGER PRIMARY KEY", json: (column) => `TEXT NOT NULL CHECK (json_valid(${column}))`, bool: "BOOLEAN", timestamp: "VARCHAR(32)", tableOptions: "" }
    case "mysql":
      // What MariaDB's JSON type is; MySQL 8's native JSON would compare with text by JSON rules instead.
      return {
        id: "INTEGER AUTO_INCREMENT PRIMARY KEY",
        json: (column) => `LONGTEXT NOT NULL CHECK (JSON_VALID(${column}))`,
        bool: "BOOLEAN",
        timestamp: "VARCHAR(32)",
        // Ids and keys compare exactly, as on the other dialects (the server default collation ignores case).
        tableOptions: " DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
      }
    case "pg":
      return {
        id: "SERIAL PRIMARY KEY",
        // Text as written (jsonb would reorder keys and respace); the check refuses what is not JSON.
        json: (column) => `TEXT NOT NULL CHECK ((${column})::json IS NOT NULL)`,
        bool: "BOOLEAN",
        timestamp: "VARCHAR(32)",
        tableOptions: ""
      }
  }
}

/** The dialect of a client. */
export const dialectOf = (sql: SqlClient.SqlClient): DialectName =>
  sql.onDialectOrElse({ sqlite: () => "sqlite" as const, mysql: () => "mysql" as const, pg: () => "pg" as const, orElse: () => "sqlite" as const })

/**
 * Runs `effect` while this process alone changes the framework schema. SQLite: inside a transaction that
 * takes the write lock first. PostgreSQL: a transaction-scoped advisory lock (DDL is transactional there).
 * MySQL/MariaDB: a named lock (GET_LOCK) on the transaction's connection, since DDL commits implicitly.
 */
export const withSchemaLock = <A, E, R>(
  sql: SqlClient.SqlClient,
  name: string,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | SqlError, R> => {
  switch (dialectOf(sql)) {
    case "sqlite":
      return writeTransaction(sql, effect)
    case "pg":
      return transactionFailuresTyped(sql.withTransaction(Effect.zipRight(sql`SELECT pg_advisory_xact_lock(hashtext(${name}))`, effect)))
    case "mysql":
      return onOneConnection(
        sql,
        Effect.acquireUseRelease(
          sql`SELECT GET_LOCK(${name}, 60) AS taken`,
          () => effect,
          () => Effect.ignore(sql`SELECT RELEASE_LOCK(${name})`)
        )
      )
  }
}

/**
 * Runs `effect` with every statement on one reserved connection, outside a transaction (MySQL's named
 * locks belong to a session). A transaction started inside uses a savepoint on that connection.
 */
const onOneConnection = <A, E, R>(sql: SqlClient.SqlClient, effect: Effect.Effect<A, E, R>) =>
  Effect.scoped(
    Effect.flatMap(sql.reserve, (connection) =>
      Effect.provideService(effect, SqlClient.TransactionConnection, [connection, 0] as const))
  )

/**
 * `sql.withTransaction` that takes SQLite's write lock as its first statement. A deferred SQLite
 * transaction that reads first and writes later fails with "database is locked" at once (no busy
 * wait) when another process committed in between; a write as the first statement waits for the
 * lock with the busy timeout instead. The server dialects lock rows as they go and need nothing.
 */
export const writeTransaction = <A, E, R>(
  sql: SqlClient.SqlClient,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | SqlError, R> =>
  transactionFailuresTyped(sql.withTransaction(
    Effect.zipRight(
      sql.onDialectOrElse({
        sqlite: () => Effect.asVoid(sql`UPDATE host_migrations SET batch = batch WHERE 1 = 0`),
        orElse: () => Effect.void
      }),
      effect
    )
  ))

/**
 * @effect/sql ends a transaction with `orDie` on COMMIT and ROLLBACK (and savepoints): when the connection
 * is cut mid-operation, the ROLLBACK fails too and the SqlError became a defect — the CLI's "unexpected
 * failure: Failed to execute statement" (docs/decisions.md "Database cuts"). The first failure is kept when
 * there is one; otherwise an SqlError defect becomes the typed failure, so the operation names the
 * database, its step and what was changed like every other database failure.
 */
export const transactionFailuresTyped = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
  Effect.catchAllCause(effect, (cause): Effect.Effect<never, E | SqlError> => {
    const failure = Cause.failureOption(cause)
    if (Option.isSome(failure)) return Effect.fail(failure.value)
    const sqlDefect = Cause.find(cause, (reason) =>
      Cause.isDieType(reason) && reason.defect instanceof SqlError ? Option.some(reason.defect) : Option.none())
    return Option.isSome(sqlDefect) ? Effect.fail(sqlDefect.value) : Effect.failCause(cause)
  })

/** Whether the dialect undoes DDL on rollback (MySQL and MariaDB commit each DDL statement at once). */
export const transactionalDdl = (sql: SqlClient.SqlClient): boolean => dialectOf(sql) !== "mysql"

/**
 * Inside a write transaction, after statements that may have been DDL: where DDL commits at once
 * (MySQL/MariaDB) the connection is left in autocommit, so a new transaction begins here and the record
 * writes that follow stay all-or-nothing. Elsewhere nothing happens.
 */
export const afterDdl = (sql: SqlClient.SqlClient): Effect.Effect<void, SqlError> =>
  transactionalDdl(sql) ? Effect.void : Effect.asVoid(sql.unsafe("START TRANSACTION").unprepared)

/**
 * One statement that inserts a row or, when its `key` columns name a row already there, updates that
 * row's `update` columns (columns left out, such as created_at, keep what was first inserted). Reading
 * first and then choosing INSERT or UPDATE races with another process between the two; this does not.
 * SQLite and PostgreSQL say ON CONFLICT … DO UPDATE, MySQL/MariaDB ON DUPLICATE KEY UPDATE.
 */
export const upsert = (
  sql: SqlClient.SqlClient,
  table: string,
  row: Readonly<Record<string, unknown>>,
  key: ReadonlyArray<string>,
  update: ReadonlyArray<string>
): Statement.Statement<object> => {
  const mysql = dialectOf(sql) === "mysql"
  const assignments = update.map((column) =>
    mysql ? sql`${sql(column)} = VALUES(${sql(column)})` : sql`${sql(column)} = excluded.${sql(column)}`
  )
  const onConflict = mysql
    ? sql`ON DUPLICATE KEY UPDATE`
    : sql`ON CONFLICT (${sql.csv(key.map((column) => sql`${sql(column)}`))}) DO UPDATE SET`
  return sql`INSERT INTO ${sql(table)} ${sql.insert(row)} ${onConflict} ${sql.csv(assignments)}`
}
