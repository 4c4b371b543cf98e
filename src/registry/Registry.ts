import { FileSystem, HttpClient, HttpClientRequest, Path } from "@effect/platform"
import { Context, DateTime, Duration, Effect, Either, Layer, Option } from "effect"
import { type ConfiguredRegistry, configuredRegistries, defaultRegistryName, HostConfig } from "../config/HostConfig.js"
import { isWithinJsonDepth, tooDeepJson } from "../domain/JsonDepth.js"
import { problem, type Problem, problemsFromParseError } from "../domain/Problems.js"
import {
  ageSeconds,
  archiveName,
  archiveUrl,
  cacheStatus,
  decodeRegistryIndex,
  expectedSha256,
  formatReference,
  indexUrl,
  isUsable,
  jsonProblem,
  parseReference,
  type RegistryEntry,
  type RegistryIndex,
  type RegistryReference,
  resolveVersion,
  searchEntries,
  signatureUrl
} from "../domain/Registry.js"
import {
  type CacheDocument,
  type CacheHeader,
  cacheReport,
  type CacheReport,
  cachePathOf,
  type CacheTrust,
  readCache,
  resolveRegistryUrl,
  writeCache,
  type WrittenCache
} from "./CacheFile.js"
import { sha256Hex } from "../system/Hash.js"
import { decodeTrustFields, verifyIndexSignature } from "./IndexTrust.js"
import { fetchBytes, type FetchTimeouts } from "./Fetch.js"
import {
  ChecksumMismatch,
  type RegistryCacheError,
  RegistryFetchFailed,
  type RegistryIndexError,
  RegistryIndexExpired,
  RegistryIndexInvalid,
  RegistryIndexRolledBack,
  RegistryIndexSignatureInvalid,
  RegistryIndexUnsigned,
  RegistryLookupFailed,
  RegistryNotConfigured,
  RegistryUnknown
} from "./RegistryErrors.js"

// The Registry service (docs/registry.md): each configured registry's index from `<url>/registry.json`
// (http(s) or file://), checked against the registry's public_key when it has one (signature, serial,
// expiry: "Trust"), behind a cache file per registry with a TTL; search; `vendor/name[@version|@range]`
// resolution in the first registry listing the id ("Several registries"); and verified downloads (size
// limit, progress, sha256 against the index, the detached signature).

export interface RegistryOptions {
  readonly timeouts: FetchTimeouts
}

export const defaultTimeouts: FetchTimeouts = { connect: Duration.seconds(10), total: Duration.seconds(300) }

/** How long one service instance keeps the index it loaded before looking at the cache again. */
const memoTtl = Duration.seconds(30)

/** An index larger than this is refused (the archives have their own limit, `limits.archive_bytes`). */
export const maxIndexBytes = 32 * 1024 * 1024
/** A detached signature is 128 hex characters; anything much larger is not one. */
const maxSignatureBytes = 4096

const secondsFrom = (text: string | undefined): Duration.Duration | undefined => {
  if (text === undefined || text.trim() === "") return undefined
  const value = Number(text)
  return Number.isFinite(value) && value > 0 ? Duration.millis(Math.round(value * 1000)) : undefined
}

/**
 * Timeouts from `HOST_REGISTRY_CONNECT_TIMEOUT` (seconds until the server answers, default 10) and
 * `HOST_REGISTRY_TIMEOUT` (seconds for a whole transfer, default 300). Invalid values are named.
 */
export const optionsFromEnv = (env: Readonly<Record<string, string | undefined>>): {
  readonly options: RegistryOptions
  readonly warnings: ReadonlyArray<string>
} => {
  const warnings: Array<string> = []
  const read = (name: string, fallback: Duration.DurationInput) => {
    const text = env[name]
    const value = secondsFrom(text)
    if (text !== undefined && text.trim() !== "" && value === undefined) {
      warnings.push(`${name}="${text}" is not a positive number of seconds; using ${Duration.format(Duration.decode(fallback))}`)
    }
    return value ?? fallback
  }
  return {
    options: {
      timeouts: {
        connect: read("HOST_REGISTRY_CONNECT_TIMEOUT", defaultTimeouts.connect),
        total: read("HOST_REGISTRY_TIMEOUT", defaultTimeouts.total)
      }
    },
    warnings
  }
}

