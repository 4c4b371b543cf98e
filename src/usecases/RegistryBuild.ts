import { FileSystem, Path } from "@effect/platform"
import { Data, Effect, Either } from "effect"
import semver from "semver"
import { readFileSync, statSync } from "node:fs"
import { type ArchiveLimits, archiveFileName, inspectArchive, readDetachedSignature } from "../archive/Archive.js"
import type { KeyInvalid } from "../archive/ArchiveErrors.js"
import { ArchiveIOError, ArchiveRefused, SecretKeyMissing } from "../archive/ArchiveErrors.js"
import { formatBytes } from "../domain/Bytes.js"
import { decodeSecretKey, type Keyring, signBytes } from "../archive/Signing.js"
import { type BuiltRegistryEntry, encodeBuiltIndex } from "../domain/Registry.js"
import { writeFilesAtomic } from "../system/AtomicFile.js"

// `host registry:build <dir>` (DESIGN §25, docs/registry.md "Publishing"): the folder of exported
// archives becomes a registry — every archive verified as `host verify` does, one index entry per id,
// a serial that only goes up and an expiry, optionally signed. Refusals name the file and write nothing.

/** Why the build was refused; nothing was written. */
export class RegistryBuildRefused extends Data.TaggedError("RegistryBuildRefused")<{
  /** The file or folder concerned. */
  readonly path: string
  /** One clause saying what is wrong and how to fix it. */
  readonly detail: string
}> {
  override get message() {
    return `${this.path}: ${this.detail}`
  }
}

export interface RegistryBuildOptions {
  readonly dir: string
  /** Where the folder will be served; archive URLs are relative to the index when absent. */
  readonly url?: string | undefined
  readonly sign: boolean
  readonly secretKey?: string | undefined
  readonly secretKeySource: string
  readonly expiresDays: number
  readonly now: Date
  readonly limits: ArchiveLimits
  readonly keyring: Keyring
  /** Called after each archive is verified (`done` of `total`). */
  readonly onProgress?: ((done: number, total: number) => Effect.Effect<void>) | undefined
}

export interface RegistryBuildResult {
  readonly path: string
  readonly serial: number
  readonly expires_at: string
  readonly extensions: number
  readonly versions: number
  readonly signed: boolean
  /** The path of `registry.json.sig` when signed. */
  readonly signaturePath: string | null
}

interface Verified {
  readonly file: string
  readonly name: string
  readonly id: string
  readonly version: string
  readonly sha256: string
  readonly hasSignature: boolean
  readonly manifest: {
    readonly name: string
    readonly description: string
    readonly license: string
    readonly authors: ReadonlyArray<{ readonly name: string; readonly email?: string | undefined }>
    readonly requires: Readonly<Record<string, string>>
    readonly dependencies: Readonly<Record<string, string>>
    readonly tags: ReadonlyArray<string>
    readonly repository: string | undefined
  }
}

const maxExpiresDays = 3650

/** `--url`: an http(s) or file URL; a trailing slash is dropped so `<url>/{archive}` has one. */
const checkBaseUrl = (text: string): Either.Either<string, string> => {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return Either.left(`--url "${text}" is not a URL (give the address the folder will be served at, like https://example.org/host)`)
  }
  if (url.protocol !== "https:" && url.protocol !== "http:" && url.protocol !== "file:") {
    return Either.left(`--url "${text}" must be an http(s) or file:// URL`)
  }
  if (url.search !== "" || url.hash !== "") return Either.left(`--url "${text}" must not have a query or a fragment`)
  return Either.right(url.href.replace(/\/+$/, ""))
}

