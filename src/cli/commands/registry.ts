import { Command, Options } from "@effect/cli"
import { Console, Effect, Layer, Option } from "effect"
import type { RegistryEntry } from "../../domain/Registry.js"
import type { MergedIndex } from "../../registry/Registry.js"
import { registryCacheStatus, syncRegistry } from "../../usecases/RegistryCache.js"
import { CliInvocation } from "../Invocation.js"
import { formatPairs, formatTable, printJson } from "../Output.js"
import { configLayer, type Invocation, registryLayer } from "../Runtime.js"

// registry:sync and registry:status: the use cases of usecases/RegistryCache.ts, rendered.

/**
 * Configuration and the registry, without the database: the registry commands never open it. Files and
 * paths are the platform cli/main.ts provides to every command; NodeContext (a command executor, a worker
 * manager and a terminal besides) cost each registry command about 10 ms of CPU to load and build
 * (docs/decisions.md "registry:sync reads what it wrote once").
 */
const standaloneLayer = (invocation: Invocation) => registryLayer(invocation).pipe(Layer.provideMerge(configLayer(invocation)))

const json = Options.boolean("json").pipe(Options.withDescription("print one JSON document"))

/** What `registry:sync --json` and `--search` show of an entry. */
const entryView = ({ entry, registry }: { readonly entry: RegistryEntry; readonly registry: string }) => ({
  id: entry.id,
  registry,
  name: entry.name,
  description: entry.description,
  latest_version: entry.latest_version,
  versions: entry.versions,
  license: entry.license,
  tags: entry.tags,
  repository: entry.repository ?? null
})

/** A line per registry, each named when there are several (`named`: also when only some of several were synced). */
const syncSummary = (merged: MergedIndex, named = merged.parts.length > 1): string =>
  named ? merged.parts.map((part) => partSummary(part, `${part.registry}: `)).join("\n") : partSummary(merged.parts[0]!, "")

const partSummary = (result: MergedIndex["parts"][number], prefix: string): string => {
  const count = `${result.index.extensions.length} extension${result.index.extensions.length === 1 ? "" : "s"}`
  const serial = result.serial === null ? "" : `, serial ${result.serial}${result.signed ? ", signature verified" : ""}`
  switch (result.source) {
    case "network":
      return `${prefix}Synced ${count} from ${result.url}${serial}.`
    case "cache":
      return `${prefix}The registry cache is fresh (synced ${result.fetchedAt.toISOString()}, ${count}); use --force to fetch it again.`
    case "stale-cache":
      return `${prefix}Using the cached index from ${result.fetchedAt.toISOString()} (${count}).`
  }
}

const truncate = (text: string, width: number) => (text.length > width ? `${text.slice(0, width - 1)}…` : text)

export const registrySyncCommand = Command.make(
  "registry:sync",
  {
    search: Options.text("search").pipe(
      Options.optional,
      Options.withDescription("list the extensions whose id, name, description or tags contain this text")
    ),
    force: Options.boolean("force").pipe(Options.withDescription("fetch the index even when the cache is fresh")),
    json
  },
  (options) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const { cache, failure, matches, result } = yield* syncRegistry({ force: options.force, search: options.search }).pipe(
        Effect.provide(standaloneLayer(invocation))
      )
      // One registry failed: the ones synced are said first (their caches were written), then the failure
      // fails the command with its registry's name and code (docs/registry.md "Several registries").
      if (Option.isSome(failure)) {
        if (!options.json) yield* Console.log(syncSummary(result, true))
        return yield* failure.value
      }
      if (options.json) {
        return yield* printJson({
          registry_url: result.url,
          source: result.source,
          fetched_at: result.fetchedAt.toISOString(),
          updated_at: result.index.updated_at ?? null,
          extensions: result.index.extensions.length,
          cache,
          registries: result.parts.map((part) => ({
            name: part.registry,
            url: part.url,
            source: part.source,
            fetched_at: part.fetchedAt.toISOString(),
            extensions: part.index.extensions.length,
            serial: part.serial,
            expires_at: part.expiresAt,
            signed: part.signed
          })),
          ...(Option.isSome(matches) ? { search: matches.value.query, results: matches.value.entries.map(entryView) } : {})
        })
      }
      yield* Console.log(syncSummary(result))
      if (Option.isSome(matches)) {
        const { entries, query } = matches.value
        if (entries.length === 0) return yield* Console.log(`No extension matches "${query}".`)
        yield* Console.log(`\n${formatTable(
          ["ID", "Name", "Latest", "Registry", "Description"],
          entries.map(({ entry, registry }) => [entry.id, entry.name, entry.latest_version, registry, truncate(entry.description, 60)])
        )}`)
        yield* Console.log(`\n${entries.length} match${entries.length === 1 ? "" : "es"} for "${query}".`)
      }
    })
).pipe(Command.withDescription("Fetch the registry index into the cache (a fresh cache is kept unless --force), or search it"))

export const registryStatusCommand = Command.make(
  "registry:status",
  { json },
  (options) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const { registries, report, url } = yield* registryCacheStatus.pipe(
        Effect.provide(configLayer(invocation))
      )
      if (options.json) {
        return yield* printJson({
          ...report,
          registries: registries.map(({ expires_at, name, serial, signed, status, url }) => ({ name, url, status, serial, expires_at, signed }))
        })
      }
      const ttl = report.ttl_seconds === 0 ? "0 (never expires)" : `${report.ttl_seconds} s`
      // Several registries: one row each (the first's block alone read as if it were the whole status);
      // their cache files are in --json (docs/registry.md "Several registries").
      if (registries.length > 1) {
        return yield* Console.log(`${formatPairs([["TTL", ttl]])}\n\n${formatTable(
          ["Registry", "URL", "Status", "Last sync", "Extensions", "Serial", "Expires", "Signed"],
          registries.map((entry) => [
            entry.name,
            entry.url,
            entry.status,
            entry.last_sync ?? "never",
            String(entry.extensions),
            entry.serial === null ? "-" : String(entry.serial),
            entry.expires_at ?? "-",
            entry.signed ? "yes" : "no"
          ])
        )}`)
      }
      yield* Console.log(formatPairs([
        ["Registry", url === "" ? "not configured" : url],
        ["Cache", report.path],
        ["Status", report.status],
        ["Last sync", report.last_sync ?? "never"],
        ["Age", report.age_seconds === null ? "-" : `${report.age_seconds} s`],
        ["TTL", ttl],
        ["Extensions", String(report.extensions)],
        ["Size", `${report.cache_size_bytes} bytes`]
      ]))
    })
).pipe(Command.withDescription("Show the registry cache: path, last sync, age, TTL, status, extensions, size (a row per registry when there are several)"))
