import { FileSystem, HttpClient, HttpClientRequest, Path } from "@effect/platform"
import { Context, DateTime, Duration, Effect, Either, Layer, Option, Schema } from "effect"
import { createHash } from "node:crypto"
import { resolve as resolvePath } from "node:path"
import { pathToFileURL } from "node:url"
import { HostConfig } from "../config/HostConfig.js"
import { isWithinJsonDepth, tooDeepJson } from "../domain/JsonDepth.js"
import { problem, problemsFromParseError } from "../domain/Problems.js"
import {
  ageSeconds,
  archiveName,
  archiveUrl,
  cacheStatus,
  expectedSha256,
  formatReference,
  indexUrl,
  isUsable,
  jsonProblem,
  parseReference,
  type RegistryEntry,
  RegistryIndex,
  type RegistryReference,
  resolveVersion,
  searchEntries,
  signatureUrl
} from "../domain/Registry.js"
import { cacheReport, type CacheReport, readCache, writeCache } from "./CacheFile.js"
import { fetchBytes, type FetchTimeouts } from "./Fetch.js"
import {
  ChecksumMismatch,
  type RegistryCacheError,
  RegistryFetchFailed,
  type RegistryIndexError,
  RegistryIndexInvalid,
  RegistryLookupFailed,
  RegistryNotConfigured
} from "./RegistryErrors.js"

// The Registry service (docs/registry.md): the index from `<registry_url>/registry.json` (http(s) or
// file://) behind a cache file with a TTL; search; `vendor/name[@version|@range]` resolution; and
// verified downloads (size limit, progress, sha256 against the index, the detached signature).

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

/** The index and where it came from this time. */
export interface IndexResult {
  readonly url: string
  readonly index: RegistryIndex
  readonly fetchedAt: Date
  /** `network`: fetched now; `cache`: the cache was fresh; `stale-cache`: the registry failed, the cache stood in. */
  readonly source: "network" | "cache" | "stale-cache"
  /** Why the stale cache was used. */
  readonly warning?: string
}