/** The index of one registry and where it came from this time. */
export interface IndexResult {
  /** The registry's name (`default` for registry_url). */
  readonly registry: string
  readonly url: string
  readonly index: RegistryIndex
  readonly fetchedAt: Date
  /** `network`: fetched now; `cache`: the cache was fresh; `stale-cache`: the registry failed, the cache stood in. */
  readonly source: "network" | "cache" | "stale-cache"
  /** Why the stale cache was used. */
  readonly warning?: string
  /** The index's serial and expiry, when it has them; whether it was verified with the registry's key. */
  readonly serial: number | null
  readonly expiresAt: string | null
  readonly signed: boolean
}

/**
 * Every configured registry's index together (docs/registry.md "Several registries"). Its `index` lists
 * each id once, from the first registry that lists it (the resolution rule); `url`, `fetchedAt` and
 * `source` are the first registry's; `parts` are the registries one by one.
 */
export interface MergedIndex extends IndexResult {
  /** Which registry each id of `index` comes from. */
  readonly origins: ReadonlyMap<string, string>
  readonly parts: ReadonlyArray<IndexResult>
}

/** What `sync` did: the registries it synced, merged, and the first that failed (none when all were synced). */
export interface SyncOutcome {
  readonly synced: MergedIndex
  readonly failure: Option.Option<RegistryIndexError | RegistryCacheError>
}

/** A search hit: an entry and the registry listing it. */
export interface RegistryHit {
  readonly registry: string
  readonly entry: RegistryEntry
}

/** A reference resolved against the index: what to download and how to check it. */
export interface ResolvedExtension {
  readonly id: string
  readonly version: string
  /** What was asked for (`^1.2`, `1.2.3`), undefined for the latest. */
  readonly range: string | undefined
  /** The registry that lists it. */
  readonly registry: string
  readonly entry: RegistryEntry
  readonly archiveName: string
  readonly archiveUrl: string
  readonly signatureUrl: string
  /** The digest the index lists for this version, when it lists one. */
  readonly sha256: string | undefined
}

export interface DownloadedArchive {
  readonly url: string
  readonly bytes: Uint8Array
  readonly sha256: string
  /** Whether the index listed a sha256 that the download matched. */
  readonly sha256Checked: boolean
  readonly detachedSignature: string | undefined
}

export interface DownloadOptions {
  readonly onProgress?: ((received: number, total: number | undefined) => Effect.Effect<void>) | undefined
}

export interface ResolveOptions {
  /** Resolve in this registry only (`--registry NAME`, `registry:` in the desired state). */
  readonly registry?: string | undefined
}

export interface RegistryService {
  /** The first registry's URL ("" when none is configured). */
  readonly url: string
  /** The first registry's cache file. */
  readonly cachePath: string
  /** The configured registries in resolution order. */
  readonly registries: ReadonlyArray<ConfiguredRegistry>
  /**
   * Every registry's index: a fresh cache as it is, else fetched (and cached), else a stale cache with a
   * warning. The answer (a failure too) is kept for 30 s, so resolving many ids asks once.
   */
  readonly index: Effect.Effect<MergedIndex, RegistryIndexError>
  /**
   * Fetches each registry unless its cache is fresh (`force`: always). Every registry is tried, and a failing
   * registry's cache is left as it was. It fails when none could be synced; otherwise it answers the ones that
   * were, with the first failure (naming its registry), which the caller reports after them.
   */
  readonly sync: (options: { readonly force: boolean }) => Effect.Effect<SyncOutcome, RegistryIndexError | RegistryCacheError>
  readonly status: Effect.Effect<CacheReport>
  /** Matches in every registry, each with its registry (an id listed by two shows twice). */
  readonly search: (query: string) => Effect.Effect<ReadonlyArray<RegistryHit>, RegistryIndexError>
  readonly resolve: (
    reference: string | RegistryReference,
    options?: ResolveOptions
  ) => Effect.Effect<ResolvedExtension, RegistryIndexError | RegistryLookupFailed>
  readonly download: (
    resolved: ResolvedExtension,
    options?: DownloadOptions
  ) => Effect.Effect<DownloadedArchive, RegistryFetchFailed | ChecksumMismatch>
}

