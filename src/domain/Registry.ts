import { Either, type ParseResult, Schema } from "effect"
import semver from "semver"
import { ExtensionId, extensionIdProblem, isExtensionId } from "./Manifest.js"
import { problem, type Problem } from "./Problems.js"

// The registry (docs/registry.md), pure parts: the index schema, references (`vendor/name[@version|@range]`),
// version resolution, archive and signature URLs, search, and cache freshness. No I/O here.

// ---------------------------------------------------------------------------------------------
// Cache freshness, as pure functions of the cache time, now and the TTL.

export type CacheStatus = "fresh" | "expired" | "no-expiry" | "missing"

export const cacheStatus = (fetchedAt: Date | undefined, now: Date, ttlSeconds: number): CacheStatus => {
  if (fetchedAt === undefined) return "missing"
  if (ttlSeconds === 0) return "no-expiry"
  return ageSeconds(fetchedAt, now) <= ttlSeconds ? "fresh" : "expired"
}

export const ageSeconds = (fetchedAt: Date, now: Date): number =>
  Math.max(0, Math.floor((now.getTime() - fetchedAt.getTime()) / 1000))

/** A cache that may be used without asking the registry. */
export const isUsable = (status: CacheStatus): boolean => status === "fresh" || status === "no-expiry"

// ---------------------------------------------------------------------------------------------
// The index `<registry_url>/registry.json`

/** The index formats this framework reads: `1.x`. */
export const supportedIndexMajor = 1

/** `version: "1.0"`; a number (`version: 1.0`, which JSON writes as `1`) is tolerated and read as text. */
const IndexFormatVersion = Schema.Union(
  Schema.String,
  Schema.transform(Schema.Number, Schema.String, {
    strict: true,
    decode: (value) => (Number.isInteger(value) ? `${value}.0` : String(value)),
    encode: (text) => Number(text)
  })
).pipe(
  Schema.filter((text) => {
    const major = /^(\d+)(\.\d+)*$/.exec(text.trim())
    if (major === null) return `"${text}" is not a registry format version (like "1.0")`
    return Number(major[1]) === supportedIndexMajor ||
      `registry format ${text} is not supported (this Host reads ${supportedIndexMajor}.x)`
  })
)

const Version = Schema.String.pipe(
  Schema.filter((version) => semver.valid(version) !== null || `"${version}" is not a semantic version (like 1.2.0)`)
)

const Sha256Hex = Schema.String.pipe(
  Schema.filter((hex) => /^[0-9a-fA-F]{64}$/.test(hex) || "must be a sha256: 64 hex characters"),
  Schema.transform(Schema.String, { strict: true, decode: (hex) => hex.toLowerCase(), encode: (hex) => hex })
)

const StringMap = Schema.Record({ key: Schema.String, value: Schema.String })

export const RegistryAuthor = Schema.Struct({
  name: Schema.String,
  email: Schema.optional(Schema.String)
})

export const RegistryEntry = Schema.Struct({
  id: ExtensionId,
  name: Schema.String,
  description: Schema.optionalWith(Schema.String, { default: () => "" }),
  repository: Schema.optional(Schema.String),
  latest_version: Version,
  versions: Schema.optionalWith(Schema.Array(Version), { default: () => [] }),
  license: Schema.optionalWith(Schema.String, { default: () => "" }),
  authors: Schema.optionalWith(Schema.Array(RegistryAuthor), { default: () => [] }),
  tags: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  requires: Schema.optionalWith(StringMap, { default: () => ({}) }),
  dependencies: Schema.optionalWith(StringMap, { default: () => ({}) }),
  archive_url: Schema.optional(Schema.String),
  signature_url: Schema.optional(Schema.String),
  /** One hex digest (of `latest_version`'s archive), or one per version. */
  sha256: Schema.optional(Schema.Union(Sha256Hex, Schema.Record({ key: Schema.String, value: Sha256Hex })))
})
export type RegistryEntry = typeof RegistryEntry.Type

/** `serial` of a built index (docs/registry.md "Publishing"): an integer that only goes up. */
export const IndexSerial = Schema.Number.pipe(
  Schema.filter((serial) => (Number.isSafeInteger(serial) && serial >= 0) || "must be a whole number, 0 or more")
)

/** `expires_at` of a built index: an ISO 8601 date-time (like 2026-12-31T00:00:00.000Z). */
export const IndexExpiresAt = Schema.String.pipe(
  Schema.filter((text) =>
    (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text) && !Number.isNaN(Date.parse(text))) ||
    `"${text}" is not an ISO 8601 date-time (like 2026-12-31T00:00:00Z)`
  )
)

