import type { SqlClient } from "@effect/sql"
import { Effect, Runtime } from "effect"
import type { Sql } from "@host/sdk/server"

/**
 * The SqlClient handed to extension code (migrations, route handlers). It is the framework's client,
 * and its statements are Effects as usual; they can also be awaited, running on `runtime` (so inside
 * the caller's transaction). Without this, `await sql\`…\`` in an async migration would resolve to the
 * unrun statement and silently do nothing.
 */
export const awaitableSql = (sql: SqlClient.SqlClient, runtime: Runtime.Runtime<never>): SqlClient.SqlClient & Sql => {
  const run = Runtime.runPromise(runtime)
  const awaitable = (value: unknown): unknown => {
    if (!Effect.isEffect(value)) return value
    const statement = value as Effect.Effect<unknown, unknown>
    return Object.defineProperty(statement, "then", {
      configurable: true,
      value: (onFulfilled?: (rows: unknown) => unknown, onRejected?: (error: unknown) => unknown) =>
        run(statement).then(onFulfilled, onRejected)
    })
  }
  const client = new Proxy(sql, {
    apply: (target, self, args) => awaitable(Reflect.apply(target, self, args)),
    get: (target, key) => {
      const value: unknown = Reflect.get(target, key)
      return key === "unsafe" && typeof value === "function"
        ? (...args: Array<unknown>) => awaitable(Reflect.apply(value, target, args))
        : value
    }
  })
  return client as SqlClient.SqlClient & Sql
}