export class Registry extends Context.Tag("host/Registry")<Registry, RegistryService>() {}

const formatAge = (seconds: number): string => {
  if (seconds < 120) return `${seconds} s`
  if (seconds < 2 * 3600) return `${Math.floor(seconds / 60)} min`
  if (seconds < 48 * 3600) return `${Math.floor(seconds / 3600)} h`
  return `${Math.floor(seconds / 86400)} days`
}

export { resolveRegistryUrl }

/** What every step below works with: one configured registry, the HTTP client and its cache file. */
interface RegistrySource {
  readonly client: HttpClient.HttpClient
  readonly name: string
  /**
   * The name as messages give it: undefined when registry_url is the only registry, whose messages stay
   * as they were before there were several (the URL names it).
   */
  readonly label: string | undefined
  readonly registryUrl: string
  /** The registry's public_key (lowercase): its index must be signed by it. */
  readonly publicKey: string | undefined
  readonly config: Context.Tag.Service<HostConfig>["config"]
  readonly cachePath: string
  readonly timeouts: FetchTimeouts
  /**
   * What this service last wrote to each cache file: a report on a file still holding those bytes reads
   * them from here (registry/CacheFile.ts `cacheReport`).
   */
  readonly written: Map<string, WrittenCache>
  /** The file system for the cache file and `file://` registries. */
  readonly provide: <A, E>(effect: Effect.Effect<A, E, FileSystem.FileSystem | Path.Path>) => Effect.Effect<A, E>
}

// ---- the index ------------------------------------------------------------------------------------------

/** An index as fetched and checked, with what the cache remembers of it. */
interface FetchedIndex {
  readonly index: RegistryIndex
  readonly trust: CacheTrust
}

/** Names the registry in a fetch failure of its index or signature. */
const fetchNamed = (source: RegistrySource) => (error: RegistryFetchFailed) =>
  new RegistryFetchFailed({
    url: error.url,
    reason: error.reason,
    detail: error.detail,
    ...(source.label === undefined ? {} : { registry: source.label })
  })