const IndexShape = Schema.Struct({
  version: IndexFormatVersion,
  updated_at: Schema.optional(Schema.String),
  /** Written by `host registry:build`; optional so hand-written indexes still decode (DESIGN §25). */
  serial: Schema.optional(IndexSerial),
  expires_at: Schema.optional(IndexExpiresAt),
  extensions: Schema.Array(RegistryEntry)
})

/** The decoded index. Unknown keys are ignored; a missing required key is named by its path. */
export const RegistryIndex = IndexShape.pipe(
  Schema.filter((index) => {
    const seen = new Set<string>()
    for (const [position, entry] of index.extensions.entries()) {
      if (seen.has(entry.id)) return { path: ["extensions", position, "id"], message: `"${entry.id}" is listed twice` }
      seen.add(entry.id)
    }
    return true
  })
)
export type RegistryIndex = typeof RegistryIndex.Type

// ---------------------------------------------------------------------------------------------
// Decoding an index quickly
//
// An index of thousands of entries decoded through the schema cost seconds of CPU in a short command (the
// CLI runs without V8's optimising compiler, docs/decisions.md "Short commands run without the optimising
// compiler"), and every `registry:sync`, `host add` and `host update` decodes one or two of them. Most
// entries are already in the form the schema gives (registry:build writes every field; the cache holds
// decoded entries), so `decodeRegistryIndex` checks each entry against that form with plain code and keeps
// it as it is; any entry that is not in that form is decoded by the schema, and any failure at all is
// decoded again by the whole schema, so errors are exactly the schema's (docs/decisions.md "A registry index
// is decoded once, quickly").

/** The index without its entries: decoded by the schema (a handful of fields). */
const { extensions: _entries, ...indexHeaderFields } = IndexShape.fields
const IndexHeader = Schema.Struct(indexHeaderFields)
const decodeIndexHeader = Schema.decodeUnknownEither(IndexHeader)
const decodeEntry = Schema.decodeUnknownEither(RegistryEntry)
const decodeWholeIndex = Schema.decodeUnknownEither(RegistryIndex, { errors: "all" })

const entryKeys: ReadonlySet<string> = new Set(Object.keys(RegistryEntry.fields))
const authorKeys: ReadonlySet<string> = new Set(Object.keys(RegistryAuthor.fields))
const lowercaseSha256 = /^[0-9a-f]{64}$/

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype

const hasOnlyKeys = (value: Record<string, unknown>, known: ReadonlySet<string>): boolean => {
  for (const key in value) if (!known.has(key)) return false
  return true
}

const isOptionalString = (value: unknown): boolean => value === undefined || typeof value === "string"

// The checks below loop by index and take no callbacks they do not need: a short command runs them
// without the optimising compiler, where each `for…of` step and each closure is an allocation, and an index
// of thousands of entries made megabytes of garbage (docs/decisions.md "registry:sync reads what it wrote
// once").

/** Every item a string (`each`: and passing it). */
const isStringArray = (value: unknown, each?: (text: string) => boolean): boolean => {
  if (!Array.isArray(value)) return false
  for (let index = 0; index < value.length; index++) {
    const item: unknown = value[index]
    if (typeof item !== "string" || (each !== undefined && !each(item))) return false
  }
  return true
}

const isStringRecord = (value: unknown, each?: (text: string) => boolean): boolean => {
  if (!isPlainObject(value)) return false
  for (const key in value) {
    // The schema builds a new object, where a "__proto__" key is lost; such a record is left to it.
    if (key === "__proto__") return false
    const item = value[key]
    if (typeof item !== "string" || (each !== undefined && !each(item))) return false
  }
  return true
}

const isLowercaseSha256 = (hex: string): boolean => lowercaseSha256.test(hex)

/** Authors as the schema decodes them: objects of `name` and an optional `email`, both strings. */
const isAuthorList = (value: unknown): boolean => {
  if (!Array.isArray(value)) return false
  for (let index = 0; index < value.length; index++) {
    const author: unknown = value[index]
    if (!isPlainObject(author) || !hasOnlyKeys(author, authorKeys) || typeof author.name !== "string" || !isOptionalString(author.email)) {
      return false
    }
  }
  return true
}

/**
 * The entry itself (its defaults filled) when it is already what the schema decodes it to: only the schema's
 * keys, each of the exact type and passing the same checks (`isExtensionId`: `extensionIdProblem`'s verdict;
 * `semver.valid`), sha256 digests in lowercase (the schema would lowercase them). Undefined otherwise, and
 * the schema decides. `isVersion` is `semver.valid` remembered for the index.
 */
