import { SqlClient, SqlSchema } from "@effect/sql"
import { DateTime, Effect, Either, Option, type ParseResult, Schema } from "effect"
import {
  ExtensionSource,
  type ExtensionWrite,
  type InstalledExtension,
  type InstalledManifest,
  SignatureRecord
} from "../domain/Installed.js"
import { onFirstCall } from "../domain/OnFirstCall.js"
import { upsert } from "./Dialect.js"
import { onReadConnection, perRequestRead, readConnection } from "./PerRequestRead.js"
import { storeError } from "./StoreError.js"

// host_extensions rows are decoded here, once, into records that carry the decoded manifest
// (docs/architecture.md "Store"); no reader decodes the stored manifest again.

const ExtensionRow = Schema.Struct({
  id: Schema.Number,
  extension_id: Schema.String,
  name: Schema.String,
  version: Schema.String,
  // SQLite and MySQL answer 0/1, PostgreSQL a boolean.
  enabled: Schema.Union(Schema.Boolean, Schema.Number),
  // The stored text, parsed and decoded in toRecords, once per distinct text (ManifestMemo below).
  manifest: Schema.String,
  source: Schema.parseJson(ExtensionSource),
  signature: Schema.parseJson(SignatureRecord),
  created_at: Schema.String,
  updated_at: Schema.String
})

type ExtensionRow = typeof ExtensionRow.Type
type ManifestDecoder = typeof import("../domain/StoredManifest.js").decodeInstalledManifest

const parseStoredJson = Schema.decodeUnknownEither(Schema.parseJson())

/**
 * Decoded manifests by their stored text. A manifest is a pure function of that text and immutable, so the
 * reads that list the table on every request (the admin list) or every swap decode only a text they have
 * not seen; the row itself is still read each time, so another process's change is seen at once
 * (docs/decisions.md "R4's tail"). After a whole listing the memo holds exactly that listing's texts, so it
 * never outgrows the table and forgets the versions no row holds any more.
 */
class ManifestMemo {
  private decoded = new Map<string, InstalledManifest>()

  /** The decoded manifest of `text`, or the parse error of a text that is not JSON (the row is corrupt). */
  of(text: string, decode: ManifestDecoder): Either.Either<InstalledManifest, ParseResult.ParseError> {
    const known = this.decoded.get(text)
    if (known !== undefined) return Either.right(known)
    return Either.map(parseStoredJson(text), (parsed) => {
      const manifest = decode(parsed)
      this.decoded.set(text, manifest)
      return manifest
    })
  }

  /** The decoded manifests of a whole listing, in order; the memo then holds these texts and no others. */
  listing(texts: ReadonlyArray<string>, decode: ManifestDecoder): Either.Either<Array<InstalledManifest>, ParseResult.ParseError> {
    const kept = new Map<string, InstalledManifest>()
    const manifests: Array<InstalledManifest> = []
    for (const text of texts) {
      let manifest = kept.get(text) ?? this.decoded.get(text)
      if (manifest === undefined) {
        const parsed = parseStoredJson(text)
        if (Either.isLeft(parsed)) return Either.left(parsed.left)
        manifest = decode(parsed.right)
      }
      kept.set(text, manifest)
      manifests.push(manifest)
    }
    this.decoded = kept
    return Either.right(manifests)
  }
}

