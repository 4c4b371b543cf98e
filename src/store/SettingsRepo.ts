import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Option, Schema } from "effect"
import { upsert } from "./Dialect.js"
import { storeError } from "./StoreError.js"
import { onFirstCall } from "../domain/OnFirstCall.js"
import { onReadConnection, perRequestRead, readConnection } from "./PerRequestRead.js"

const SettingRow = Schema.Struct({ key: Schema.String, value: Schema.parseJson() })
// Synchronous: an Either is an Effect, and one step on the request fiber instead of a decoding fiber's worth.
const decodeRows = onFirstCall(() => Schema.decodeUnknownEither(Schema.Array(SettingRow)))
// The reads an extension route makes on every request name their span without its call site: Effect takes
// a span's stack trace (an Error) when `withSpan` is called, even where the tracer is off, as it is for
// request fibers (http/Server.ts), so each read paid for a trace nothing read (docs/decisions.md "R4's tail");
// and where the tracer is off they make no span and copy no context (store/PerRequestRead.ts).
const perRequestSpan = { captureStackTrace: false } as const

/** host_settings: JSON values per extension and key (framework rows belong to `host/core`). */
/** What SettingsRepo is made of: the store's services are built together (store/Services.ts). */
export const makeSettingsRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const reads = yield* readConnection

  const getAll = (extensionId: string) =>
    onReadConnection(reads, sql`SELECT ${sql("key")}, value FROM host_settings WHERE extension_id = ${extensionId} ORDER BY ${sql("key")}`).pipe(
      Effect.flatMap(decodeRows),
      Effect.map((rows): Record<string, unknown> => Object.fromEntries(rows.map((row) => [row.key, row.value]))),
      Effect.mapError(storeError(`reading settings of ${extensionId}`)),
      perRequestRead({ span: "SettingsRepo.getAll", spanOptions: perRequestSpan, reads })
    )

  /** Every extension's settings at once, by extension id (framework rows included). */
  const getEverything = sql`SELECT extension_id, ${sql("key")}, value FROM host_settings ORDER BY extension_id, ${sql("key")}`.pipe(
    Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ extension_id: Schema.String, key: Schema.String, value: Schema.parseJson() })))),
    Effect.map((rows) => {
      const byExtension = new Map<string, Record<string, unknown>>()
      for (const row of rows) {
        const values = byExtension.get(row.extension_id) ?? {}
        values[row.key] = row.value
        byExtension.set(row.extension_id, values)
      }
      return byExtension as ReadonlyMap<string, Readonly<Record<string, unknown>>>
    }),
    Effect.mapError(storeError("reading all settings")),
    Effect.withSpan("SettingsRepo.getEverything")
  )

  const get = (extensionId: string, key: string) =>
    onReadConnection(reads, sql`SELECT ${sql("key")}, value FROM host_settings WHERE extension_id = ${extensionId} AND ${sql("key")} = ${key}`).pipe(
      Effect.flatMap(decodeRows),
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => row.value)),
      Effect.mapError(storeError(`reading setting ${key} of ${extensionId}`)),
      perRequestRead({ span: "SettingsRepo.get", spanOptions: perRequestSpan, reads })
    )

  /** Writes one value in one statement (created_at kept when it replaces one). */
  const put = (extensionId: string, key: string, value: unknown) => {
    return Effect.flatMap(Effect.map(DateTime.now, DateTime.formatIso), (now) =>
      upsert(
        sql,
        "host_settings",
        { extension_id: extensionId, key, value: JSON.stringify(value), created_at: now, updated_at: now },
        ["extension_id", "key"],
        ["value", "updated_at"]
      )
    ).pipe(
      Effect.asVoid,
      Effect.mapError(storeError(`saving setting ${key} of ${extensionId}`)),
      Effect.withSpan("SettingsRepo.put")
    )
  }

  const remove = (extensionId: string, key: string) =>
    sql`DELETE FROM host_settings WHERE extension_id = ${extensionId} AND ${sql("key")} = ${key}`.pipe(
      Effect.asVoid,
      Effect.mapError(storeError(`deleting setting ${key} of ${extensionId}`)),
      Effect.withSpan("SettingsRepo.remove")
    )

  const removeAll = (extensionId: string) =>
    sql`DELETE FROM host_settings WHERE extension_id = ${extensionId}`.pipe(
      Effect.asVoid,
      Effect.mapError(storeError(`deleting settings of ${extensionId}`)),
      Effect.withSpan("SettingsRepo.removeAll")
    )

  return { getAll, getEverything, get, put, remove, removeAll } as const
})

export class SettingsRepo extends Effect.Service<SettingsRepo>()("host/SettingsRepo", { effect: makeSettingsRepo }) {}