const entryAsDecoded = (raw: unknown, isVersion: (text: string) => boolean): RegistryEntry | undefined => {
  if (!isPlainObject(raw) || !hasOnlyKeys(raw, entryKeys)) return undefined
  const { authors, dependencies, requires, sha256, tags, versions } = raw
  const valid = typeof raw.id === "string" && isExtensionId(raw.id) &&
    typeof raw.name === "string" &&
    isOptionalString(raw.description) &&
    isOptionalString(raw.repository) &&
    typeof raw.latest_version === "string" && isVersion(raw.latest_version) &&
    (versions === undefined || isStringArray(versions, isVersion)) &&
    isOptionalString(raw.license) &&
    (authors === undefined || isAuthorList(authors)) &&
    (tags === undefined || isStringArray(tags)) &&
    (requires === undefined || isStringRecord(requires)) &&
    (dependencies === undefined || isStringRecord(dependencies)) &&
    isOptionalString(raw.archive_url) &&
    isOptionalString(raw.signature_url) &&
    (sha256 === undefined || (typeof sha256 === "string" ? isLowercaseSha256(sha256) : isStringRecord(sha256, isLowercaseSha256)))
  if (!valid) return undefined
  const complete = raw.description !== undefined && versions !== undefined && raw.license !== undefined && authors !== undefined &&
    tags !== undefined && requires !== undefined && dependencies !== undefined
  const entry = complete ? raw : {
    ...raw,
    description: raw.description ?? "",
    versions: versions ?? [],
    license: raw.license ?? "",
    authors: authors ?? [],
    tags: tags ?? [],
    requires: requires ?? {},
    dependencies: dependencies ?? {}
  }
  return entry as unknown as RegistryEntry
}

const indexKeys: ReadonlySet<string> = new Set(Object.keys(IndexShape.fields))

/** `semver.valid`, remembered for one index (most entries list the same few versions). */
const versionCheck = () => {
  const versions = new Map<string, boolean>()
  return (text: string) => {
    let valid = versions.get(text)
    if (valid === undefined) versions.set(text, valid = semver.valid(text) !== null)
    return valid
  }
}

/**
 * The index when it is entirely in decoded form: no key the schema does not know (at the top or in an
 * entry), every entry as `entryAsDecoded` takes it, no id twice. Such an index nests at most five levels
 * (index, extensions, entry, authors, author), which spares a reader the count of its text's nesting
 * (registry/CacheFile.ts). Undefined otherwise: then `decodeRegistryIndex` decides.
 */
export const indexInDecodedForm = (raw: unknown): RegistryIndex | undefined => {
  if (!isPlainObject(raw) || !hasOnlyKeys(raw, indexKeys) || !Array.isArray(raw.extensions)) return undefined
  const header = decodeIndexHeader(raw)
  if (Either.isLeft(header)) return undefined
  const isVersion = versionCheck()
  const extensions: Array<RegistryEntry> = []
  const seen = new Set<string>()
  const entries: ReadonlyArray<unknown> = raw.extensions
  for (let position = 0; position < entries.length; position++) {
    const entry = entryAsDecoded(entries[position], isVersion)
    if (entry === undefined || seen.has(entry.id)) return undefined
    seen.add(entry.id)
    extensions.push(entry)
  }
  return { ...header.right, extensions }
}

/**
 * Decodes a parsed registry index: the same answer as the `RegistryIndex` schema with every error
 * (`errors: "all"`), decoded or refused, only faster for entries already in decoded form (see above).
 */
export const decodeRegistryIndex = (raw: unknown): Either.Either<RegistryIndex, ParseResult.ParseError> => {
  const header = decodeIndexHeader(raw)
  const entries = isPlainObject(raw) ? raw.extensions : undefined
  if (Either.isLeft(header) || !Array.isArray(entries)) return decodeWholeIndex(raw)
  const isVersion = versionCheck()
  const extensions: Array<RegistryEntry> = []
  const seen = new Set<string>()
  for (let position = 0; position < entries.length; position++) {
    const rawEntry: unknown = entries[position]
    let entry = entryAsDecoded(rawEntry, isVersion)
    if (entry === undefined) {
      const decoded = decodeEntry(rawEntry)
      if (Either.isLeft(decoded)) return decodeWholeIndex(raw)
      entry = decoded.right
    }
    if (seen.has(entry.id)) return decodeWholeIndex(raw)
    seen.add(entry.id)
    extensions.push(entry)
  }
  return Either.right({ ...header.right, extensions })
}

