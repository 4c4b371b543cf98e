import { SqlClient, type Statement } from "@effect/sql"
import { DateTime, Effect, Option, Schema } from "effect"
import { FrontendErrorList } from "../domain/FrontendErrors.js"
import { coreExtensionId } from "../domain/Installed.js"
import { OperationLock } from "../domain/Lock.js"
import { upsert } from "./Dialect.js"
import { onReadConnection, perRequestRead, readConnection, type ReadConnectionService } from "./PerRequestRead.js"
import { isUniqueViolation, storeError } from "./StoreError.js"

// The framework's own state (docs/architecture.md "Store"): rows of host_settings owned by `host/core`,
// one JSON value per key. Every kind of row is declared here once — its key (or key prefix, for rows that
// come once per name) and the Schema of its value — and read and written only through `CoreRows`, so a key
// is spelled in one place and a value is decoded where it is read, once.

/** One kind of host/core row: its key and the Schema of its value. */
export interface CoreKey<A, I> {
  readonly key: string
  readonly value: Schema.Schema<A, I>
}

/** A kind of row kept once per name, under `<prefix><name>`, every one with the same value Schema. */
export interface CoreKeyFamily<A, I> {
  readonly prefix: string
  readonly value: Schema.Schema<A, I>
}

const key = <A, I>(name: string, value: Schema.Schema<A, I>): CoreKey<A, I> => ({ key: name, value })
const family = <A, I>(prefix: string, value: Schema.Schema<A, I>): CoreKeyFamily<A, I> => ({ prefix, value })

/** Decodes a row's stored text (none when it does not decode). */
export const decodeCoreValue = <A, I>(row: Pick<CoreKey<A, I>, "value">) => Schema.decodeUnknownOption(Schema.parseJson(row.value))

/** The row of one name in a family. */
export const member = <A, I>(of: CoreKeyFamily<A, I>, name: string): CoreKey<A, I> => key(`${of.prefix}${name}`, of.value)

// ---- the values ----------------------------------------------------------------------------------

/** Why the runtime did not load an enabled extension, as the process that booted it recorded. */
export const QuarantineRecord = Schema.Struct({
  reason: Schema.String,
  version: Schema.String,
  generation: Schema.Number,
  since: Schema.String
})
export type QuarantineRecord = typeof QuarantineRecord.Type

export const QuarantineMap = Schema.Record({ key: Schema.String, value: QuarantineRecord })
export type QuarantineMap = typeof QuarantineMap.Type

/** Per extension, the settings keys whose stored value came from `${ENV}` in the desired state. */
export const SensitiveKeys = Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) })
export type SensitiveKeys = typeof SensitiveKeys.Type

/** The panel's servers as last seen. */
export const PanelServers = Schema.Array(Schema.Struct({ uuid: Schema.String, name: Schema.String }))
export type PanelServers = typeof PanelServers.Type

/**
 * Extension-permission grants Host keeps for a real panel's subusers (Pterodactyl, whose subuser permissions
 * are a fixed list): server uuid → panel username → permissions (docs/panels.md "Extension permissions").
 */
export const PanelGrants = Schema.Record({
  key: Schema.String,
  value: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) })
})
export type PanelGrants = typeof PanelGrants.Type

/** A signed webhook delivery that was answered. */
export const WebhookDelivery = Schema.Struct({ delivery: Schema.String, received_at: Schema.String })

// ---- every kind of host/core row -----------------------------------------------------------------

