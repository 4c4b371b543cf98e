import { FileSystem } from "@effect/platform"
import { DateTime, Effect, Either, Option, Schema } from "effect"
import { resolve as resolvePath } from "node:path"
import { pathToFileURL } from "node:url"
import { configuredRegistries, defaultRegistryName, HostConfig } from "../config/HostConfig.js"
import { ageSeconds, cacheStatus, type CacheStatus, decodeRegistryIndex, indexInDecodedForm, RegistryCacheFile } from "../domain/Registry.js"
import { isWithinJsonDepth, parseJsonWithinDepth } from "../domain/JsonDepth.js"
import { problemsFromParseError } from "../domain/Problems.js"
import { sha256Hex } from "../system/Hash.js"
import { RegistryCacheError } from "./RegistryErrors.js"
import { writeFileAtomic } from "../system/AtomicFile.js"

// The registry cache file `{fetched_at, registry}`: reading it (decoded like any outside input),
// writing it atomically, and what `status` and `registry:status` report about it. Each configured
// registry has its own file (docs/registry.md "Several registries"): `default` (registry_url) keeps
// `registry_cache_path` itself, so a cache written before there were several registries stays its
// cache; another registry's file is `<registry_cache_path without .json>.<name>.json`.

/** The cache file of the registry `name`. */
export const cachePathOf = (base: string, name: string): string =>
  name === defaultRegistryName ? base : `${base.replace(/\.json$/, "")}.${name}.json`

/**
 * What the cache remembers beside the index for the trust checks (docs/registry.md "Trust"): the
 * highest serial ever accepted from the registry (it only goes up), the cached index's own serial and
 * expiry, and the key that verified it. Kept here because the index schema drops keys it does not know.
 */
export const CacheTrust = Schema.Struct({
  registry_name: Schema.optional(Schema.String),
  signed_by: Schema.optional(Schema.String),
  serial: Schema.optional(Schema.Int),
  highest_serial: Schema.optional(Schema.Int),
  expires_at: Schema.optional(Schema.String)
})
export type CacheTrust = typeof CacheTrust.Type

/**
 * The whole cache file: the index and where it came from, the trust record, and (in a keyed registry's
 * cache) the sha256 of the index's line as written, which lets a forced sync read the rest without parsing
 * the index (`readCache`, docs/decisions.md "A forced sync reads a keyed cache's envelope only").
 */
export const CacheDocument = Schema.Struct({
  ...RegistryCacheFile.fields,
  ...CacheTrust.fields,
  registry_sha256: Schema.optional(Schema.String)
})
export type CacheDocument = typeof CacheDocument.Type

const CacheHeader = Schema.Struct({
  fetched_at: Schema.DateFromString,
  registry: Schema.Struct({ extensions: Schema.optionalWith(Schema.Array(Schema.Unknown), { default: () => [] }) })
})

export interface CacheReport {
  readonly path: string
  readonly last_sync: string | null
  readonly age_seconds: number | null
  readonly ttl_seconds: number
  readonly status: CacheStatus
  readonly extensions: number
  readonly cache_size_bytes: number
}

/**
 * A cache file this process wrote: its exact bytes and what a report reads from them. A report on a file
 * that still holds exactly these bytes takes its answer from here instead of parsing them again (the
 * answer is the same: these bytes decode to these values), which spared `registry:sync` a second read
 * of the index it had just written (docs/decisions.md "registry:sync reads what it wrote once").
 */
export interface WrittenCache {
  readonly bytes: Uint8Array
  readonly fetchedAt: Date
  readonly extensions: number
}

/** What a report reads of a cache file: when it was fetched and how many entries it lists. */
const readReportHeader = (file: string, written: WrittenCache | undefined) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if (written !== undefined) {
      const bytes = yield* fs.readFile(file).pipe(Effect.option)
      if (Option.isNone(bytes)) return Option.none()
      if (Buffer.compare(bytes.value, written.bytes) === 0) {
        return Option.some({ fetchedAt: written.fetchedAt, extensions: written.extensions })
      }
      return yield* decodeReportHeader(new TextDecoder().decode(bytes.value))
    }
    return yield* fs.readFileString(file).pipe(Effect.flatMap(decodeReportHeader), Effect.orElseSucceed(() => Option.none()))
  })

const decodeReportHeader = (text: string) =>
  Effect.option(Effect.map(Schema.decodeUnknown(parseJsonWithinDepth(CacheHeader))(text), (header) => ({
    fetchedAt: header.fetched_at,
    extensions: header.registry.extensions.length
  })))

