import { FileSystem } from "@effect/platform"
import { DateTime, Effect, Option, Schema } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import { ageSeconds, cacheStatus, type CacheStatus, RegistryCacheFile } from "../domain/Registry.js"
import { parseJsonWithinDepth } from "../domain/JsonDepth.js"
import { problemsFromParseError } from "../domain/Problems.js"
import { RegistryCacheError } from "./RegistryErrors.js"
import { writeFileAtomic } from "../system/AtomicFile.js"

// The registry cache file `{fetched_at, registry}`: reading it (decoded like any outside input),
// writing it atomically, and what `status` and `registry:status` report about it.

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

/** Reports on the cache file at `file`; an unreadable or malformed cache counts as missing. */
export const cacheReport = Effect.fn("RegistryCache.report")(function*(file: string, ttlSeconds: number) {
  const fs = yield* FileSystem.FileSystem
  const now = DateTime.toDateUtc(yield* DateTime.now)
  const cache = yield* fs.readFileString(file).pipe(
    Effect.flatMap(Schema.decodeUnknown(parseJsonWithinDepth(CacheHeader))),
    Effect.option
  )
  const size = yield* fs.stat(file).pipe(
    Effect.map((info) => Number(info.size)),
    Effect.orElseSucceed(() => 0)
  )
  const fetchedAt = Option.map(cache, (header) => header.fetched_at)
  return {
    path: file,
    last_sync: Option.getOrNull(Option.map(fetchedAt, (date) => date.toISOString())),
    age_seconds: Option.getOrNull(Option.map(fetchedAt, (date) => ageSeconds(date, now))),
    ttl_seconds: ttlSeconds,
    status: cacheStatus(Option.getOrUndefined(fetchedAt), now, ttlSeconds),
    extensions: Option.match(cache, { onNone: () => 0, onSome: (header) => header.registry.extensions.length }),
    cache_size_bytes: Option.isSome(cache) ? size : 0
  } satisfies CacheReport
})

/** The report for the configured cache (used by `host status`). */
export const readCacheReport = Effect.flatMap(
  HostConfig,
  ({ config, paths }) => cacheReport(paths.registryCache, config.registry_cache_ttl)
)

export type CacheRead =
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Unreadable"; readonly detail: string }
  | { readonly _tag: "Read"; readonly cache: RegistryCacheFile; readonly bytes: number }

const decodeCache = Schema.decodeUnknownEither(parseJsonWithinDepth(RegistryCacheFile), { errors: "all" })

/** Reads and decodes the whole cache file. */
export const readCache = (file: string): Effect.Effect<CacheRead, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(Effect.option)
    if (Option.isNone(text)) return { _tag: "Missing" } as const
    const decoded = decodeCache(text.value)
    if (decoded._tag === "Left") {
      const first = problemsFromParseError(decoded.left)[0]
      return { _tag: "Unreadable", detail: first === undefined ? "malformed" : `${first.path}: ${first.message}` } as const
    }
    return { _tag: "Read", cache: decoded.right, bytes: Buffer.byteLength(text.value) } as const
  }).pipe(Effect.withSpan("RegistryCache.read"))

/** Writes the cache next to its final place and renames it over, so a reader never sees half a file. */
export const writeCache = Effect.fn("RegistryCache.write")(function*(file: string, cache: RegistryCacheFile) {
  const encoded = yield* Schema.encode(RegistryCacheFile)(cache).pipe(
    Effect.mapError((error) => new RegistryCacheError({ path: file, detail: error.message }))
  )
  yield* writeFileAtomic(file, `${JSON.stringify(encoded, null, 2)}\n`).pipe(
    Effect.mapError((error) => new RegistryCacheError({ path: file, detail: error.message }))
  )
})
