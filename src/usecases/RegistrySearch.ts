import { Effect } from "effect"
import { availableVersions, newerVersion, searchEntries } from "../domain/Registry.js"
import { Registry } from "../registry/Registry.js"
import { RegistryUnset } from "./Errors.js"
import { currentVersions, installedList } from "./Facts.js"
import { requiresReport } from "./Requires.js"
import type { RegistryEntry, RegistrySearchMeta } from "./Views.js"

// The Registry screen's search (docs/admin.md): the index's entries matching a query, each with its
// versions, `requires` checked against this panel, and what is installed of it.

export const searchRegistry = (query: string) =>
  Effect.gen(function*() {
    const registry = yield* Registry
    if (registry.url === "") return yield* new RegistryUnset()
    const result = yield* registry.index
    const installed = new Map((yield* installedList).map((record) => [record.extensionId, record]))
    const versions = yield* currentVersions
    const hits = result.parts.flatMap((part) => searchEntries(part.index.extensions, query).map((entry) => ({ registry: part.registry, entry })))
    const data = hits.map(({ entry, registry: from }): RegistryEntry => {
      const record = installed.get(entry.id)
      const requires = requiresReport(entry.requires, versions)
      const resolvesHere = result.origins.get(entry.id) === from
      // An update is offered from the registry the extension was installed from (else from where it resolves).
      const updatesFromHere = record !== undefined && record.source.type === "registry" &&
        (record.source.registry === undefined || !result.origins.has(entry.id) ? resolvesHere : record.source.registry === from)
      return {
        id: entry.id,
        registry: from,
        resolvesHere,
        name: entry.name,
        description: entry.description,
        tags: entry.tags,
        license: entry.license,
        authors: entry.authors,
        repository: entry.repository ?? null,
        latest: entry.latest_version,
        versions: availableVersions(entry).map((version) => ({ version, requires: requires.ok, latest: version === entry.latest_version })),
        requires,
        dependencies: entry.dependencies,
        installed: record === undefined
          ? null
          : { version: record.version, enabled: record.enabled, source: record.source.type, registry: record.source.registry ?? null },
        updateAvailable: record === undefined || !updatesFromHere ? null : newerVersion(entry, record.version) ?? null
      }
    })
    const meta: RegistrySearchMeta = {
      url: result.url,
      source: result.source,
      fetchedAt: result.fetchedAt.toISOString(),
      warning: result.warning ?? null,
      query,
      registries: result.parts.map((part) => ({
        name: part.registry,
        url: part.url,
        source: part.source,
        fetchedAt: part.fetchedAt.toISOString(),
        extensions: part.index.extensions.length,
        signed: part.signed
      }))
    }
    return { data, meta }
  })