const fetchIndex = Effect.fn("Registry.fetchIndex")(function*(source: RegistrySource, highestSerial: number | undefined) {
  const url = indexUrl(source.registryUrl)
  const invalid = (problems: ReadonlyArray<Problem>) =>
    new RegistryIndexInvalid({ url, problems, ...(source.label === undefined ? {} : { registry: source.label }) })
  const bytes = yield* source.provide(fetchBytes(source.client, url, { maxBytes: maxIndexBytes, timeouts: source.timeouts })).pipe(
    Effect.mapError(fetchNamed(source))
  )
  // The signature is checked over the exact bytes before they are parsed (docs/registry.md "Trust").
  if (source.publicKey !== undefined) {
    const sigUrl = `${url}.sig`
    const signature = yield* source.provide(fetchBytes(source.client, sigUrl, { maxBytes: maxSignatureBytes, timeouts: source.timeouts })).pipe(
      Effect.mapError(fetchNamed(source)),
      Effect.catchIf((error) => error.reason === "not-found", (error) =>
        Effect.fail(new RegistryIndexUnsigned({ registry: source.name, url, detail: error.detail })))
    )
    const problem = yield* verifyIndexSignature(new TextDecoder().decode(signature).trim(), bytes, source.publicKey)
    if (problem !== undefined) return yield* new RegistryIndexSignatureInvalid({ registry: source.name, url: sigUrl, detail: problem })
  }
  const text = new TextDecoder().decode(bytes)
  // Counted before parsing and before the schema, whose messages format the value (docs/decisions.md "JSON from outside nests at most 64 levels").
  if (!isWithinJsonDepth(text)) return yield* invalid([problem("(json)", tooDeepJson)])
  const raw = yield* Effect.try({ try: () => JSON.parse(text) as unknown, catch: (error) => invalid(jsonProblem(error)) })
  const index = yield* Either.match(decodeRegistryIndex(raw), {
    onLeft: (error) => Effect.fail(invalid(problemsFromParseError(error))),
    onRight: Effect.succeed
  })
  const fields = yield* Either.match(decodeTrustFields(raw), {
    onLeft: (error) => Effect.fail(invalid(problemsFromParseError(error))),
    onRight: Effect.succeed
  })
  const serial = fields.serial
  const expiresAt = fields.expires_at?.toISOString()
  if (source.publicKey !== undefined) {
    if (highestSerial !== undefined && (serial === undefined || serial < highestSerial)) {
      return yield* new RegistryIndexRolledBack({ registry: source.name, serial: serial ?? null, accepted: highestSerial })
    }
    const now = DateTime.toDateUtc(yield* DateTime.now)
    if (fields.expires_at === undefined || fields.expires_at.getTime() <= now.getTime()) {
      return yield* new RegistryIndexExpired({ registry: source.name, expiresAt: expiresAt ?? null })
    }
  }
  return {
    index,
    trust: {
      ...(source.publicKey === undefined ? {} : { signed_by: source.publicKey }),
      ...(serial === undefined ? {} : { serial }),
      ...(highestSerial === undefined && serial === undefined ? {} : { highest_serial: Math.max(highestSerial ?? 0, serial ?? 0) }),
      ...(expiresAt === undefined ? {} : { expires_at: expiresAt })
    }
  } satisfies FetchedIndex
})

/** Writes a fetched index to the registry's cache file, and remembers what was written there (for `status`). */
const writeFetched = (source: RegistrySource) => (fetchedAt: Date, fetched: FetchedIndex) =>
  source.provide(writeCache(source.cachePath, { fetched_at: fetchedAt, registry_url: source.registryUrl, registry: fetched.index, ...fetched.trust })).pipe(
    Effect.map((written) => {
      source.written.set(source.cachePath, written)
    })
  )

/** The cache file as `loadIndex` uses it: its header now, its index when it is used. */
interface CachedIndex {
  readonly header: CacheHeader
  /** The whole document; undefined (with a warning) when its index is unreadable. */
  readonly document: Effect.Effect<CacheDocument | undefined>
}

/**
 * The cache file when it is of this registry (a cache of another URL does not count) and, for a keyed
 * registry, was verified with this key; and the highest serial accepted from the registry, which
 * counts as long as the URL and key are the same. Its index is decoded only when it is used (a sync
 * that fetches anyway never decodes it).
 */
const cachedIndex = (source: RegistrySource, indexLater: boolean) =>
  Effect.gen(function*() {
    const unreadable = (detail: string) =>
      Effect.logWarning(`the registry cache ${source.cachePath} is unreadable and is ignored: ${detail}`)
    const read = yield* source.provide(readCache(source.cachePath, { indexLater }))
    if (read._tag === "Unreadable") yield* unreadable(read.detail)
    if (read._tag !== "Read") return { cache: undefined, highestSerial: undefined }
    const header = read.header
    const sameRegistry = header.registry_url === undefined || header.registry_url === source.registryUrl
    const sameKey = source.publicKey === undefined || header.signed_by === source.publicKey
    // Decoded (and warned about) once, though the fresh-cache path and the stale fallback may both ask.
    const document = yield* Effect.cached(Effect.suspend(() =>
      Either.match(read.document(), {
        onLeft: (detail) => Effect.as(unreadable(detail), undefined),
        onRight: (decoded) => Effect.succeed(decoded)
      })
    ))
    const cache: CachedIndex = { header, document }
    return {
      cache: sameRegistry && sameKey ? cache : undefined,
      highestSerial: sameRegistry && sameKey ? header.highest_serial ?? header.serial : undefined
    }
  })

