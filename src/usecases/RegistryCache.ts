import { Effect, Option } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import { searchEntries } from "../domain/Registry.js"
import { readCacheReport } from "../registry/CacheFile.js"
import { Registry } from "../registry/Registry.js"

// The registry's cached index as the CLI manages it (docs/registry.md): fetching it into the cache, with
// an optional search of what was fetched, and the cache's report. Neither opens the database.

/** `registry:sync [--force] [--search text]`: the index (fetched unless the cache is fresh), the cache's state, and the matches. */
export const syncRegistry = (request: { readonly force: boolean; readonly search: Option.Option<string> }) =>
  Effect.gen(function*() {
    const registry = yield* Registry
    const result = yield* registry.sync({ force: request.force })
    const cache = yield* registry.status
    const matches = Option.map(request.search, (query) => ({ query, entries: searchEntries(result.index.extensions, query) }))
    return { result, cache, matches }
  })

/** `registry:status`: the cache file's report and the configured registry (an empty url: none). */
export const registryCacheStatus = Effect.gen(function*() {
  const { config } = yield* HostConfig
  return { report: yield* readCacheReport, url: config.registry_url }
})