/**
 * Reports on the cache file at `file`; an unreadable or malformed cache counts as missing. `written`: what
 * this process last wrote there, if it did.
 */
export const cacheReport = Effect.fn("RegistryCache.report")(function*(file: string, ttlSeconds: number, written?: WrittenCache) {
  const fs = yield* FileSystem.FileSystem
  const now = DateTime.toDateUtc(yield* DateTime.now)
  const cache = yield* readReportHeader(file, written)
  const size = yield* fs.stat(file).pipe(
    Effect.map((info) => Number(info.size)),
    Effect.orElseSucceed(() => 0)
  )
  const fetchedAt = Option.map(cache, (header) => header.fetchedAt)
  return {
    path: file,
    last_sync: Option.getOrNull(Option.map(fetchedAt, (date) => date.toISOString())),
    age_seconds: Option.getOrNull(Option.map(fetchedAt, (date) => ageSeconds(date, now))),
    ttl_seconds: ttlSeconds,
    status: cacheStatus(Option.getOrUndefined(fetchedAt), now, ttlSeconds),
    extensions: Option.match(cache, { onNone: () => 0, onSome: (header) => header.extensions }),
    cache_size_bytes: Option.isSome(cache) ? size : 0
  } satisfies CacheReport
})

/** The report for the first registry's cache (used by `host status`). */
export const readCacheReport = Effect.flatMap(
  HostConfig,
  ({ config, paths }) =>
    cacheReport(cachePathOf(paths.registryCache, configuredRegistries(config)[0]?.name ?? defaultRegistryName), config.registry_cache_ttl)
)

/** One registry in `registry:status --json`'s `registries`. */
export interface RegistryReport {
  readonly name: string
  readonly url: string
  readonly path: string
  readonly status: CacheStatus
  readonly last_sync: string | null
  readonly extensions: number
  readonly serial: number | null
  readonly expires_at: string | null
  /** Whether the cached index was verified with the registry's public_key. */
  readonly signed: boolean
}

/** Every configured registry's cache, in resolution order. */
export const readRegistriesReport = Effect.gen(function*() {
  const { config, paths } = yield* HostConfig
  return yield* Effect.forEach(configuredRegistries(config), (registry) =>
    Effect.gen(function*() {
      const path = cachePathOf(paths.registryCache, registry.name)
      const report = yield* cacheReport(path, config.registry_cache_ttl)
      const read = yield* readCache(path)
      const trust = read._tag === "Read" && (read.header.registry_url === undefined || read.header.registry_url === resolveRegistryUrl(registry.url, paths.root)) &&
          Either.isRight(read.document())
        ? read.header
        : undefined
      return {
        name: registry.name,
        url: registry.url,
        path,
        status: trust === undefined ? "missing" : report.status,
        last_sync: trust === undefined ? null : report.last_sync,
        extensions: trust === undefined ? 0 : report.extensions,
        serial: trust?.serial ?? null,
        expires_at: trust?.expires_at ?? null,
        signed: registry.publicKey !== undefined && trust?.signed_by === registry.publicKey
      } satisfies RegistryReport
    }))
})

/**
 * A registry URL as fetched: `file://./dir` and `file://../dir` (a relative path, which a URL cannot
 * hold) are read relative to the panel root, so a checked-in config can point at a registry inside it.
 */
export const resolveRegistryUrl = (configured: string, root: string): string => {
  const relative = /^file:\/\/(\.\.?\/.*|\.\.?)$/.exec(configured)
  const url = relative === null ? configured : pathToFileURL(resolvePath(root, relative[1]!)).href
  return url.replace(/\/+$/, "")
}

/** The cache file without its index: where and when it was fetched, and the trust record. */
export type CacheHeader = Omit<CacheDocument, "registry">

export type CacheRead =
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Unreadable"; readonly detail: string }
  | {
    readonly _tag: "Read"
    readonly header: CacheHeader
    readonly bytes: number
    /**
     * The whole document, decoded when asked (a sync that fetches anyway needs only the header); Left:
     * why it is unreadable, as `Unreadable` says it.
     */
    readonly document: () => Either.Either<CacheDocument, string>
  }

const decodeCache = Schema.decodeUnknownEither(parseJsonWithinDepth(CacheDocument), { errors: "all" })

/** The first problem of the whole schema's refusal of the text: what `Unreadable` reports. */
const unreadableDetail = (text: string): string =>
  Either.match(decodeCache(text), {
    onLeft: (error) => {
      const first = problemsFromParseError(error)[0]
      return first === undefined ? "malformed" : `${first.path}: ${first.message}`
    },
    // Not reached: the quick decoding refuses only what the schema refuses.
    onRight: () => "malformed"
  })