const resultOf = (source: RegistrySource, cache: CacheDocument, origin: IndexResult["source"], warning?: string): IndexResult => ({
  registry: source.name,
  url: source.registryUrl,
  index: cache.registry,
  fetchedAt: cache.fetched_at,
  source: origin,
  ...(warning === undefined ? {} : { warning }),
  serial: cache.serial ?? null,
  expiresAt: cache.expires_at ?? null,
  signed: source.publicKey !== undefined && cache.signed_by === source.publicKey
})

/** Whether a cached index of a keyed registry is past its expires_at (then it is not used, not even stale). */
const cacheExpired = (source: RegistrySource, cache: CacheHeader, now: Date) =>
  source.publicKey !== undefined && (cache.expires_at === undefined || new Date(cache.expires_at).getTime() <= now.getTime())

/**
 * `store` writes the fetched index to the cache (and decides what a failed write means). `staleFallback`:
 * whether a registry that cannot be fetched may be stood in for by its stale cache.
 */
const loadIndex = <E>(
  source: RegistrySource,
  force: boolean,
  store: (fetchedAt: Date, fetched: FetchedIndex) => Effect.Effect<void, E>,
  staleFallback = true
) =>
  Effect.gen(function*() {
    const at = DateTime.toDateUtc(yield* DateTime.now)
    // A forced sync reads the old cache for its header (the highest serial accepted), and its index only
    // to stand in for a registry that cannot be fetched.
    const readCached = Effect.map(cachedIndex(source, force), ({ cache, highestSerial }) => ({
      cached: cache !== undefined && cacheExpired(source, cache.header, at) ? undefined : cache,
      highestSerial
    }))
    // The cache is read first unless the index is fetched anyway and no serial from it counts: a forced sync
    // of a registry without a key reads it only to stand in for a registry that cannot be fetched.
    const early = !force || source.publicKey !== undefined ? yield* readCached : undefined
    const cached = early?.cached
    if (!force && cached !== undefined && isUsable(cacheStatus(cached.header.fetched_at, at, source.config.registry_cache_ttl))) {
      const document = yield* cached.document
      if (document !== undefined) return resultOf(source, document, "cache")
    }
    const fetched = yield* Effect.either(fetchIndex(source, early?.highestSerial))
    if (Either.isRight(fetched)) {
      yield* store(at, fetched.right)
      return resultOf(source, { fetched_at: at, registry_url: source.registryUrl, registry: fetched.right.index, ...fetched.right.trust }, "network")
    }
    // A keyed registry's refused index is never papered over by the cache: only an unreachable registry is
    // (docs/registry.md "Trust"). A registry without a key falls back as it always did.
    const fallsBack = fetched.left._tag === "RegistryFetchFailed" ||
      (fetched.left._tag === "RegistryIndexInvalid" && source.publicKey === undefined)
    const fallback = !fallsBack || !staleFallback ? undefined : (early ?? (yield* readCached)).cached
    const stale = fallback === undefined ? undefined : yield* fallback.document
    if (stale === undefined) return yield* fetched.left
    const warning = `${fetched.left.message}; using the cached index from ${stale.fetched_at.toISOString()} (${
      formatAge(ageSeconds(stale.fetched_at, at))
    } old)`
    yield* Effect.logWarning(warning)
    return resultOf(source, stale, "stale-cache", warning)
  }).pipe(Effect.withSpan("Registry.index", { attributes: { force, registry: source.name } }))

/**
 * The registries' indexes as one: each id from the first registry listing it. The union (`index` and
 * `origins`) is made when first read: a `registry:sync` that only reports each registry's count never reads
 * it, and making it cost thousands of map insertions (docs/decisions.md "registry:sync: fewer, larger steps").
 */