/** One entry as `host registry:build` writes it (the §9 fields, in this key order). */
export interface BuiltRegistryEntry {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly latest_version: string
  readonly versions: ReadonlyArray<string>
  readonly license: string
  readonly authors: ReadonlyArray<{ readonly name: string; readonly email?: string | undefined }>
  readonly tags: ReadonlyArray<string>
  readonly requires: Readonly<Record<string, string>>
  readonly dependencies: Readonly<Record<string, string>>
  readonly repository?: string | undefined
  readonly archive_url: string
  readonly signature_url?: string | undefined
  readonly sha256: Readonly<Record<string, string>>
}

export interface BuiltIndexHeader {
  readonly serial: number
  readonly updatedAt: Date
  readonly expiresAt: Date
}

/**
 * The exact bytes of a built `registry.json` (what `registry.json.sig` signs): entries sorted by id,
 * stable key order, two-space indent, final newline. Shared by the builder and whoever checks it.
 */
export const encodeBuiltIndex = (header: BuiltIndexHeader, entries: ReadonlyArray<BuiltRegistryEntry>): Uint8Array => {
  const extensions = [...entries].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((entry) => ({
    id: entry.id,
    name: entry.name,
    description: entry.description,
    ...(entry.repository === undefined ? {} : { repository: entry.repository }),
    latest_version: entry.latest_version,
    versions: [...entry.versions],
    license: entry.license,
    authors: entry.authors.map((author) => ({ name: author.name, ...(author.email === undefined ? {} : { email: author.email }) })),
    tags: [...entry.tags],
    requires: sortedRecord(entry.requires),
    dependencies: sortedRecord(entry.dependencies),
    archive_url: entry.archive_url,
    ...(entry.signature_url === undefined ? {} : { signature_url: entry.signature_url }),
    sha256: Object.fromEntries(entry.versions.map((version) => [version, entry.sha256[version]]))
  }))
  const index = {
    version: "1.0",
    serial: header.serial,
    updated_at: header.updatedAt.toISOString(),
    expires_at: header.expiresAt.toISOString(),
    extensions
  }
  return new TextEncoder().encode(`${JSON.stringify(index, null, 2)}\n`)
}

const sortedRecord = (record: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.keys(record).sort().map((key) => [key, record[key] as string]))

/** The cache file `{fetched_at, registry}` (plus the URL it was fetched from, to notice a changed `registry_url`). */
export const RegistryCacheFile = Schema.Struct({
  fetched_at: Schema.DateFromString,
  registry_url: Schema.optional(Schema.String),
  registry: RegistryIndex
})
export type RegistryCacheFile = typeof RegistryCacheFile.Type

// ---------------------------------------------------------------------------------------------
// References and versions

/** `vendor/name`, `vendor/name@1.2.3`, `vendor/name@^1.2`, `vendor/name@latest`. */
export interface RegistryReference {
  readonly id: string
  /** An exact version or a range; undefined means `latest_version`. */
  readonly range: string | undefined
}

/** Whether a command argument is meant as a registry reference (and not a path). */
export const looksLikeReference = (text: string): boolean => /^[a-z0-9-]+\/[a-z0-9-]+(@.+)?$/.test(text)

export const parseReference = (text: string): Either.Either<RegistryReference, string> => {
  const at = text.indexOf("@")
  const id = at === -1 ? text : text.slice(0, at)
  const spec = at === -1 ? undefined : text.slice(at + 1).trim()
  const idProblem = extensionIdProblem(id)
  if (idProblem !== undefined) return Either.left(idProblem)
  if (spec === undefined || spec === "latest") return Either.right({ id, range: undefined })
  if (spec === "") return Either.left(`"${text}" has an empty version after "@"`)
  if (semver.valid(spec) === null && semver.validRange(spec) === null) {
    return Either.left(`"${spec}" is neither a version (like 1.2.3) nor a version range (like ^1.2)`)
  }
  return Either.right({ id, range: spec })
}

export const formatReference = (reference: RegistryReference): string =>
  reference.range === undefined ? reference.id : `${reference.id}@${reference.range}`

/** Every version the registry offers for an entry (`versions[]` and `latest_version`), newest first. */
export const availableVersions = (entry: RegistryEntry): ReadonlyArray<string> =>
  [...new Set([entry.latest_version, ...entry.versions])].sort(semver.rcompare)

/**
 * The version a range picks: none → `latest_version`; an exact version → itself if offered; a range →
 * the highest offered version satisfying it. Left: why nothing matches.
 */
