import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import {
  ExtensionSource,
  type InstalledExtension,
  SignatureRecord
} from "../domain/Installed.js"
import { storeError } from "./StoreError.js"

const ExtensionRow = Schema.Struct({
  id: Schema.Number,
  extension_id: Schema.String,
  name: Schema.String,
  version: Schema.String,
  enabled: Schema.Union(Schema.Boolean, Schema.Number),
  manifest: Schema.parseJson(),
  source: Schema.parseJson(ExtensionSource),
  signature: Schema.parseJson(SignatureRecord),
  created_at: Schema.String,
  updated_at: Schema.String
})

const decodeRows = Schema.decodeUnknown(Schema.Array(ExtensionRow))

const toRecord = (row: typeof ExtensionRow.Type): InstalledExtension => ({
  id: row.id,
  extensionId: row.extension_id,
  name: row.name,
  version: row.version,
  enabled: row.enabled === true || row.enabled === 1,
  manifest: row.manifest,
  source: row.source,
  signature: row.signature,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

export interface ExtensionWrite {
  readonly extensionId: string
  readonly name: string
  readonly version: string
  readonly enabled: boolean
  readonly manifest: unknown
  readonly source: ExtensionSource
  readonly signature: SignatureRecord
}

/** host_extensions: the single source of truth for what is installed and enabled. */
export class ExtensionsRepo extends Effect.Service<ExtensionsRepo>()("host/ExtensionsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // SQLite has no boolean type to bind; the others take a real boolean.
    const bool = (value: boolean) => sql.onDialectOrElse({ sqlite: () => (value ? 1 : 0), orElse: () => value })

    const list = sql`SELECT * FROM host_extensions ORDER BY extension_id`.pipe(
      Effect.flatMap(decodeRows),
      Effect.map((rows) => rows.map(toRecord)),
      Effect.mapError(storeError("listing extensions")),
      Effect.withSpan("ExtensionsRepo.list")
    )

    const find = (extensionId: string) =>
      sql`SELECT * FROM host_extensions WHERE extension_id = ${extensionId}`.pipe(
        Effect.flatMap(decodeRows),
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toRecord)),
        Effect.mapError(storeError(`reading extension ${extensionId}`)),
        Effect.withSpan("ExtensionsRepo.find")
      )

    /** Inserts or replaces the record of one extension (created_at kept on replace). */
    const save = (write: ExtensionWrite) => {
      const now = new Date().toISOString()
      const values = {
        name: write.name,
        version: write.version,
        enabled: bool(write.enabled),
        manifest: JSON.stringify(write.manifest),
        source: JSON.stringify(write.source),
        signature: JSON.stringify(write.signature),
        updated_at: now
      }
      return sql`SELECT id FROM host_extensions WHERE extension_id = ${write.extensionId}`.pipe(
        Effect.flatMap((rows) =>
          rows.length > 0
            ? sql`UPDATE host_extensions SET ${sql.update(values)} WHERE extension_id = ${write.extensionId}`
            : sql`INSERT INTO host_extensions ${sql.insert({ extension_id: write.extensionId, ...values, created_at: now })}`
        ),
        Effect.asVoid,
        Effect.mapError(storeError(`saving extension ${write.extensionId}`)),
        Effect.withSpan("ExtensionsRepo.save")
      )
    }

    const setEnabled = (extensionId: string, enabled: boolean) =>
      sql`UPDATE host_extensions SET enabled = ${bool(enabled)}, updated_at = ${new Date().toISOString()}
          WHERE extension_id = ${extensionId}`.pipe(
        Effect.asVoid,
        Effect.mapError(storeError(`updating extension ${extensionId}`)),
        Effect.withSpan("ExtensionsRepo.setEnabled")
      )

    const remove = (extensionId: string) =>
      sql`DELETE FROM host_extensions WHERE extension_id = ${extensionId}`.pipe(
        Effect.asVoid,
        Effect.mapError(storeError(`deleting extension ${extensionId}`)),
        Effect.withSpan("ExtensionsRepo.remove")
      )

    return { list, find, save, setEnabled, remove } as const
  })
}) {}
