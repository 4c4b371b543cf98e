import { SqlClient, SqlError, type Statement } from "@effect/sql"
import { Context, Effect, FiberRef, Option, type Tracer } from "effect"

// A read the server makes on every request (an extension route's settings, the admin list). On a request
// fiber the tracer is off (http/Server.ts), and there two things such a read paid for served nothing
// (docs/decisions.md "Extension routes copy the request's context less"):
// - its span: with the tracer off `withSpan` makes a no-op span, yet still copies the fiber's whole
//   context (~38 services on a request) to make that span the parent of a statement that exports nothing;
// - the request's context itself: @effect/sql runs each statement in `Effect.scoped`, which copies the
//   context once more to add the statement's Scope. The statement needs none of those services — its
//   connection comes from the SqlClient it was made with; the only one it looks for is an open
//   transaction's connection — so outside a transaction the read runs with an empty context, and that
//   copy is of an empty map.
// With the tracer on (the CLI's commands), or inside a transaction, the read runs exactly as before.
//
// Under SQLite such a read's statement is run on a read-only connection of its own (`ReadConnection`,
// below) rather than through @effect/sql's statement: that path (a span, a scope, the connection's
// semaphore, its prepared-statement Cache) cost the request ~50 KB of garbage and more CPU than the rest
// of a settings-reading route (docs/decisions.md "R4: per-request reads on a read connection").

const empty = Context.empty()
const toEmpty = (): Context.Context<never> => empty

/** How a per-request read is named where spans are traced (none: it makes no span of its own). */
export interface PerRequestReadOptions {
  readonly span?: string
  readonly spanOptions?: Tracer.SpanOptions
  /**
   * The read connection its statement runs on (`onReadConnection`): with one, the read needs no empty
   * context, which would cost a copy of the fiber's refs, as its statement does not run in @effect/sql.
   */
  readonly reads?: Option.Option<ReadConnectionService>
}

/**
 * `self` under its span (if named) where spans are traced; else with no span and, outside a transaction,
 * no services (or as it is, when its statement runs on the read connection).
 */
export const perRequestRead = (options: PerRequestReadOptions = {}) => <A, E>(self: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.withFiberRuntime<A, E>((fiber) => {
    if (fiber.getFiberRef(FiberRef.currentTracerEnabled)) {
      return options.span === undefined ? self : Effect.withSpan(self, options.span, options.spanOptions)
    }
    return Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)._tag === "Some" || options.reads?._tag === "Some"
      ? self
      : Effect.mapInputContext<A, E, never, never>(self, toEmpty)
  })

/**
 * A read-only connection to the SQLite file the SqlClient writes (store/Dialect.ts `sqliteClient`): runs a
 * compiled SELECT synchronously and answers its rows, or `undefined` when it cannot be used (not opened),
 * so the caller runs the statement as before.
 */
export interface ReadConnectionService {
  readonly all: (sql: string, params: ReadonlyArray<unknown>) => ReadonlyArray<unknown> | undefined
}

export class ReadConnection extends Context.Tag("host/store/ReadConnection")<ReadConnection, ReadConnectionService>() {}

/** The read connection of the SqlClient being built with, if it has one (SQLite files only). */
export const readConnection: Effect.Effect<Option.Option<ReadConnectionService>> = Effect.serviceOption(ReadConnection)

/**
 * `statement` on the read connection where a per-request read runs with no span and no transaction (a
 * request fiber: the tracer off, see perRequestRead); anywhere else, or without a read connection, the
 * statement as it is. WAL lets the second connection read while the first writes, and a read sees what was
 * committed when it ran, by this process or another — as the statement would once it had the connection.
 */
export const onReadConnection = <A>(reads: Option.Option<ReadConnectionService>, statement: Statement.Statement<A>): Effect.Effect<ReadonlyArray<A>, SqlError.SqlError> =>
  reads._tag === "None" ? statement : Effect.withFiberRuntime<ReadonlyArray<A>, SqlError.SqlError>((fiber) => {
    if (fiber.getFiberRef(FiberRef.currentTracerEnabled)) return statement
    if (Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)._tag === "Some") return statement
    const [sql, params] = statement.compile()
    let rows: ReadonlyArray<unknown> | undefined
    try {
      rows = reads.value.all(sql, params)
    } catch (cause) {
      return Effect.fail(new SqlError.SqlError({ cause, message: "Failed to execute statement" }))
    }
    return rows === undefined ? statement : Effect.succeed(rows as ReadonlyArray<A>)
  })
