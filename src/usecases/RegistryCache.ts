import { Effect, Option } from "effect"
import { searchEntries } from "../domain/Registry.js"
import { readCacheReport, readRegistriesReport } from "../registry/CacheFile.js"
import { Registry } from "../registry/Registry.js"

// The registry's cached index as the CLI manages it (docs/registry.md): fetching it into the cache, with
// an optional search of what was fetched, and the cache's report. Neither opens the database.

/**
 * `registry:sync [--force] [--search text]`: the index (fetched unless the cache is fresh), the cache's state,
 * and the matches; with several registries, also the first that could not be synced (`failure`), which the
 * front door reports after the ones that were.
 */
export const syncRegistry = (request: { readonly force: boolean; readonly search: Option.Option<string> }) =>
  Effect.gen(function*() {
    const registry = yield* Registry
    const { failure, synced: result } = yield* registry.sync({ force: request.force })
    const cache = yield* registry.status
    // Each registry's matches, with its name (an id listed by two registries shows twice; the first wins when resolving).
    const matches = Option.map(request.search, (query) => ({
      query,
      entries: result.parts.flatMap((part) => searchEntries(part.index.extensions, query).map((entry) => ({ registry: part.registry, entry })))
    }))
    return { result, cache, matches, failure }
  })

/** `registry:status`: the first registry's cache report and URL (empty: none), and every registry's. */
export const registryCacheStatus = Effect.gen(function*() {
  const registries = yield* readRegistriesReport
  return { report: yield* readCacheReport, url: registries[0]?.url ?? "", registries }
})