/**
 * The cache file around its index: decoded by the schema; the index (an object: a file without one is
 * unreadable at once) by `decodeRegistryIndex`.
 */
const CacheEnvelope = Schema.Struct({ ...CacheDocument.fields, registry: Schema.Object })
const decodeCacheEnvelope = Schema.decodeUnknownEither(CacheEnvelope)

const cacheKeys: ReadonlySet<string> = new Set(Object.keys(CacheDocument.fields))

/** `text` parsed as JSON and its envelope decoded, or undefined when either fails. */
const parseEnvelope = (text: string) => {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    return undefined
  }
  const envelope = decodeCacheEnvelope(raw)
  return Either.isLeft(envelope) ? undefined : { raw: raw as object, envelope: envelope.right }
}

/**
 * The cache file's text: the envelope decoded by its schema now, the index by `decodeRegistryIndex` (the
 * quick path for entries in decoded form, which is how the cache holds them) when it is asked for. Any
 * refusal is explained by the whole schema, so the problem reported is the schema's, as before.
 *
 * The nesting of the text is counted (docs/decisions.md "JSON from outside nests at most 64 levels") unless
 * the parsed document shows it cannot nest deeply: no key but the cache's own, and an index entirely in
 * decoded form (`indexInDecodedForm`: the index five levels, the file six). Counting cost a short command
 * more than parsing. Parsing first is safe here: `JSON.parse` does not recurse, and the file is the
 * framework's own, so only someone who can write the root could make it slow to parse (a remote index is
 * counted before it is parsed, registry/Registry.ts).
 */
const readCacheText = (text: string): CacheRead => {
  const unreadable = (): CacheRead => ({ _tag: "Unreadable", detail: unreadableDetail(text) })
  const parsed = parseEnvelope(text)
  if (parsed === undefined) return unreadable()
  let counted = false
  const withinDepth = () => (counted ||= isWithinJsonDepth(text))
  for (const key in parsed.raw) if (!cacheKeys.has(key) && !withinDepth()) return unreadable()
  const { registry, ...header } = parsed.envelope
  let document: Either.Either<CacheDocument, string> | undefined
  const decodeDocument = (): Either.Either<CacheDocument, string> => {
    const quick = indexInDecodedForm(registry)
    if (quick !== undefined) return Either.right({ ...header, registry: quick })
    if (!withinDepth()) return Either.left(unreadableDetail(text))
    return Either.match(decodeRegistryIndex(registry), {
      onLeft: () => Either.left(unreadableDetail(text)),
      onRight: (index) => Either.right({ ...header, registry: index })
    })
  }
  return {
    _tag: "Read",
    header,
    bytes: Buffer.byteLength(text),
    document: () => (document ??= decodeDocument())
  }
}

/** Where the index begins in a cache file as `writeCache` writes it: after this, on one line. */
const indexLineStart = Buffer.from(`\n  "registry": `)

/**
 * The cache file's bytes read as `readCacheText` reads their text, without parsing the index when the file
 * is exactly what `writeCache` writes for its envelope and the index's line still has the sha256 the
 * envelope records: that line is then the JSON `writeCache` wrote, so parsing the whole file would succeed
 * with this envelope, and the answer is the same. The index is parsed and decoded when `document()` asks.
 * Any other file (an older cache without the sha256, one edited or damaged) is read whole, as before.
 */
const readCacheBytes = (bytes: Uint8Array): CacheRead => {
  const whole = () => readCacheText(new TextDecoder().decode(bytes))
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const at = buffer.indexOf(indexLineStart)
  const start = at + indexLineStart.length
  const line = at < 0 ? -1 : buffer.indexOf(0x0a, start)
  if (line < 0) return whole()
  // The index's value ends its line, or the comma before the envelope's next key does.
  const end = buffer[line - 1] === 0x2c ? line - 1 : line
  const outside = `${buffer.toString("utf8", 0, start)}{}${buffer.toString("utf8", end)}`
  const parsed = parseEnvelope(outside)
  if (parsed === undefined) return whole()
  const { registry: _, ...header } = parsed.envelope
  if (header.registry_sha256 === undefined || sha256Hex(buffer.subarray(start, end)) !== header.registry_sha256) return whole()
  const [before, after] = envelopePieces(header)
  if (`${before}{}${after}` !== outside) return whole()
  let document: Either.Either<CacheDocument, string> | undefined
  const decodeDocument = (): Either.Either<CacheDocument, string> => {
    const read = whole()
    return read._tag === "Read" ? read.document() : Either.left(read._tag === "Unreadable" ? read.detail : "missing")
  }
  return { _tag: "Read", header, bytes: bytes.length, document: () => (document ??= decodeDocument()) }
}