const toRecord = (row: ExtensionRow, manifest: InstalledManifest): InstalledExtension => ({
  id: row.id,
  extensionId: row.extension_id,
  name: row.name,
  version: row.version,
  enabled: row.enabled === true || row.enabled === 1,
  manifest,
  source: row.source,
  signature: row.signature,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

// The manifest's rules are imported with the first row to decode (domain/StoredManifest.ts): an empty
// table never loads them. Kept once loaded: awaiting the settled import again suspended every listing with rows
// (the admin list, every request) until a microtask resumed its fiber.
let loadedManifestRules: typeof import("../domain/StoredManifest.js") | undefined
const storedManifest = Effect.suspend(() =>
  loadedManifestRules !== undefined
    ? Effect.succeed(loadedManifestRules)
    : Effect.map(Effect.promise(() => import("../domain/StoredManifest.js")), (module) => (loadedManifestRules = module))
)

const toRecords = (rows: ReadonlyArray<ExtensionRow>, memo: ManifestMemo): Effect.Effect<Array<InstalledExtension>, ParseResult.ParseError> =>
  rows.length === 0
    ? Effect.succeed([])
    : Effect.flatMap(storedManifest, ({ decodeInstalledManifest }) =>
      Either.match(memo.listing(rows.map((row) => row.manifest), decodeInstalledManifest), {
        onLeft: Effect.fail,
        onRight: (manifests) => Effect.succeed(rows.map((row, index) => toRecord(row, manifests[index]!)))
      }))

const toOptionalRecord = (row: Option.Option<ExtensionRow>, memo: ManifestMemo): Effect.Effect<Option.Option<InstalledExtension>, ParseResult.ParseError> =>
  Option.match(row, {
    onNone: () => Effect.succeed(Option.none()),
    onSome: (found) =>
      Effect.flatMap(storedManifest, ({ decodeInstalledManifest }) =>
        Either.match(memo.of(found.manifest, decodeInstalledManifest), {
          onLeft: Effect.fail,
          onRight: (manifest) => Effect.succeed(Option.some(toRecord(found, manifest)))
        }))
  })

export type { ExtensionWrite } from "../domain/Installed.js"

/** host_extensions: the single source of truth for what is installed and enabled. */
/** What ExtensionsRepo is made of: the store's services are built together (store/Services.ts). */
export const makeExtensionsRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // SQLite has no boolean type to bind; the others take a real boolean.
  const bool = (value: boolean) => sql.onDialectOrElse({ sqlite: () => (value ? 1 : 0), orElse: () => value })
  const memo = new ManifestMemo()
  const reads = yield* readConnection

  const selectAll = SqlSchema.findAll({
    Request: Schema.Void,
    Result: ExtensionRow,
    execute: () => onReadConnection(reads, sql`SELECT * FROM host_extensions ORDER BY extension_id`)
  })
  // Compiled when first used (a row decoder each): `host list` reads the table whole and never by id.
  const selectOne = onFirstCall(() =>
    SqlSchema.findOne({
      Request: Schema.String,
      Result: ExtensionRow,
      execute: (extensionId) => sql`SELECT * FROM host_extensions WHERE extension_id = ${extensionId}`
    })
  )

  const list = selectAll(undefined).pipe(
    Effect.flatMap((rows) => toRecords(rows, memo)),
    Effect.mapError(storeError("listing extensions")),
    // The admin list reads it on every request (store/PerRequestRead.ts).
    perRequestRead({ span: "ExtensionsRepo.list", reads })
  )

  const find = (extensionId: string) =>
    selectOne(extensionId).pipe(
      Effect.flatMap((row) => toOptionalRecord(row, memo)),
      Effect.mapError(storeError(`reading extension ${extensionId}`)),
      Effect.withSpan("ExtensionsRepo.find")
    )

  /** Inserts or replaces the record of one extension in one statement (created_at kept on replace). */
  const save = (write: ExtensionWrite) =>
    Effect.flatMap(Effect.map(DateTime.now, DateTime.formatIso), (now) =>
      upsert(sql, "host_extensions", {
        extension_id: write.extensionId,
        name: write.name,
        version: write.version,
        enabled: bool(write.enabled),
        manifest: JSON.stringify(write.manifest),
        source: JSON.stringify(write.source),
        signature: JSON.stringify(write.signature),
        created_at: now,
        updated_at: now
      }, ["extension_id"], ["name", "version", "enabled", "manifest", "source", "signature", "updated_at"])).pipe(
        Effect.asVoid,
        Effect.mapError(storeError(`saving extension ${write.extensionId}`)),
        Effect.withSpan("ExtensionsRepo.save")
      )

  const setEnabled = (extensionId: string, enabled: boolean) =>
    Effect.flatMap(DateTime.now, (now) =>
      sql`UPDATE host_extensions SET enabled = ${bool(enabled)}, updated_at = ${DateTime.formatIso(now)}
          WHERE extension_id = ${extensionId}`).pipe(
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

export class ExtensionsRepo extends Effect.Service<ExtensionsRepo>()("host/ExtensionsRepo", { effect: makeExtensionsRepo }) {}
