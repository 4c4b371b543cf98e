import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

/**
 * `sql.withTransaction` that takes SQLite's write lock as its first statement. A deferred SQLite
 * transaction that reads first and writes later fails with "database is locked" at once (no busy
 * wait) when another process committed in between; a write as the first statement waits for the
 * lock with the busy timeout instead. Other dialects lock rows as they go and need nothing.
 */
export const writeTransaction = <A, E, R>(
  sql: SqlClient.SqlClient,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | SqlError, R> =>
  sql.withTransaction(
    Effect.zipRight(
      sql.onDialectOrElse({
        sqlite: () => Effect.asVoid(sql`UPDATE host_migrations SET batch = batch WHERE 1 = 0`),
        orElse: () => Effect.void
      }),
      effect
    )
  )