const mergeIndexes = (parts: ReadonlyArray<IndexResult>): MergedIndex => {
  const first = parts[0]!
  let union: { readonly index: RegistryIndex; readonly origins: ReadonlyMap<string, string> } | undefined
  const unite = () => {
    if (union !== undefined) return union
    const origins = new Map<string, string>()
    const extensions: Array<RegistryEntry> = []
    for (let at = 0; at < parts.length; at++) {
      const part = parts[at]!
      const entries = part.index.extensions
      for (let position = 0; position < entries.length; position++) {
        const entry = entries[position]!
        if (origins.has(entry.id)) continue
        origins.set(entry.id, part.registry)
        extensions.push(entry)
      }
    }
    return (union = { index: { ...first.index, extensions }, origins })
  }
  const warnings = parts.flatMap((part) => (part.warning === undefined ? [] : [part.warning]))
  return {
    ...first,
    get index() {
      return unite().index
    },
    ...(warnings.length === 0 ? {} : { warning: warnings.join("; ") }),
    get origins() {
      return unite().origins
    },
    parts
  }
}

// ---- one extension ------------------------------------------------------------------------------------------

const lookupFailed = (reference: string, reason: RegistryLookupFailed["reason"], detail: string) =>
  new RegistryLookupFailed({ reference, reason, detail })

/**
 * Resolves in the named registry, else in the first registry (in order) whose index lists the id: the
 * later ones are asked only when the earlier ones do not list it, and the versions come from that one
 * registry alone (no dependency confusion, docs/registry.md "Several registries").
 */
const resolve = Effect.fn("Registry.resolve")(function*(
  sources: ReadonlyArray<{ readonly source: RegistrySource; readonly index: Effect.Effect<IndexResult, RegistryIndexError> }>,
  reference: string | RegistryReference,
  options: ResolveOptions
) {
  const text = typeof reference === "string" ? reference : formatReference(reference)
  const parsed = typeof reference === "string" ? parseReference(reference) : Either.right(reference)
  if (Either.isLeft(parsed)) return yield* lookupFailed(text, "invalid-reference", parsed.left)
  const { id, range } = parsed.right
  if (sources.length === 0) return yield* new RegistryNotConfigured()
  const candidates = options.registry === undefined ? sources : sources.filter(({ source }) => source.name === options.registry)
  if (candidates.length === 0) {
    return yield* new RegistryUnknown({ name: options.registry!, configured: sources.map(({ source }) => source.name) })
  }
  let found: { readonly source: RegistrySource; readonly entry: RegistryEntry } | undefined
  for (const candidate of candidates) {
    const { index: current } = yield* candidate.index
    const entry = current.extensions.find((listed) => listed.id === id)
    if (entry !== undefined) {
      found = { source: candidate.source, entry }
      break
    }
  }
  if (found === undefined) {
    const where = candidates.length === 1
      ? sources.length === 1 ? `the registry ${candidates[0]!.source.registryUrl}` : `the registry "${candidates[0]!.source.name}" (${candidates[0]!.source.registryUrl})`
      : `none of the registries ${candidates.map(({ source }) => source.name).join(", ")}`
    return yield* lookupFailed(text, "unknown-extension", candidates.length === 1 ? `${where} has no such extension` : `${where} lists it`)
  }
  const { entry, source } = found
  const version = resolveVersion(entry, range)
  if (Either.isLeft(version)) return yield* lookupFailed(text, "no-matching-version", version.left)
  const archive = archiveUrl(entry, version.right, source.registryUrl)
  if (Either.isLeft(archive)) return yield* lookupFailed(text, "bad-url", archive.left)
  const signature = signatureUrl(entry, version.right, source.registryUrl)
  if (Either.isLeft(signature)) return yield* lookupFailed(text, "bad-url", signature.left)
  return {
    id,
    version: version.right,
    range,
    registry: source.name,
    entry,
    archiveName: archiveName(id, version.right),
    archiveUrl: archive.right,
    signatureUrl: signature.right,
    sha256: expectedSha256(entry, version.right)
  } satisfies ResolvedExtension
})