export const resolveVersion = (entry: RegistryEntry, range: string | undefined): Either.Either<string, string> => {
  if (range === undefined) return Either.right(entry.latest_version)
  const offered = availableVersions(entry)
  const listing = `available: ${offered.join(", ")}`
  const exact = semver.valid(range)
  if (exact !== null) {
    const match = offered.find((version) => semver.eq(version, exact))
    return match !== undefined
      ? Either.right(match)
      : Either.left(`version ${range} of ${entry.id} is not in the registry (${listing})`)
  }
  const best = semver.maxSatisfying([...offered], range)
  return best !== null ? Either.right(best) : Either.left(`no version of ${entry.id} satisfies ${range} (${listing})`)
}

/** The newest offered version above `current`, if any. */
export const newerVersion = (entry: RegistryEntry, current: string): string | undefined => {
  if (semver.valid(current) === null) return entry.latest_version
  return availableVersions(entry).find((version) => semver.gt(version, current))
}

// ---------------------------------------------------------------------------------------------
// URLs

/** `<vendor>-<name>-<version>.host` */
export const archiveName = (id: string, version: string): string => `${id.replace("/", "-")}-${version}.host`

export const indexUrl = (registryUrl: string): string => `${registryUrl.replace(/\/+$/, "")}/registry.json`

export const expandTemplate = (template: string, id: string, version: string): string =>
  template
    .replaceAll("{id}", id)
    .replaceAll("{version}", version)
    .replaceAll("{archive}", archiveName(id, version))

/**
 * Resolves a URL from the index against the registry's base (so `archives/{archive}` is relative to
 * the folder of registry.json). Only http(s) and file URLs are accepted, and a file URL only when
 * the registry itself is a file:// registry: a remote index must not point at local files.
 */
const resolveUrl = (text: string, registryUrl: string, what: string): Either.Either<string, string> => {
  let url: URL
  try {
    url = new URL(text, `${registryUrl.replace(/\/+$/, "")}/`)
  } catch {
    return Either.left(`${what} "${text}" is not a URL`)
  }
  if (url.protocol === "http:" || url.protocol === "https:") return Either.right(url.href)
  if (url.protocol === "file:") {
    return registryUrl.startsWith("file:")
      ? Either.right(url.href)
      : Either.left(`${what} "${text}" is a file:// URL, which only a file:// registry may use`)
  }
  return Either.left(`${what} "${text}" must be an http(s) URL`)
}

/** `archive_url` with its tokens, else `<repository>/releases/download/v<version>/<archive>`. */
export const archiveUrl = (entry: RegistryEntry, version: string, registryUrl: string): Either.Either<string, string> => {
  if (entry.archive_url !== undefined && entry.archive_url !== "") {
    return resolveUrl(expandTemplate(entry.archive_url, entry.id, version), registryUrl, `${entry.id}: archive_url`)
  }
  if (entry.repository !== undefined && entry.repository !== "") {
    const release = `${entry.repository.replace(/\/+$/, "")}/releases/download/v${version}/${archiveName(entry.id, version)}`
    return resolveUrl(release, registryUrl, `${entry.id}: repository`)
  }
  return Either.left(`${entry.id} has neither archive_url nor repository in the registry, so its archive cannot be located`)
}

/** `signature_url` with its tokens, else the archive URL with `.sig` appended. */
export const signatureUrl = (entry: RegistryEntry, version: string, registryUrl: string): Either.Either<string, string> =>
  entry.signature_url !== undefined && entry.signature_url !== ""
    ? resolveUrl(expandTemplate(entry.signature_url, entry.id, version), registryUrl, `${entry.id}: signature_url`)
    : Either.map(archiveUrl(entry, version, registryUrl), (url) => `${url}.sig`)

/**
 * The sha256 the index lists for a version: from the per-version map, or the single string, which is
 * the digest of `latest_version`'s archive. Undefined when the index lists none for it.
 */
export const expectedSha256 = (entry: RegistryEntry, version: string): string | undefined => {
  if (entry.sha256 === undefined) return undefined
  if (typeof entry.sha256 === "string") return version === entry.latest_version ? entry.sha256 : undefined
  return entry.sha256[version]
}

// ---------------------------------------------------------------------------------------------
// Search

/** Case-insensitive substring over id, name, description and tags; an empty query matches all. */
export const searchEntries = (entries: ReadonlyArray<RegistryEntry>, query: string): ReadonlyArray<RegistryEntry> => {
  const needle = query.trim().toLowerCase()
  if (needle === "") return entries
  return entries.filter((entry) =>
    [entry.id, entry.name, entry.description, ...entry.tags].some((text) => text.toLowerCase().includes(needle))
  )
}

/** Problems of an index that does not parse as JSON. */
export const jsonProblem = (error: unknown): ReadonlyArray<Problem> => [
  problem("(json)", `is not valid JSON: ${error instanceof Error ? error.message : String(error)}`)
]