/** The serial of the registry.json already in the folder (0 when there is none or it has none). */
const previousSerial = (indexPath: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const exists = yield* fs.exists(indexPath).pipe(Effect.orElseSucceed(() => false))
    if (!exists) return 0
    const text = yield* fs.readFileString(indexPath).pipe(
      Effect.mapError((error) => new RegistryBuildRefused({ path: indexPath, detail: `cannot be read: ${error.message}` }))
    )
    const parsed = yield* Effect.try({
      try: (): unknown => JSON.parse(text),
      catch: (error) =>
        new RegistryBuildRefused({
          path: indexPath,
          detail: `is not valid JSON (${error instanceof Error ? error.message : String(error)}); ` +
            "the new serial continues from it, so fix it, or remove it to start again at serial 1"
        })
    })
    const serial = parsed !== null && typeof parsed === "object" ? (parsed as Record<string, unknown>).serial : undefined
    if (serial === undefined) return 0
    if (typeof serial !== "number" || !Number.isSafeInteger(serial) || serial < 0) {
      return yield* new RegistryBuildRefused({
        path: indexPath,
        detail: `its serial ${JSON.stringify(serial)} is not a whole number 0 or more; fix it so the new serial can continue from it`
      })
    }
    return serial
  })

/**
 * One archive's bytes, with the checks of `readArchiveFile` (archive/Archive.ts): a regular file, within
 * `limits.archiveBytes` before it is read. Read synchronously: a build reads hundreds of small files one
 * after another, and through the platform's asynchronous FileSystem the 200 archives of
 * bench/registry-build.bench.mjs cost 47 to 87 ms of CPU against 2 ms (docs/decisions.md "A registry index
 * is decoded once, quickly").
 */
const readArchiveBytes = (file: string, limits: ArchiveLimits, name: string): Effect.Effect<Uint8Array, ArchiveIOError | ArchiveRefused> =>
  Effect.suspend((): Effect.Effect<Uint8Array, ArchiveIOError | ArchiveRefused> => {
    let size: number
    let isFile: boolean
    try {
      const info = statSync(file)
      size = info.size
      isFile = info.isFile()
    } catch (error) {
      return Effect.fail(new ArchiveIOError({ operation: "read", path: file, detail: errorDetail(error) }))
    }
    if (!isFile) return Effect.fail(new ArchiveRefused({ source: name, reason: "not-an-archive", detail: `${file} is not a regular file` }))
    if (size > limits.archiveBytes) {
      return Effect.fail(new ArchiveRefused({
        source: name,
        reason: "archive-too-large",
        detail: `it is ${formatBytes(size)}; the limit is ${formatBytes(limits.archiveBytes)}`
      }))
    }
    return Effect.try({
      try: (): Uint8Array => readFileSync(file),
      catch: (error) => new ArchiveIOError({ operation: "read", path: file, detail: errorDetail(error) })
    })
  })

const errorDetail = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** Verifies one archive (`name` in the folder, at `file`) as `host verify` does and reads what the index needs from it. */
const verifyOne = (file: string, name: string, hasSignature: boolean, options: RegistryBuildOptions) =>
  Effect.gen(function*() {
    // What `inspectFile` does, except that whether `<file>.sig` exists is known from the folder's listing
    // (a failed existence check per archive is a measurable share of a run over hundreds of small ones).
    const inspection = yield* Effect.gen(function*() {
      const bytes = yield* readArchiveBytes(file, options.limits, name)
      const detachedSignature = hasSignature ? yield* readDetachedSignature(file) : undefined
      return yield* inspectArchive(bytes, { source: name, limits: options.limits, keyring: options.keyring, detachedSignature })
    }).pipe(
      Effect.mapError((error: ArchiveRefused | ArchiveIOError) => new RegistryBuildRefused({ path: file, detail: error.message }))
    )
    if (inspection.status === "invalid" || inspection.status === "modified") {
      const first = inspection.problems[0]
      return yield* new RegistryBuildRefused({
        path: file,
        detail: `fails verification (${inspection.status}${first === undefined ? "" : `: ${first.path}: ${first.message}`}); ` +
          `host verify ${name} shows every problem — export it again or remove it`
      })
    }
    const manifest = inspection.manifest.decoded
    if (manifest === undefined) {
      const first = inspection.manifest.problems[0]
      return yield* new RegistryBuildRefused({
        path: file,
        detail: `its extension.yaml is not valid${first === undefined ? "" : ` (${first.path}: ${first.message})`}; fix it and export again`
      })
    }
    const document = manifest.document
    const verified: Verified = {
      file,
      name,
      id: manifest.id,
      version: manifest.version,
      sha256: inspection.sha256,
      hasSignature,
      manifest: {
        name: document.name,
        description: document.description,
        license: document.license,
        authors: (document.authors ?? []).map((author) => ({ name: author.name, ...(author.email === undefined ? {} : { email: author.email }) })),
        requires: document.requires ?? {},
        dependencies: document.dependencies ?? {},
        tags: document.tags ?? [],
        repository: document.repository
      }
    }
    return verified
  })