/**
 * The detached signature, fetched when the policy needs one or the index names one; a missing one is not
 * an error here (the archive may carry signature.json; the policy decides).
 */
const detachedSignatureOf = (source: RegistrySource, resolved: ResolvedExtension) =>
  (source.config.require_signatures || resolved.entry.signature_url !== undefined
    ? source.provide(fetchBytes(source.client, resolved.signatureUrl, { maxBytes: maxSignatureBytes, timeouts: source.timeouts })).pipe(
      Effect.map((signature) => Option.some(new TextDecoder().decode(signature).trim())),
      Effect.catchIf((error) => error.reason === "not-found", () => Effect.succeedNone)
    )
    : Effect.succeedNone).pipe(Effect.map(Option.getOrUndefined))

const download = (source: RegistrySource, resolved: ResolvedExtension, downloadOptions: DownloadOptions = {}) =>
  Effect.gen(function*() {
    const bytes = yield* source.provide(fetchBytes(source.client, resolved.archiveUrl, {
      maxBytes: source.config.limits.archive_bytes,
      timeouts: source.timeouts,
      onProgress: downloadOptions.onProgress
    }))
    const sha256 = sha256Hex(bytes)
    if (resolved.sha256 !== undefined && resolved.sha256 !== sha256) {
      return yield* new ChecksumMismatch({ url: resolved.archiveUrl, expected: resolved.sha256, actual: sha256 })
    }
    return {
      url: resolved.archiveUrl,
      bytes,
      sha256,
      sha256Checked: resolved.sha256 !== undefined,
      detachedSignature: yield* detachedSignatureOf(source, resolved)
    } satisfies DownloadedArchive
  }).pipe(Effect.withSpan("Registry.download", { attributes: { id: resolved.id, version: resolved.version } }))

/** Runs every step (in registry order); answers what succeeded and the first failure, or fails with that failure when none succeeded. */
const settled = <A, E>(steps: ReadonlyArray<Effect.Effect<A, E>>): Effect.Effect<{ readonly successes: ReadonlyArray<A>; readonly failure: Option.Option<E> }, E> =>
  Effect.flatMap(Effect.all(steps.map(Effect.either)), (outcomes) => {
    const successes = outcomes.filter(Either.isRight).map((outcome) => outcome.right)
    const failed = outcomes.find(Either.isLeft)
    if (failed !== undefined && successes.length === 0) return Effect.fail(failed.left)
    return Effect.succeed({ successes, failure: failed === undefined ? Option.none() : Option.some(failed.left) })
  })

/** Every step's answer, or the first failure in registry order (each step is run either way). */
const allOrFirstFailure = <A, E>(steps: ReadonlyArray<Effect.Effect<A, E>>): Effect.Effect<ReadonlyArray<A>, E> =>
  Effect.flatMap(settled(steps), ({ failure, successes }) => Option.isSome(failure) ? Effect.fail(failure.value) : Effect.succeed(successes))