/** A reference resolved against the index: what to download and how to check it. */
export interface ResolvedExtension {
  readonly id: string
  readonly version: string
  /** What was asked for (`^1.2`, `1.2.3`), undefined for the latest. */
  readonly range: string | undefined
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

export interface RegistryService {
  /** `registry_url` ("" when none is configured). */
  readonly url: string
  readonly cachePath: string
  /**
   * The index: a fresh cache as it is, else fetched (and cached), else a stale cache with a warning.
   * The answer (a failure too) is kept for 30 s, so resolving many ids asks once.
   */
  readonly index: Effect.Effect<IndexResult, RegistryIndexError>
  /** Fetches unless the cache is fresh (`force`: always); a cache that cannot be written fails it. */
  readonly sync: (options: { readonly force: boolean }) => Effect.Effect<IndexResult, RegistryIndexError | RegistryCacheError>
  readonly status: Effect.Effect<CacheReport>
  readonly search: (query: string) => Effect.Effect<ReadonlyArray<RegistryEntry>, RegistryIndexError>
  readonly resolve: (
    reference: string | RegistryReference
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

const decodeIndex = Schema.decodeUnknownEither(RegistryIndex, { errors: "all" })

/**
 * `registry_url` as fetched: `file://./dir` and `file://../dir` (a relative path, which a URL cannot
 * hold) are read relative to the panel root, so a checked-in config can point at a registry inside it.
 */
export const resolveRegistryUrl = (configured: string, root: string): string => {
  const relative = /^file:\/\/(\.\.?\/.*|\.\.?)$/.exec(configured)
  const url = relative === null ? configured : pathToFileURL(resolvePath(root, relative[1]!)).href
  return url.replace(/\/+$/, "")
}

/** What every step below works with: the configured registry, the HTTP client and the cache file's place. */
interface RegistrySource {
  readonly client: HttpClient.HttpClient
  readonly registryUrl: string
  readonly config: Context.Tag.Service<HostConfig>["config"]
  readonly cachePath: string
  readonly timeouts: FetchTimeouts
  /** The file system for the cache file and `file://` registries. */
  readonly provide: <A, E>(effect: Effect.Effect<A, E, FileSystem.FileSystem | Path.Path>) => Effect.Effect<A, E>
}

// ---- the index ------------------------------------------------------------------------------------------

const fetchIndex = Effect.fn("Registry.fetchIndex")(function*(source: RegistrySource) {
  const url = indexUrl(source.registryUrl)
  const bytes = yield* source.provide(fetchBytes(source.client, url, { maxBytes: maxIndexBytes, timeouts: source.timeouts }))
  const text = new TextDecoder().decode(bytes)
  // Counted before parsing and before the schema, whose messages format the value (docs/decisions.md "JSON from outside nests at most 64 levels").
  if (!isWithinJsonDepth(text)) return yield* new RegistryIndexInvalid({ url, problems: [problem("(json)", tooDeepJson)] })
  const raw = yield* Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (error) => new RegistryIndexInvalid({ url, problems: jsonProblem(error) })
  })
  return yield* Either.match(decodeIndex(raw), {
    onLeft: (error) => Effect.fail(new RegistryIndexInvalid({ url, problems: problemsFromParseError(error) })),
    onRight: Effect.succeed
  })
})

const writeFetched = (source: RegistrySource) => (fetchedAt: Date, fetched: RegistryIndex) =>
  source.provide(writeCache(source.cachePath, { fetched_at: fetchedAt, registry_url: source.registryUrl, registry: fetched }))

/** The cache file's index when it is of this registry; a cache of another one (registry_url changed) does not count. */
const cachedIndex = (source: RegistrySource) =>
  Effect.gen(function*() {
    const read = yield* source.provide(readCache(source.cachePath))
    if (read._tag === "Unreadable") {
      yield* Effect.logWarning(`the registry cache ${source.cachePath} is unreadable and is ignored: ${read.detail}`)
    }
    return read._tag === "Read" && (read.cache.registry_url === undefined || read.cache.registry_url === source.registryUrl)
      ? read.cache
      : undefined
  })

/** `store` writes the fetched index to the cache (and decides what a failed write means). */
const loadIndex = <E>(source: RegistrySource, force: boolean, store: (fetchedAt: Date, fetched: RegistryIndex) => Effect.Effect<void, E>) =>
  Effect.gen(function*() {
    const { registryUrl } = source
    if (registryUrl === "") return yield* new RegistryNotConfigured()
    const at = DateTime.toDateUtc(yield* DateTime.now)
    const cached = yield* cachedIndex(source)
    if (!force && cached !== undefined && isUsable(cacheStatus(cached.fetched_at, at, source.config.registry_cache_ttl))) {
      return { url: registryUrl, index: cached.registry, fetchedAt: cached.fetched_at, source: "cache" } satisfies IndexResult
    }
    const fetched = yield* Effect.either(fetchIndex(source))
    if (Either.isRight(fetched)) {
      yield* store(at, fetched.right)
      return { url: registryUrl, index: fetched.right, fetchedAt: at, source: "network" } satisfies IndexResult
    }
    if (cached === undefined) return yield* fetched.left
    const warning = `${fetched.left.message}; using the cached index from ${cached.fetched_at.toISOString()} (${
      formatAge(ageSeconds(cached.fetched_at, at))
    } old)`
    yield* Effect.logWarning(warning)
    return {
      url: registryUrl,
      index: cached.registry,
      fetchedAt: cached.fetched_at,
      source: "stale-cache",
      warning
    } satisfies IndexResult
  }).pipe(Effect.withSpan("Registry.index", { attributes: { force } }))

// ---- one extension ------------------------------------------------------------------------------------------

const lookupFailed = (reference: string, reason: RegistryLookupFailed["reason"], detail: string) =>
  new RegistryLookupFailed({ reference, reason, detail })

const resolve = Effect.fn("Registry.resolve")(function*(
  source: RegistrySource,
  index: RegistryService["index"],
  reference: string | RegistryReference
) {
  const { registryUrl } = source
  const text = typeof reference === "string" ? reference : formatReference(reference)
  const parsed = typeof reference === "string" ? parseReference(reference) : Either.right(reference)
  if (Either.isLeft(parsed)) return yield* lookupFailed(text, "invalid-reference", parsed.left)
  const { id, range } = parsed.right
  const { index: current } = yield* index
  const entry = current.extensions.find((candidate) => candidate.id === id)
  if (entry === undefined) return yield* lookupFailed(text, "unknown-extension", `the registry ${registryUrl} has no such extension`)
  const version = resolveVersion(entry, range)
  if (Either.isLeft(version)) return yield* lookupFailed(text, "no-matching-version", version.left)
  const archive = archiveUrl(entry, version.right, registryUrl)
  if (Either.isLeft(archive)) return yield* lookupFailed(text, "bad-url", archive.left)
  const signature = signatureUrl(entry, version.right, registryUrl)
  if (Either.isLeft(signature)) return yield* lookupFailed(text, "bad-url", signature.left)
  return {
    id,
    version: version.right,
    range,
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
    const sha256 = createHash("sha256").update(bytes).digest("hex")
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

export const make = (options: RegistryOptions = { timeouts: defaultTimeouts }) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const { config, paths } = yield* HostConfig
    const source: RegistrySource = {
      client: (yield* HttpClient.HttpClient).pipe(
        HttpClient.mapRequest(HttpClientRequest.setHeader("user-agent", `host/${config.version}`)),
        HttpClient.followRedirects(5),
        HttpClient.withTracerPropagation(false)
      ),
      registryUrl: resolveRegistryUrl(config.registry_url, paths.root),
      config,
      cachePath: paths.registryCache,
      timeouts: options.timeouts,
      provide: (effect) => effect.pipe(Effect.provideService(FileSystem.FileSystem, fs), Effect.provideService(Path.Path, path))
    }

    // One answer per memoTtl (failures too): a command resolving many ids asks once, and a long-running
    // server still sees a new sync.
    const [index, invalidate] = yield* Effect.cachedInvalidateWithTTL(
      loadIndex(source, false, (fetchedAt, fetched) => writeFetched(source)(fetchedAt, fetched).pipe(Effect.catchAll((error) => Effect.logWarning(error.message)))),
      memoTtl
    )

    return Registry.of({
      url: source.registryUrl,
      cachePath: paths.registryCache,
      index,
      sync: ({ force }) => Effect.zipLeft(loadIndex(source, force, writeFetched(source)), invalidate),
      status: source.provide(cacheReport(paths.registryCache, config.registry_cache_ttl)),
      search: (query) => Effect.map(index, (result) => searchEntries(result.index.extensions, query)),
      resolve: (reference) => resolve(source, index, reference),
      download: (resolved, downloadOptions) => download(source, resolved, downloadOptions)
    })
  })

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