/** `latest_version`: the highest release, or the highest pre-release when there is no release. */
const latestOf = (versions: ReadonlyArray<string>): string => {
  const releases = versions.filter((version) => semver.prerelease(version) === null)
  const pool = releases.length > 0 ? releases : versions
  return pool.reduce((best, version) => (semver.gt(version, best) ? version : best))
}

/** Groups the verified archives by id; refuses two different archives of one id and version. */
const entriesOf = (archives: ReadonlyArray<Verified>, base: string | undefined) =>
  Effect.gen(function*() {
    const byVersion = new Map<string, Array<Verified>>()
    for (const archive of archives) {
      const key = `${archive.id}@${archive.version}`
      const group = byVersion.get(key) ?? []
      const clash = group.find((other) => other.sha256 !== archive.sha256)
      if (clash !== undefined) {
        return yield* new RegistryBuildRefused({
          path: archive.file,
          detail: `it and ${clash.file} are both ${archive.id} ${archive.version} but their bytes differ; ` +
            "keep one of them (a published version must never change)"
        })
      }
      group.push(archive)
      byVersion.set(key, group)
    }
    // The index locates archives by name (`{archive}`), so each version needs its canonical file name;
    // byte-identical copies under other names are tolerated and not listed.
    const chosen: Array<Verified> = []
    for (const group of byVersion.values()) {
      const first = group[0]!
      const canonical = archiveFileName(first.id, first.version)
      const named = group.find((archive) => archive.name === canonical)
      if (named === undefined) {
        return yield* new RegistryBuildRefused({
          path: first.file,
          detail: `holds ${first.id} ${first.version} but is not named ${canonical}; rename it ` +
            "(the index points at archives by that name)"
        })
      }
      chosen.push(named)
    }
    const byId = new Map<string, Array<Verified>>()
    for (const archive of chosen) byId.set(archive.id, [...(byId.get(archive.id) ?? []), archive])
    const prefix = base === undefined ? "" : `${base}/`
    return [...byId.entries()].map(([id, versions]): BuiltRegistryEntry => {
      const ordered = [...versions].sort((a, b) => semver.compare(a.version, b.version))
      const latestVersion = latestOf(ordered.map((archive) => archive.version))
      const latest = ordered.find((archive) => archive.version === latestVersion)!
      return {
        id,
        name: latest.manifest.name,
        description: latest.manifest.description,
        repository: latest.manifest.repository,
        latest_version: latestVersion,
        versions: ordered.map((archive) => archive.version),
        license: latest.manifest.license,
        authors: latest.manifest.authors,
        tags: latest.manifest.tags,
        requires: latest.manifest.requires,
        dependencies: latest.manifest.dependencies,
        archive_url: `${prefix}{archive}`,
        // A version without a .sig answers "not found", which a client reads as "no detached signature".
        signature_url: ordered.some((archive) => archive.hasSignature) ? `${prefix}{archive}.sig` : undefined,
        sha256: Object.fromEntries(ordered.map((archive) => [archive.version, archive.sha256]))
      }
    })
  })