export const make = (options: RegistryOptions = { timeouts: defaultTimeouts }) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const { config, paths } = yield* HostConfig
    const client = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest(HttpClientRequest.setHeader("user-agent", `host/${config.version}`)),
      HttpClient.followRedirects(5),
      HttpClient.withTracerPropagation(false)
    )
    const configured = configuredRegistries(config)
    const written = new Map<string, WrittenCache>()
    const sources = configured.map((registry): RegistrySource => ({
      client,
      name: registry.name,
      label: configured.length === 1 && registry.name === defaultRegistryName ? undefined : registry.name,
      registryUrl: resolveRegistryUrl(registry.url, paths.root),
      publicKey: registry.publicKey,
      config,
      cachePath: cachePathOf(paths.registryCache, registry.name),
      timeouts: options.timeouts,
      written,
      provide: (effect) => effect.pipe(Effect.provideService(FileSystem.FileSystem, fs), Effect.provideService(Path.Path, path))
    }))

    // One answer per registry per memoTtl (failures too): a command resolving many ids asks once, and a
    // long-running server still sees a new sync.
    const perRegistry = yield* Effect.forEach(sources, (source) =>
      Effect.map(
        Effect.cachedInvalidateWithTTL(
          loadIndex(source, false, (fetchedAt, fetched) =>
            writeFetched(source)(fetchedAt, fetched).pipe(Effect.catchAll((error) => Effect.logWarning(error.message)))),
          memoTtl
        ),
        ([index, invalidate]) => ({ source, index, invalidate })
      ))
    const index: Effect.Effect<MergedIndex, RegistryIndexError> = perRegistry.length === 0
      ? Effect.fail(new RegistryNotConfigured())
      : Effect.map(allOrFirstFailure(perRegistry.map((entry) => entry.index)), mergeIndexes)
    const first = sources[0]

    return Registry.of({
      url: first?.registryUrl ?? "",
      cachePath: first?.cachePath ?? paths.registryCache,
      registries: configured,
      index,
      sync: ({ force }) =>
        perRegistry.length === 0
          ? Effect.fail(new RegistryNotConfigured())
          : Effect.map(
            // With named registries, `registry:sync` fails for one it cannot fetch (naming it; its cache is kept
            // as it was) once the others were synced and reported; registry_url alone keeps its stale cache with
            // a warning, as before (docs/registry.md "Several registries").
            settled(perRegistry.map(({ invalidate, source }) =>
              Effect.zipLeft(loadIndex(source, force, writeFetched(source), source.label === undefined), invalidate))),
            ({ failure, successes }): SyncOutcome => ({ synced: mergeIndexes(successes), failure })
          ),
      status: Effect.suspend(() => {
        const cachePath = first?.cachePath ?? paths.registryCache
        return source_provide(fs, path)(cacheReport(cachePath, config.registry_cache_ttl, written.get(cachePath)))
      }),
      search: (query) =>
        Effect.map(index, (merged) =>
          merged.parts.flatMap((part) => searchEntries(part.index.extensions, query).map((entry) => ({ registry: part.registry, entry })))),
      resolve: (reference, resolveOptions = {}) => resolve(perRegistry, reference, resolveOptions),
      download: (resolved, downloadOptions) =>
        download(sources.find((source) => source.name === resolved.registry) ?? sources[0]!, resolved, downloadOptions)
    })
  })

const source_provide = (fs: FileSystem.FileSystem, path: Path.Path) => <A, E>(effect: Effect.Effect<A, E, FileSystem.FileSystem | Path.Path>) =>
  effect.pipe(Effect.provideService(FileSystem.FileSystem, fs), Effect.provideService(Path.Path, path))

/** The service over a given HttpClient (tests may pass their own). */
export const layer = (
  options: RegistryOptions = { timeouts: defaultTimeouts }
): Layer.Layer<Registry, never, HostConfig | FileSystem.FileSystem | Path.Path | HttpClient.HttpClient> =>
  Layer.effect(Registry, make(options))

/**
 * Node's HTTP client, made on the first request: every operation's layer includes the registry, and
 * loading Node's http, https and tls modules would cost each command several milliseconds of its start
 * although most never reach a registry (docs/architecture.md, "Startup").
 */
const lazyNodeHttpClient = Layer.scoped(
  HttpClient.HttpClient,
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const real = yield* Effect.cached(
      Effect.flatMap(Effect.promise(() => import("@effect/platform-node/NodeHttpClient")), (NodeHttpClient) =>
        Effect.map(Layer.buildWithScope(NodeHttpClient.layer, scope), Context.get(HttpClient.HttpClient)))
    )
    return HttpClient.make((request) => Effect.flatMap(real, (client) => client.execute(request)))
  })
)

/** The service with Node's HTTP client. */
export const layerNode = (
  options: RegistryOptions = { timeouts: defaultTimeouts }
): Layer.Layer<Registry, never, HostConfig | FileSystem.FileSystem | Path.Path> =>
  layer(options).pipe(Layer.provide(lazyNodeHttpClient))