export const CoreKeys = {
  /** The operation lock: one writer per database (store/OperationLock.ts). */
  operationLock: key("lock", OperationLock),
  /**
   * Other locks, under their own names: `panel-file`, `schedule <extension> <task>` (tasks that must not
   * overlap). Taken and released like the operation lock.
   */
  namedLock: (name: string) => key(name, OperationLock),
  /** Each scheduler minute, claimed once per database by the runner that inserted it. */
  scheduleClaims: family("schedule minute ", OperationLock),
  /** The enabled extensions the last booting process quarantined, by id (runtime/Quarantine.ts). */
  quarantine: key("quarantine", QuarantineMap),
  /** The extension ids an applied desired state protects from removal. */
  protectedIds: key("protected", Schema.Array(Schema.String)),
  /** Settings whose values came from the environment, per extension (never written back to a file). */
  sensitiveKeys: key("sensitive_settings", SensitiveKeys),
  /** The panel's servers as last seen, to tell created and deleted ones apart (runtime/LiveState.ts). */
  panelServers: key("panel_servers", PanelServers),
  /** Extension permissions granted to a real panel's subusers (panel/Grants.ts). */
  panelGrants: key("panel_grants", PanelGrants),
  /** Recent frontend render errors, one row per extension (docs/decisions.md "Frontend errors live in `host/core` settings rows"). */
  frontendErrors: family("frontend_errors:", FrontendErrorList),
  /** Signed webhook deliveries answered in the last 24 hours, one row per delivery id (docs/gitops.md). */
  webhookDeliveries: family("webhook_delivery:", WebhookDelivery),
  /**
   * Embedded-panel sessions signed out, one row per session id (panel/Session.ts), read by every replica on
   * each request with the cookie; pruned once the session they end has expired (docs/http.md "Security").
   */
  revokedSessions: family("session_revoked:", Schema.Struct({ revoked_at: Schema.String }))
} as const

// ---- the repository ------------------------------------------------------------------------------

/** What every row operation needs: the database and the quoted `key` column (a reserved word in MySQL). */
interface CoreTable {
  readonly sql: SqlClient.SqlClient
  readonly column: Statement.Identifier
  /** SQLite's read connection, for the reads made per request (store/PerRequestRead.ts). */
  readonly reads: Option.Option<ReadConnectionService>
}

const encode = <A, I>(row: CoreKey<A, I>, value: A) =>
  Schema.encode(Schema.parseJson(row.value))(value).pipe(Effect.mapError(storeError(`encoding ${row.key}`)))

/** The stored text of a row. */
const getText = <A, I>({ column, sql }: CoreTable, row: CoreKey<A, I>) =>
  sql<{ value: string }>`SELECT value FROM host_settings WHERE extension_id = ${coreExtensionId} AND ${column} = ${row.key}`.pipe(
    Effect.map((rows) => Option.fromNullable(rows[0]?.value)),
    Effect.mapError(storeError(`reading ${row.key}`))
  )

/** The decoded value of a row (none when absent or undecodable). */
const get = <A, I>(table: CoreTable, row: CoreKey<A, I>) =>
  // The decoder is built only for a stored text: most rows a short command reads are absent.
  Effect.map(getText(table, row), Option.flatMap((text) => decodeCoreValue(row)(text)))

/** Writes a row's value (inserted, or replaced in one statement). */
const put = <A, I>({ sql }: CoreTable, row: CoreKey<A, I>, value: A) =>
  Effect.flatMap(Effect.all([encode(row, value), Effect.map(DateTime.now, DateTime.formatIso)]), ([text, now]) => {
    return upsert(
      sql,
      "host_settings",
      { extension_id: coreExtensionId, key: row.key, value: text, created_at: now, updated_at: now },
      ["extension_id", "key"],
      ["value", "updated_at"]
    ).pipe(Effect.asVoid, Effect.mapError(storeError(`saving ${row.key}`)))
  })

/**
 * Inserts a row only if there is none: the UNIQUE(extension_id, key) constraint lets one process win.
 * The stored text when this call inserted it, none when the row was there.
 */
const insertNew = <A, I>({ sql }: CoreTable, row: CoreKey<A, I>, value: A, at?: Date) =>
  Effect.flatMap(
    Effect.all([encode(row, value), at === undefined ? Effect.map(DateTime.now, DateTime.formatIso) : Effect.succeed(at.toISOString())]),
    ([text, now]) =>
      sql`INSERT INTO host_settings ${
        sql.insert({ extension_id: coreExtensionId, key: row.key, value: text, created_at: now, updated_at: now })
      }`.pipe(
      Effect.as(Option.some(text)),
      Effect.catchIf(isUniqueViolation, () => Effect.succeed(Option.none<string>())),
      Effect.mapError(storeError(`inserting ${row.key}`))
    ))