export const buildRegistry = Effect.fn("RegistryBuild.build")(function*(options: RegistryBuildOptions) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const dir = path.resolve(options.dir)
  if (!Number.isSafeInteger(options.expiresDays) || options.expiresDays < 1 || options.expiresDays > maxExpiresDays) {
    return yield* new RegistryBuildRefused({
      path: "--expires-days",
      detail: `${options.expiresDays} is not a whole number of days from 1 to ${maxExpiresDays}`
    })
  }
  const base = options.url === undefined ? undefined : checkBaseUrl(options.url)
  if (base !== undefined && Either.isLeft(base)) return yield* new RegistryBuildRefused({ path: "--url", detail: base.left })
  // The key is checked before any archive is read, as `export --sign` does.
  const secretKey = options.sign
    ? yield* (options.secretKey === undefined || options.secretKey.trim() === ""
      ? Effect.fail(new SecretKeyMissing({ hint: `${options.secretKeySource} is not set (create a key pair with host keygen)` }))
      : decodeSecretKey(options.secretKey, options.secretKeySource)).pipe(
        Effect.mapError((error: SecretKeyMissing | KeyInvalid) => new RegistryBuildRefused({ path: options.secretKeySource, detail: error.message }))
      )
    : undefined

  const names = yield* fs.readDirectory(dir).pipe(
    Effect.mapError((error) =>
      new RegistryBuildRefused({
        path: dir,
        detail: error._tag === "SystemError" && error.reason === "NotFound"
          ? "does not exist (give the folder the exported .host archives are in)"
          : `cannot be read as a folder: ${error.message}`
      })
    )
  )
  const archiveNames = names.filter((name) => name.endsWith(".host")).sort()
  const present = new Set(names)
  if (archiveNames.length === 0) {
    return yield* new RegistryBuildRefused({
      path: dir,
      detail: "has no .host archives (export each version into it with host export --output DIR/)"
    })
  }
  const indexPath = path.join(dir, "registry.json")
  const serial = (yield* previousSerial(indexPath)) + 1

  // One archive after another, in the folder's sorted order: every step of a read is synchronous but
  // the detached signature's, so fibers would only interleave bookkeeping, and the first archive that
  // fails in that order is the one named (docs/decisions.md "registry:build reads archives one after another").
  const verified: Array<Verified> = []
  for (const name of archiveNames) {
    verified.push(yield* verifyOne(path.join(dir, name), name, present.has(`${name}.sig`), options))
    if (options.onProgress !== undefined) yield* options.onProgress(verified.length, archiveNames.length)
  }
  const entries = yield* entriesOf(verified, base === undefined ? undefined : base.right)

  const expiresAt = new Date(options.now.getTime() + options.expiresDays * 24 * 60 * 60 * 1000)
  const bytes = encodeBuiltIndex({ serial, updatedAt: options.now, expiresAt }, entries)
  const signaturePath = `${indexPath}.sig`
  const signature = secretKey === undefined ? undefined : yield* signBytes(bytes, secretKey)
  // The signature first, the index last: a reader who finds the new index finds its signature too.
  const written: Array<readonly [string, Uint8Array | string]> = []
  if (signature !== undefined) written.push([signaturePath, `${signature}\n`])
  written.push([indexPath, bytes])
  yield* writeFilesAtomic(written).pipe(
    Effect.mapError((error) => new RegistryBuildRefused({ path: indexPath, detail: `cannot be written: ${error.message}` }))
  )
  // An unsigned build must not leave an older signature beside the new index.
  if (signature === undefined) {
    yield* fs.remove(signaturePath, { force: true }).pipe(
      Effect.mapError((error) => new RegistryBuildRefused({ path: signaturePath, detail: `is stale and cannot be removed: ${error.message}` }))
    )
  }
  return {
    path: indexPath,
    serial,
    expires_at: expiresAt.toISOString(),
    extensions: entries.length,
    versions: entries.reduce((sum, entry) => sum + entry.versions.length, 0),
    signed: signature !== undefined,
    signaturePath: signature === undefined ? null : signaturePath
  } satisfies RegistryBuildResult
})
