import { FileSystem } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import { ageSeconds, cacheStatus, type CacheStatus } from "../domain/Registry.js"

// The registry cache file `{fetched_at, registry}`: what `status` and `registry:status` report about it.

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

/** Reads the cache header; an unreadable or malformed cache counts as missing. */
export const readCacheReport = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const { config, paths } = yield* HostConfig
  const now = new Date()
  const cache = yield* fs.readFileString(paths.registryCache).pipe(
    Effect.flatMap(Schema.decodeUnknown(Schema.parseJson(CacheHeader))),
    Effect.option
  )
  const size = yield* fs.stat(paths.registryCache).pipe(
    Effect.map((info) => Number(info.size)),
    Effect.orElseSucceed(() => 0)
  )
  const fetchedAt = Option.map(cache, (header) => header.fetched_at)
  return {
    path: paths.registryCache,
    last_sync: Option.getOrNull(Option.map(fetchedAt, (date) => date.toISOString())),
    age_seconds: Option.getOrNull(Option.map(fetchedAt, (date) => ageSeconds(date, now))),
    ttl_seconds: config.registry_cache_ttl,
    status: cacheStatus(Option.getOrUndefined(fetchedAt), now, config.registry_cache_ttl),
    extensions: Option.match(cache, { onNone: () => 0, onSome: (header) => header.registry.extensions.length }),
    cache_size_bytes: Option.isSome(cache) ? size : 0
  } satisfies CacheReport
}).pipe(Effect.withSpan("RegistryCache.report"))