/**
 * Reads the cache file and decodes its header; its index is decoded by `document()`. `indexLater`: the
 * caller may need only the header (a forced sync of a keyed registry, which needs the highest serial
 * accepted), so a file `writeCache` wrote with the index's sha256 is read without parsing the index.
 */
export const readCache = (file: string, options?: { readonly indexLater?: boolean }): Effect.Effect<CacheRead, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if (options?.indexLater === true) {
      const bytes = yield* fs.readFile(file).pipe(Effect.option)
      if (Option.isNone(bytes)) return { _tag: "Missing" } as const
      return readCacheBytes(bytes.value)
    }
    const text = yield* fs.readFileString(file).pipe(Effect.option)
    if (Option.isNone(text)) return { _tag: "Missing" } as const
    return readCacheText(text.value)
  }).pipe(Effect.withSpan("RegistryCache.read"))

const encoder = new TextEncoder()

/**
 * The cache document as JSON text, in UTF-8: the index is written as it was decoded (its decoded form is also
 * a valid encoded form, and encoding thousands of entries through the schema again cost as much as decoding
 * them), on one line (a third smaller than indented, so a third less to read and parse on every command
 * that resolves); the rest indented, keys in the schema's order, as before. The three pieces (the envelope
 * before the index, the index, the envelope after it) are encoded one after another into one buffer: joined
 * as text first, the encoder copied the whole text into one more string of about a megabyte per index
 * (docs/decisions.md "registry:sync: fewer, larger steps").
 */
const cacheBytes = (cache: CacheDocument): Uint8Array => {
  const index = JSON.stringify(cache.registry)
  // A keyed registry's cache records the sha256 of the index's line (what `readCache` reads without parsing
  // the index); a forced sync of a registry without a key does not read its old cache at all.
  const { registry: _, registry_sha256: __, ...header } = cache
  const [before, after] = envelopePieces(cache.signed_by === undefined ? header : { ...header, registry_sha256: sha256Hex(index) })
  const pieces = [before, index, after]
  let length = 0
  for (const piece of pieces) length += Buffer.byteLength(piece, "utf8")
  const bytes = new Uint8Array(length)
  let offset = 0
  for (const piece of pieces) offset += encoder.encodeInto(piece, bytes.subarray(offset)).written
  return bytes
}

/**
 * The text of the cache file before its index and after it: the envelope indented, keys in the schema's
 * order, the index's value on a line of its own (`readCache` finds it there).
 */
const envelopePieces = (header: CacheHeader): readonly [string, string] => {
  const placeholder = "(the index)"
  const text = JSON.stringify({
    fetched_at: header.fetched_at.toISOString(),
    ...(header.registry_url === undefined ? {} : { registry_url: header.registry_url }),
    registry: placeholder,
    ...(header.registry_sha256 === undefined ? {} : { registry_sha256: header.registry_sha256 }),
    ...(header.registry_name === undefined ? {} : { registry_name: header.registry_name }),
    ...(header.signed_by === undefined ? {} : { signed_by: header.signed_by }),
    ...(header.serial === undefined ? {} : { serial: header.serial }),
    ...(header.highest_serial === undefined ? {} : { highest_serial: header.highest_serial }),
    ...(header.expires_at === undefined ? {} : { expires_at: header.expires_at })
  }, null, 2)
  // The placeholder is found as the value of "registry" (the URL before it may hold any text).
  const at = text.indexOf(`\n  "registry": ${JSON.stringify(placeholder)}`)
  const value = at + `\n  "registry": `.length
  return [text.slice(0, value), `${text.slice(value + JSON.stringify(placeholder).length)}\n`]
}

/**
 * Writes the cache next to its final place and renames it over, so a reader never sees half a file; the
 * answer is what was written (for `cacheReport`).
 */
export const writeCache = Effect.fn("RegistryCache.write")(function*(file: string, cache: CacheDocument) {
  const bytes = cacheBytes(cache)
  yield* writeFileAtomic(file, bytes).pipe(
    Effect.mapError((error) => new RegistryCacheError({ path: file, detail: error.message }))
  )
  return { bytes, fetchedAt: cache.fetched_at, extensions: cache.registry.extensions.length } satisfies WrittenCache
})