/** Replaces a row's value only while it still holds exactly `text`; the new text, or none when it changed. */
const replaceIfUnchanged = <A, I>(table: CoreTable, row: CoreKey<A, I>, text: string, next: A) =>
  Effect.gen(function*() {
    const { column, sql } = table
    const nextText = yield* encode(row, next)
    const now = DateTime.formatIso(yield* DateTime.now)
    yield* sql`UPDATE host_settings SET value = ${nextText}, updated_at = ${now}
               WHERE extension_id = ${coreExtensionId} AND ${column} = ${row.key} AND value = ${text}`.pipe(
      Effect.mapError(storeError(`replacing ${row.key}`))
    )
    const stored = yield* getText(table, row)
    return Option.filter(stored, (value) => value === nextText)
  })

/** Deletes a row, or (given `text`) only while it still holds exactly that text. */
const remove = <A, I>({ column, sql }: CoreTable, row: CoreKey<A, I>, text?: string) =>
  (text === undefined
    ? sql`DELETE FROM host_settings WHERE extension_id = ${coreExtensionId} AND ${column} = ${row.key}`
    : sql`DELETE FROM host_settings WHERE extension_id = ${coreExtensionId} AND ${column} = ${row.key} AND value = ${text}`).pipe(
      Effect.asVoid,
      Effect.mapError(storeError(`deleting ${row.key}`))
    )

/** Every row of a family that decodes, by name, in key order. */
const list = <A, I>({ column, reads, sql }: CoreTable, of: CoreKeyFamily<A, I>) =>
  onReadConnection(reads, sql<{ key: string; value: string }>`SELECT ${column}, value FROM host_settings
      WHERE extension_id = ${coreExtensionId} AND ${column} LIKE ${`${of.prefix}%`} ORDER BY ${column}`).pipe(
    Effect.map((rows) =>
      // LIKE reads `_` in a prefix as any character: the prefix is checked exactly here.
      rows.filter((row) => row.key.startsWith(of.prefix)).flatMap((row) =>
        Option.match(decodeCoreValue(of)(row.value), {
          onNone: () => [],
          onSome: (value) => [[row.key.slice(of.prefix.length), value] as const]
        })
      )
    ),
    Effect.mapError(storeError(`reading ${of.prefix}*`)),
    // The admin list reads the frontend errors on every request (store/PerRequestRead.ts).
    perRequestRead({ reads })
  )

interface FamilyCut {
  readonly except?: string
  readonly createdBefore?: Date
}

/** Deletes rows of a family: all but the one named `except`, or those created before `createdBefore`. */
const removeFamily = <A, I>({ column, sql }: CoreTable, of: CoreKeyFamily<A, I>, options: FamilyCut) =>
  sql`DELETE FROM host_settings WHERE extension_id = ${coreExtensionId} AND ${column} LIKE ${`${of.prefix}%`}${
    options.except === undefined ? sql`` : sql` AND ${column} != ${`${of.prefix}${options.except}`}`
  }${options.createdBefore === undefined ? sql`` : sql` AND created_at < ${options.createdBefore.toISOString()}`}`.pipe(
    Effect.asVoid,
    Effect.mapError(storeError(`deleting ${of.prefix}*`))
  )

/**
 * Reads and writes the host/core rows by their typed keys. A stored value that does not decode reads as
 * absent: each kind has one writer that rewrites it whole, so such a value is treated as never written.
 * The compare-and-swap operations work on the stored text, which is what two processes agree on.
 */
/** What CoreRows is made of: the store's services are built together (store/Services.ts). */
export const makeCoreRows = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const table: CoreTable = { sql, column: sql("key"), reads: yield* readConnection }
  return {
    get: <A, I>(row: CoreKey<A, I>) => get(table, row),
    getText: <A, I>(row: CoreKey<A, I>) => getText(table, row),
    put: <A, I>(row: CoreKey<A, I>, value: A) => put(table, row, value),
    insertNew: <A, I>(row: CoreKey<A, I>, value: A, at?: Date) => insertNew(table, row, value, at),
    replaceIfUnchanged: <A, I>(row: CoreKey<A, I>, text: string, next: A) => replaceIfUnchanged(table, row, text, next),
    remove: <A, I>(row: CoreKey<A, I>, text?: string) => remove(table, row, text),
    list: <A, I>(of: CoreKeyFamily<A, I>) => list(table, of),
    removeFamily: <A, I>(of: CoreKeyFamily<A, I>, options: FamilyCut) => removeFamily(table, of, options)
  } as const
})

export class CoreRows extends Effect.Service<CoreRows>()("host/CoreRows", { effect: makeCoreRows }) {}
