import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Schema } from "effect"
import { ActivityAction, type ActivityRecord } from "../domain/Installed.js"
import { storeError } from "./StoreError.js"
import { onFirstCall } from "../domain/OnFirstCall.js"

const ActivityRow = Schema.Struct({
  id: Schema.Number,
  extension_id: Schema.String,
  action: ActivityAction,
  summary: Schema.String,
  context: Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  created_at: Schema.String
})
const decodeRows = onFirstCall(() => Schema.decodeUnknown(Schema.Array(ActivityRow)))

export interface ActivityWrite {
  readonly extensionId: string
  readonly action: ActivityAction
  readonly summary: string
  readonly context: Readonly<Record<string, unknown>>
}

/** host_activity_logs: the audit trail. Records are appended and never deleted. */
/** What ActivityRepo is made of: the store's services are built together (store/Services.ts). */
export const makeActivityRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const append = (write: ActivityWrite) =>
    Effect.flatMap(DateTime.now, (now) =>
      sql`INSERT INTO host_activity_logs ${
        sql.insert({
          extension_id: write.extensionId,
          action: write.action,
          summary: write.summary,
          context: JSON.stringify(write.context),
          created_at: DateTime.formatIso(now)
        })
      }`).pipe(
      Effect.asVoid,
      Effect.mapError(storeError(`recording activity of ${write.extensionId}`)),
      Effect.withSpan("ActivityRepo.append")
    )

  const toRecords = (rows: ReadonlyArray<typeof ActivityRow.Type>): ReadonlyArray<ActivityRecord> =>
    rows.map((row) => ({
      id: row.id,
      extensionId: row.extension_id,
      action: row.action,
      summary: row.summary,
      context: row.context,
      createdAt: row.created_at
    }))

  /** Newest first; optionally one extension's only. */
  const list = (options: { readonly extensionId?: string; readonly limit?: number } = {}) =>
    (options.extensionId === undefined
      ? sql`SELECT * FROM host_activity_logs ORDER BY id DESC LIMIT ${options.limit ?? 100}`
      : sql`SELECT * FROM host_activity_logs WHERE extension_id = ${options.extensionId}
            ORDER BY id DESC LIMIT ${options.limit ?? 100}`).pipe(
      Effect.flatMap(decodeRows),
      Effect.map(toRecords),
      Effect.mapError(storeError("reading activity")),
      Effect.withSpan("ActivityRepo.list")
    )

  /** One page, newest first, filtered by extension and/or action, with the total that matches. */
  const page = (options: {
    readonly extensionId?: string | undefined
    readonly action?: ActivityAction | undefined
    readonly limit: number
    readonly offset: number
  }) => {
    const conditions = [
      ...(options.extensionId === undefined ? [] : [sql`extension_id = ${options.extensionId}`]),
      ...(options.action === undefined ? [] : [sql`action = ${options.action}`])
    ]
    const where = conditions.length === 0 ? sql`` : sql`WHERE ${sql.and(conditions)}`
    return Effect.all({
      rows: sql`SELECT * FROM host_activity_logs ${where} ORDER BY id DESC LIMIT ${options.limit} OFFSET ${options.offset}`.pipe(
        Effect.flatMap(decodeRows),
        Effect.map(toRecords)
      ),
      total: sql<{ readonly n: number | string }>`SELECT COUNT(*) AS n FROM host_activity_logs ${where}`.pipe(
        Effect.map(([row]) => Number(row?.n ?? 0))
      )
    }).pipe(Effect.mapError(storeError("reading activity")), Effect.withSpan("ActivityRepo.page"))
  }

  return { append, list, page } as const
})

export class ActivityRepo extends Effect.Service<ActivityRepo>()("host/ActivityRepo", { effect: makeActivityRepo }) {}
