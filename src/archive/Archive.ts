import { FileSystem, Path } from "@effect/platform"
import { Effect, Either } from "effect"
import type { ConfigDocument } from "../config/HostConfig.js"
import { formatBytes } from "../domain/Bytes.js"
import type { SignatureStatus } from "../domain/Installed.js"
import { decodeManifest, type Manifest } from "../domain/Manifest.js"
import { problem, type Problem } from "../domain/Problems.js"
import { describeYamlProblems, manifestYamlLimits, readYaml } from "../domain/YamlText.js"
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { ArchiveIOError, ArchiveRefused, ioError, nodeIoError, type RefusalReason, SignatureRefused } from "./ArchiveErrors.js"
import {
  checkSignatures,
  encodeSignatureFile,
  type Keyring,
  type SecretKey,
  type SignatureCheck,
  type SignatureFile,
  signaturePolicy,
  signBytes
} from "./Signing.js"
import type { RawTarEntry, TarEntryToWrite, TarReadFailure } from "./Tar.js"
import { sha256Hex } from "../system/Hash.js"
import { type Checksums, isExcluded, listFiles, lists, packageMetaFiles, parseChecksums } from "./Tree.js"
import { randomHex } from "../system/Ids.js"

// The tar package and node:zlib are loaded when an archive is first packed or read: this module is
// loaded by every plan (checksums, limits, keys), and a plan of folder sources reads no archive, while
// loading them cost a dry run about 10 ms
// (docs/decisions.md "P4: a dry run in sync loads no archive code, and sorts nothing it does not print").
const tarModule = Effect.promise(() => import("./Tar.js"))

// `.host` archives (docs/archives.md): pack a tree deterministically; inspect an archive in memory
// (every entry, checksum, limit and signature checked, nothing written); unpack an inspected
// archive into a fresh staging folder, atomically.

// ---------------------------------------------------------------------------------------------
// Limits

export interface ArchiveLimits {
  /** Largest archive (compressed bytes, as stored or uploaded). */
  readonly archiveBytes: number
  /** Largest sum of the sizes of all files. */
  readonly unpackedBytes: number
  /** Most regular files (directory entries are bounded by the same number). */
  readonly files: number
}

/** The default limits (docs/archives.md "Refusals"): 50 MiB archive, 200 MiB unpacked, 10,000 files. */
export const defaultLimits: ArchiveLimits = {
  archiveBytes: 50 * 1024 * 1024,
  unpackedBytes: 200 * 1024 * 1024,
  files: 10_000
}

export const limitsFromConfig = (config: Pick<ConfigDocument, "limits">): ArchiveLimits => ({
  archiveBytes: config.limits.archive_bytes,
  unpackedBytes: config.limits.unpacked_bytes,
  files: config.limits.files
})

/**
 * A gzip stream that inflates more than this many times its size is treated as a decompression
 * bomb (text compresses 3-10x, a tar of tiny files up to ~40x)...
 */
export const bombRatio = 100
/** ...once it has inflated past this many bytes (small archives are never bombs). */
export const bombFloorBytes = 8 * 1024 * 1024
/** Tar framing per entry that the unpacked limit does not count: a header, padding, a pax record. */
const tarOverheadPerEntry = 3 * 512

export const archiveFileName = (id: string, version: string): string => `${id.replace("/", "-")}-${version}.host`

// ---------------------------------------------------------------------------------------------
// File work in slices

/**
 * How much synchronous file work runs between two turns of the event loop: a package's files are
 * read and written with node:fs directly (docs/decisions.md "Packing and unpacking call node:fs
 * synchronously, in slices"), and a server keeps answering in between.
 */
const sliceBytes = 4 * 1024 * 1024
const sliceItems = 256

/** Lets the event loop run (timers, sockets, other fibers) before the next slice. */
const nextTurn: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/**
 * `step` over every item, synchronously, in slices of at most `sliceItems` items or `sliceBytes`
 * bytes (as `weight` counts them); the first exception fails with `failure(item)` of it.
 */
const sliced = <A, B>(
  items: ReadonlyArray<A>,
  step: (item: A, index: number) => B,
  weight: (result: B) => number,
  failure: (item: A) => (cause: unknown) => ArchiveIOError
): Effect.Effect<Array<B>, ArchiveIOError> =>
  Effect.suspend(() => {
    const results: Array<B> = []
    let index = 0
    /** Runs one slice; the failure of the item that threw, if one did. */
    const slice = (): ArchiveIOError | undefined => {
      const end = Math.min(items.length, index + sliceItems)
      let bytes = 0
      while (index < end && bytes < sliceBytes) {
        const item = items[index]!
        try {
          const result = step(item, index)
          results.push(result)
          bytes += weight(result)
        } catch (cause) {
          return failure(item)(cause)
        }
        index++
      }
      return undefined
    }
    return Effect.gen(function*() {
      while (index < items.length) {
        if (index > 0) yield* nextTurn
        const failed = slice()
        if (failed !== undefined) return yield* failed
      }
      return results
    })
  })

// ---------------------------------------------------------------------------------------------
// Packing

export interface PackOptions {
  /** Signs checksums.json (embedded signature.json) and the archive (detached signature). */
  readonly secretKey?: SecretKey | undefined
  readonly limits?: ArchiveLimits | undefined
}

export interface PackedArchive {
  readonly bytes: Uint8Array
  /** sha256 of `bytes`, lowercase hex. */
  readonly sha256: string
  /** Files listed in checksums.json (every packed file but checksums.json and signature.json). */
  readonly files: number
  /** Sum of the listed files' sizes. */
  readonly unpackedBytes: number
  readonly checksums: Checksums
  readonly signature: SignatureFile | undefined
  /** The detached signature over `bytes` (128 hex), when signed. */
  readonly detachedSignature: string | undefined
}

/** `checksums.json`: keys sorted, two-space indent, final newline. */
export const encodeChecksums = (checksums: Readonly<Record<string, string>>): Uint8Array => {
  // Null prototype: a `"__proto__"` path stays a key instead of setting the prototype.
  const sorted: Record<string, string> = Object.create(null) as Record<string, string>
  for (const key of Object.keys(checksums).sort()) sorted[key] = checksums[key]!
  return Buffer.from(`${JSON.stringify(sorted, null, 2)}\n`)
}

const fileMode = (executable: boolean) => (executable ? 0o755 : 0o644)

/**
 * The deterministic entry list: checksums.json, signature.json, then every file in sorted order,
 * each directory just before the first path inside it.
 */
const tarEntries = (
  meta: ReadonlyArray<readonly [string, Uint8Array]>,
  files: ReadonlyArray<{ readonly path: string; readonly data: Uint8Array; readonly executable: boolean }>
): ReadonlyArray<TarEntryToWrite> => {
  const entries: Array<TarEntryToWrite> = meta.map(([path, data]) => ({ type: "File", path, data, mode: 0o644 }))
  const directories = new Set<string>()
  for (const file of files) {
    const parts = file.path.split("/")
    for (let depth = 1; depth < parts.length; depth++) {
      const directory = parts.slice(0, depth).join("/")
      if (directories.has(directory)) continue
      directories.add(directory)
      entries.push({ type: "Directory", path: `${directory}/`, mode: 0o755 })
    }
    entries.push({ type: "File", path: file.path, data: file.data, mode: fileMode(file.executable) })
  }
  return entries
}

/**
 * Packs the extension tree at `root` as a `.host` archive, in memory. Excluded names are skipped
 * at any depth, symbolic links are not followed, only regular files are packed, and a
 * checksums.json or signature.json at the root is regenerated rather than copied.
 */
export const packTree = Effect.fn("Archive.packTree")(function*(root: string, options: PackOptions = {}) {
  const path = yield* Path.Path
  const limits = options.limits ?? defaultLimits
  const listed = (yield* listFiles(root).pipe(Effect.mapError(ioError("read", root))))
    .filter((file) => !packageMetaFiles.has(file))
  const refuse = (reason: RefusalReason, detail: string) => new ArchiveRefused({ source: root, reason, detail })
  if (listed.length > limits.files) {
    return yield* refuse("too-many-files", `the tree has ${listed.length} files; the limit is ${limits.files}`)
  }
  const absolute = (file: string) => path.join(root, file)
  const readFailure = (file: string) => nodeIoError("read", absolute(file))
  const infos = yield* sliced(listed, (file) => statSync(absolute(file)), () => 0, readFailure)
  const unpackedBytes = infos.reduce((sum, info) => sum + info.size, 0)
  if (unpackedBytes > limits.unpackedBytes) {
    return yield* refuse(
      "unpacked-too-large",
      `the files add up to ${formatBytes(unpackedBytes)}; the limit is ${formatBytes(limits.unpackedBytes)}`
    )
  }
  // Each file is hashed as it is read, while its bytes are still in the cache.
  const files = yield* sliced(listed, (file, index) => {
    const data = readFileSync(absolute(file))
    return { path: file, data, executable: (infos[index]!.mode & 0o111) !== 0, sha256: sha256Hex(data) }
  }, (file) => file.data.byteLength, readFailure)
  const checksums: Record<string, string> = {}
  for (const file of files) checksums[file.path] = file.sha256
  const checksumsJson = encodeChecksums(checksums)
  const signature: SignatureFile | undefined = options.secretKey === undefined ? undefined : {
    alg: "ed25519",
    key: options.secretKey.publicKey,
    sig: yield* signBytes(checksumsJson, options.secretKey)
  }
  const meta: Array<readonly [string, Uint8Array]> = [["checksums.json", checksumsJson]]
  if (signature !== undefined) meta.push(["signature.json", encodeSignatureFile(signature)])
  const { encodeTar, gzipDeterministic } = yield* tarModule
  const bytes = yield* gzipDeterministic(encodeTar(tarEntries(meta, files)))
  if (bytes.length > limits.archiveBytes) {
    return yield* refuse(
      "archive-too-large",
      `the archive would be ${formatBytes(bytes.length)}; the limit is ${formatBytes(limits.archiveBytes)}`
    )
  }
  const detachedSignature = options.secretKey === undefined ? undefined : yield* signBytes(bytes, options.secretKey)
  return {
    bytes,
    sha256: sha256Hex(bytes),
    files: files.length,
    unpackedBytes,
    checksums,
    signature,
    detachedSignature
  } satisfies PackedArchive
})

// ---------------------------------------------------------------------------------------------
// Reading and checking

export interface ArchiveFile {
  /** Canonical POSIX relative path. */
  readonly path: string
  readonly data: Uint8Array
  readonly executable: boolean
}

export type IntegrityReason = Extract<RefusalReason, "unlisted-file" | "missing-file" | "checksum-mismatch">

/** A file that differs from checksums.json. */
export interface IntegrityProblem {
  readonly reason: IntegrityReason
  readonly path: string
  readonly message: string
}

/** Everything known about an archive after reading it in memory; nothing was written. */
export interface Inspection {
  readonly source: string
  readonly sha256: string
  /** Size of the archive as given. */
  readonly bytes: number
  readonly compressed: boolean
  /** Every regular file, including checksums.json and signature.json, in archive order. */
  readonly files: ReadonlyArray<ArchiveFile>
  /** Directories (from directory entries and from file paths), sorted. */
  readonly directories: ReadonlyArray<string>
  readonly unpackedBytes: number
  readonly checksums: Checksums
  /** `id`/`version` are read even when the rest of the manifest does not decode. */
  readonly manifest: {
    readonly id: string | null
    readonly version: string | null
    readonly decoded: Manifest | undefined
    readonly problems: ReadonlyArray<Problem>
  }
  /** Files that differ from checksums.json; non-empty means status `modified`. */
  readonly integrity: ReadonlyArray<IntegrityProblem>
  readonly signature: SignatureCheck
  readonly status: SignatureStatus
  /** Every failing check, for `host verify`: integrity, signature, then manifest. */
  readonly problems: ReadonlyArray<Problem>
}

export interface InspectOptions {
  /** How to name the archive in messages (a file name or an upload name). */
  readonly source: string
  readonly limits: ArchiveLimits
  readonly keyring: Keyring
  /** The text of a detached `<archive>.sig`, when there is one. */
  readonly detachedSignature?: string | undefined
}

type Refusal = { readonly reason: RefusalReason; readonly detail: string; readonly entry?: string }

/** Whether `text` is longer than `limit` UTF-8 bytes; not encoded when its length alone says no (3 bytes a unit at most). */
const utf8Over = (text: string, limit: number): boolean => text.length * 3 > limit && Buffer.byteLength(text) > limit

/** Checks one entry path and returns it canonical (no `./` prefix, no trailing `/`), or why not. */
export const canonicalEntryPath = (raw: string): Either.Either<string, Refusal> => {
  const refuse = (reason: RefusalReason, why: string) =>
    Either.left<Refusal>({ reason, entry: raw, detail: `entry ${JSON.stringify(raw)} ${why}` })
  if (raw.startsWith("/") || raw.startsWith("\\") || /^[A-Za-z]:/.test(raw)) return refuse("absolute-path", "is an absolute path")
  if (/[\u0000-\u001f\u007f]/.test(raw)) return refuse("invalid-path", "contains control characters")
  if (raw.includes("\\")) return refuse("invalid-path", "contains a backslash")
  let path = raw
  while (path.startsWith("./")) path = path.slice(2)
  if (path.endsWith("/")) path = path.slice(0, -1)
  if (path === "" || path === ".") return Either.right("")
  const segments = path.split("/")
  if (segments.includes("..")) return refuse("parent-segment", `has a ".." segment`)
  if (segments.some((segment) => segment === "" || segment === ".")) return refuse("invalid-path", "is not a canonical path")
  if (segments.some((segment) => utf8Over(segment, 255)) || utf8Over(path, 1024)) {
    return refuse("invalid-path", "is too long")
  }
  // Packing leaves these out at any depth, so no package holds them (and integrity checks skip them).
  const excluded = segments.find(isExcluded)
  if (excluded !== undefined) return refuse("invalid-path", `is inside ${JSON.stringify(excluded)}, which packages never contain`)
  return Either.right(path)
}

const entryTypeRefusal = (entry: RawTarEntry): Refusal | undefined => {
  const name = JSON.stringify(entry.path)
  switch (entry.type) {
    case "File":
    case "OldFile":
    case "ContiguousFile":
    case "Directory":
      return undefined
    case "SymbolicLink":
      return { reason: "symlink", entry: entry.path, detail: `entry ${name} is a symbolic link (to ${JSON.stringify(entry.linkpath ?? "")}); only files and folders are allowed` }
    case "Link":
      return { reason: "hardlink", entry: entry.path, detail: `entry ${name} is a hard link (to ${JSON.stringify(entry.linkpath ?? "")}); only files and folders are allowed` }
    case "CharacterDevice":
    case "BlockDevice":
    case "FIFO":
      return { reason: "special-file", entry: entry.path, detail: `entry ${name} is a ${entry.type === "FIFO" ? "FIFO" : "device"}; only files and folders are allowed` }
    default:
      return { reason: "unsupported-entry", entry: entry.path, detail: `entry ${name} has the unsupported type ${entry.type}` }
  }
}

interface CheckedEntries {
  readonly files: ReadonlyArray<ArchiveFile>
  readonly directories: ReadonlyArray<string>
  readonly unpackedBytes: number
}

/** Paths, types, duplicates, conflicts and limits of the parsed entries. */
const checkEntries = (raw: ReadonlyArray<RawTarEntry>, limits: ArchiveLimits): Either.Either<CheckedEntries, Refusal> => {
  const files: Array<ArchiveFile> = []
  const directories = new Set<string>()
  const seen = new Map<string, string>()
  let unpackedBytes = 0
  let listedFiles = 0
  let directoryEntries = 0
  for (const entry of raw) {
    const typeRefusal = entryTypeRefusal(entry)
    const path = canonicalEntryPath(entry.path)
    if (Either.isLeft(path)) return Either.left(path.left)
    if (typeRefusal !== undefined) return Either.left(typeRefusal)
    if (path.right === "") continue
    const folded = path.right.toLowerCase()
    if (entry.type === "Directory") {
      if (++directoryEntries > limits.files) {
        return Either.left({ reason: "too-many-files", detail: `it has more than ${limits.files} folder entries` })
      }
      directories.add(path.right)
      continue
    }
    const previous = seen.get(folded)
    if (previous !== undefined) {
      return Either.left({
        reason: "duplicate-entry",
        entry: entry.path,
        detail: previous === path.right
          ? `entry ${JSON.stringify(path.right)} appears more than once`
          : `entries ${JSON.stringify(previous)} and ${JSON.stringify(path.right)} differ only by case`
      })
    }
    seen.set(folded, path.right)
    // checksums.json and signature.json count for neither limit, as when packing.
    if (!packageMetaFiles.has(path.right)) {
      if (++listedFiles > limits.files) {
        return Either.left({ reason: "too-many-files", detail: `it has more than ${limits.files} files` })
      }
      unpackedBytes += entry.size
    }
    if (unpackedBytes > limits.unpackedBytes) {
      return Either.left({
        reason: "unpacked-too-large",
        detail: `its files add up to more than ${formatBytes(limits.unpackedBytes)}, the limit`
      })
    }
    files.push({ path: path.right, data: entry.data, executable: (entry.mode & 0o111) !== 0 })
  }
  // A path cannot be both a file and a folder (`a` and `a/b`).
  const fileSet = new Set(files.map((file) => file.path))
  for (const file of files) {
    // Each parent is the path up to one of its slashes.
    for (let slash = file.path.indexOf("/"); slash !== -1; slash = file.path.indexOf("/", slash + 1)) {
      const parent = file.path.slice(0, slash)
      if (fileSet.has(parent)) {
        return Either.left({
          reason: "path-conflict",
          entry: file.path,
          detail: `entry ${JSON.stringify(parent)} is a file, but ${JSON.stringify(file.path)} is inside it`
        })
      }
      directories.add(parent)
    }
  }
  // Folders implied by file paths are created on unpack too: `a/b/c/…/f` makes one per segment.
  if (directories.size > limits.files) {
    return Either.left({ reason: "too-many-files", detail: `it has more than ${limits.files} folders` })
  }
  for (const directory of directories) {
    if (fileSet.has(directory)) {
      return Either.left({
        reason: "path-conflict",
        entry: directory,
        detail: `entry ${JSON.stringify(directory)} is both a file and a folder`
      })
    }
  }
  return Either.right({ files, directories: [...directories].sort(), unpackedBytes })
}

/**
 * Decompresses (when gzip) and parses within the limits, telling a bomb from an honest oversized
 * archive by which cap stopped the inflation.
 */
const readEntries = (
  bytes: Uint8Array,
  limits: ArchiveLimits,
  { gunzipAndParseTar, isGzip, parseTar }: typeof import("./Tar.js")
): Effect.Effect<ReadonlyArray<RawTarEntry>, Refusal> => {
  const maxEntries = 2 * limits.files + 1
  if (!isGzip(bytes)) {
    return Effect.suspend(() => {
      const parsed = parseTar(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), maxEntries)
      return Either.isRight(parsed) ? Effect.succeed(parsed.right) : Effect.fail(readFailure(parsed.left, limits, false))
    })
  }
  const honestCap = limits.unpackedBytes + tarOverheadPerEntry * 2 * limits.files + 1024
  const bombCap = Math.max(bombFloorBytes, bytes.length * bombRatio)
  return gunzipAndParseTar(bytes, Math.min(honestCap, bombCap), maxEntries).pipe(
    Effect.mapError((failure) => readFailure(failure, limits, bombCap < honestCap, bytes.length))
  )
}

const readFailure = (failure: TarReadFailure, limits: ArchiveLimits, bombCapFirst: boolean, compressedBytes = 0): Refusal => {
  switch (failure._tag) {
    case "TooLarge":
      return bombCapFirst
        ? {
          reason: "compression-bomb",
          detail: `it inflates more than ${bombRatio} times its size (${formatBytes(compressedBytes)} compressed), which signals a decompression bomb`
        }
        : { reason: "unpacked-too-large", detail: `it inflates past the unpacked limit of ${formatBytes(limits.unpackedBytes)}` }
    case "NotTar":
      return { reason: "not-an-archive", detail: failure.detail }
    case "Truncated":
      return { reason: "truncated", detail: failure.detail }
    case "Corrupt":
      return { reason: "corrupt", detail: failure.detail }
    case "TooManyEntries":
      return { reason: "too-many-files", detail: `it has more than ${limits.files} files` }
    case "Unsupported":
      return {
        reason: "unsupported-entry",
        entry: failure.path,
        detail: `entry ${JSON.stringify(failure.path)} has the unsupported type ${failure.type}`
      }
  }
}

/** The UTF-8 text of an entry's bytes, decoded in place (`Buffer.from(data)` would copy them first). */
const utf8Text = (data: Uint8Array): string => Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("utf8")

const decodeChecksums = (data: Uint8Array): Either.Either<Checksums, string> => {
  const parsed = parseChecksums(utf8Text(data))
  if (Either.isLeft(parsed)) return parsed
  for (const key of Object.keys(parsed.right)) {
    const path = canonicalEntryPath(key)
    if (Either.isLeft(path) || path.right !== key || path.right === "" || packageMetaFiles.has(key)) {
      return Either.left(`checksums.json lists ${JSON.stringify(key)}, which is not a canonical file path of the package`)
    }
  }
  return parsed
}

const readManifest = (file: ArchiveFile | undefined): Inspection["manifest"] => {
  if (file === undefined) {
    return { id: null, version: null, decoded: undefined, problems: [problem("extension.yaml", "is missing")] }
  }
  // Size and entry limits before the parse, a parse linear in the text (domain/YamlText).
  // (Refused by its byte size before it is even decoded as text.)
  const read: Either.Either<unknown, ReadonlyArray<Problem>> = file.data.byteLength > manifestYamlLimits.maxBytes
    ? Either.left([problem("(yaml)", `the file is ${formatBytes(file.data.byteLength)}; the limit is ${formatBytes(manifestYamlLimits.maxBytes)}`)])
    : readYaml(utf8Text(file.data), manifestYamlLimits)
  if (Either.isLeft(read)) {
    const why = describeYamlProblems(read.left)
    return { id: null, version: null, decoded: undefined, problems: [problem("extension.yaml", `is not valid YAML: ${why}`)] }
  }
  const raw = read.right
  const result = decodeManifest(raw)
  const field = (key: string): string | null => {
    if (raw === null || typeof raw !== "object") return null
    const value = (raw as Record<string, unknown>)[key]
    return typeof value === "string" ? value : null
  }
  return {
    id: result.manifest?.document.id ?? field("id"),
    version: result.manifest?.document.version ?? field("version"),
    decoded: result.errors.length === 0 ? result.manifest : undefined,
    problems: result.errors.map((p) => problem(`extension.yaml: ${p.path}`, p.message))
  }
}

// Inflating and hashing an archive is the costly part of an install, so a request should do it once
// (docs/decisions.md "An uploaded archive is inspected and unpacked once"); this per-thread count lets a
// test see how many times it happened.
let inspections = 0

/** How many archives this thread has inspected since it started (a diagnostic, never a decision). */
export const inspectionCount = (): number => inspections

/**
 * Reads an archive (tar.gz or plain tar) in memory and checks everything: size, compression ratio,
 * every entry's path and type, duplicates, limits, checksums.json against every file, the manifest
 * and the signatures. Fails with ArchiveRefused when the archive is unsafe or unreadable; files
 * that differ from checksums.json are reported (status `modified`), not failed, so `host verify`
 * can list them. Writes nothing.
 */
export const inspectArchive = Effect.fn("Archive.inspect")(function*(bytes: Uint8Array, options: InspectOptions) {
  inspections += 1
  const { limits, source } = options
  const refuse = (refusal: Refusal) =>
    new ArchiveRefused({
      source,
      reason: refusal.reason,
      detail: refusal.detail,
      ...(refusal.entry === undefined ? {} : { entry: refusal.entry })
    })
  if (bytes.length > limits.archiveBytes) {
    return yield* refuse({
      reason: "archive-too-large",
      detail: `it is ${formatBytes(bytes.length)}; the limit is ${formatBytes(limits.archiveBytes)}`
    })
  }
  const tar = yield* tarModule
  const compressed = tar.isGzip(bytes)
  const raw = yield* readEntries(bytes, limits, tar).pipe(Effect.mapError(refuse))
  const checked = checkEntries(raw, limits)
  if (Either.isLeft(checked)) return yield* refuse(checked.left)
  const { directories, files, unpackedBytes } = checked.right
  const byPath = new Map(files.map((file) => [file.path, file]))

  const checksumsFile = byPath.get("checksums.json")
  if (checksumsFile === undefined) {
    return yield* refuse({ reason: "checksums-missing", detail: "it has no checksums.json, so its files cannot be verified" })
  }
  const checksums = decodeChecksums(checksumsFile.data)
  if (Either.isLeft(checksums)) return yield* refuse({ reason: "checksums-malformed", entry: "checksums.json", detail: checksums.left })
  if (!byPath.has("extension.yaml") && !lists(checksums.right, "extension.yaml")) {
    return yield* refuse({ reason: "manifest-missing", detail: "it has no extension.yaml at its root" })
  }

  const integrity: Array<IntegrityProblem> = []
  for (const file of files) {
    if (packageMetaFiles.has(file.path)) continue
    const expected = lists(checksums.right, file.path) ? checksums.right[file.path] : undefined
    if (expected === undefined) {
      integrity.push({ reason: "unlisted-file", path: file.path, message: "is not listed in checksums.json" })
    } else if (sha256Hex(file.data) !== expected) {
      integrity.push({ reason: "checksum-mismatch", path: file.path, message: "content differs from checksums.json" })
    }
  }
  for (const listed of Object.keys(checksums.right).sort()) {
    if (!byPath.has(listed)) {
      integrity.push({ reason: "missing-file", path: listed, message: "is listed in checksums.json but missing from the archive" })
    }
  }

  const signature = yield* checkSignatures({
    checksumsJson: checksumsFile.data,
    signatureJson: byPath.get("signature.json")?.data,
    archiveBytes: bytes,
    detached: options.detachedSignature,
    detachedLabel: `${source}.sig`,
    keyring: options.keyring
  })
  const manifest = readManifest(byPath.get("extension.yaml"))
  const status: SignatureStatus = integrity.length > 0 ? "modified" : signature.status
  return {
    source,
    sha256: sha256Hex(bytes),
    bytes: bytes.length,
    compressed,
    files,
    directories,
    unpackedBytes,
    checksums: checksums.right,
    manifest,
    integrity,
    signature,
    status,
    problems: [
      ...integrity.map((p) => problem(p.path, p.message)),
      ...signature.problems,
      ...manifest.problems
    ]
  } satisfies Inspection
})

/** Files listed in checksums.json: the extension's own files. */
export const listedFileCount = (inspection: Inspection): number => Object.keys(inspection.checksums).length

/** The first integrity problem as a refusal (hash mismatch, unlisted or missing file). */
export const integrityRefusal = (inspection: Inspection): ArchiveRefused | undefined => {
  const first = inspection.integrity[0]
  if (first === undefined) return undefined
  const more = inspection.integrity.length > 1 ? ` (and ${inspection.integrity.length - 1} more problems)` : ""
  return new ArchiveRefused({
    source: inspection.source,
    reason: first.reason,
    entry: first.path,
    detail: `${JSON.stringify(first.path)} ${first.message}${more}`
  })
}

/**
 * The checks install runs before staging: files must match checksums.json (each difference is
 * refused with its own reason), then the signature policy (docs/archives.md).
 */
export const enforceTrust = (inspection: Inspection, requireSignatures: boolean) =>
  Effect.gen(function*() {
    const refusal = integrityRefusal(inspection)
    if (refusal !== undefined) return yield* refusal
    const policy = signaturePolicy(inspection.status, requireSignatures)
    if (Either.isLeft(policy)) {
      return yield* new SignatureRefused({ source: inspection.source, status: inspection.status, detail: policy.left })
    }
    return inspection
  })

// ---------------------------------------------------------------------------------------------
// Files

/** Reads an archive file, refusing it by its size before reading when it is over the limit. */
export const readArchiveFile = Effect.fn("Archive.readFile")(function*(file: string, limits: ArchiveLimits) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const info = yield* fs.stat(file).pipe(Effect.mapError(ioError("read", file)))
  const source = path.basename(file)
  if (info.type !== "File") {
    return yield* new ArchiveRefused({ source, reason: "not-an-archive", detail: `${file} is not a regular file` })
  }
  if (Number(info.size) > limits.archiveBytes) {
    return yield* new ArchiveRefused({
      source,
      reason: "archive-too-large",
      detail: `it is ${formatBytes(Number(info.size))}; the limit is ${formatBytes(limits.archiveBytes)}`
    })
  }
  return yield* fs.readFile(file).pipe(Effect.mapError(ioError("read", file)))
})

/** The text of `<file>.sig` when it exists. */
export const readDetachedSignature = Effect.fn("Archive.readDetachedSignature")(function*(file: string) {
  const fs = yield* FileSystem.FileSystem
  const signatureFile = `${file}.sig`
  const exists = yield* fs.exists(signatureFile).pipe(Effect.orElseSucceed(() => false))
  if (!exists) return undefined
  const info = yield* fs.stat(signatureFile).pipe(Effect.mapError(ioError("read", signatureFile)))
  // A signature is 128 hex characters; anything much longer is not one (and is not read whole).
  if (Number(info.size) > 4096) return "(larger than 4 KiB)"
  return yield* fs.readFileString(signatureFile).pipe(Effect.mapError(ioError("read", signatureFile)))
})

/** Reads `file` (and `<file>.sig` when present) and inspects it. */
export const inspectFile = Effect.fn("Archive.inspectFile")(function*(
  file: string,
  options: { readonly limits: ArchiveLimits; readonly keyring: Keyring }
) {
  const path = yield* Path.Path
  const bytes = yield* readArchiveFile(file, options.limits)
  const detachedSignature = yield* readDetachedSignature(file)
  return yield* inspectArchive(bytes, {
    source: path.basename(file),
    limits: options.limits,
    keyring: options.keyring,
    detachedSignature
  })
})

// ---------------------------------------------------------------------------------------------
// Unpacking

export interface UnpackOptions {
  /** The folder the staged tree is created in (created when missing), e.g. `storage/host/staging`. */
  readonly into: string
  /** Name of the staged folder; default `<vendor>-<name>-<version>-<random>`. Must not exist. */
  readonly name?: string | undefined
}

/**
 * Writes an inspected archive's files into a fresh folder under `options.into` and returns its
 * path. Refuses (before writing) an archive whose files differ from checksums.json. The files are
 * written into a temporary sibling folder that is renamed into place at the end; on any failure it
 * is removed, so nothing is left behind.
 */
export const unpackArchive = Effect.fn("Archive.unpack")(function*(inspection: Inspection, options: UnpackOptions) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const refusal = integrityRefusal(inspection)
  if (refusal !== undefined) return yield* refusal
  const parent = path.resolve(options.into)
  const baseName = options.name ??
    `${(inspection.manifest.id ?? "extension").replace("/", "-")}-${inspection.manifest.version ?? "0.0.0"}-${yield* randomHex(4)}`
  const target = path.join(parent, baseName)
  if (baseName.includes("/") || baseName.includes("\\") || baseName === "." || baseName === "..") {
    return yield* new ArchiveIOError({ operation: "create", path: target, detail: "the staging name must be a plain folder name" })
  }
  if (yield* fs.exists(target).pipe(Effect.orElseSucceed(() => false))) {
    return yield* new ArchiveIOError({ operation: "create", path: target, detail: "it already exists" })
  }
  const parentExisted = yield* fs.exists(parent).pipe(Effect.orElseSucceed(() => false))
  yield* fs.makeDirectory(parent, { recursive: true }).pipe(Effect.mapError(ioError("create", parent)))
  const partial = path.join(parent, `.${baseName}.partial`)
  const write = Effect.gen(function*() {
    yield* fs.makeDirectory(partial).pipe(Effect.mapError(ioError("create", partial)))
    // Only the deepest folders need creating: `recursive` makes their parents.
    const parents = new Set(inspection.directories.map((directory) => directory.slice(0, Math.max(0, directory.lastIndexOf("/")))))
    const leaves = inspection.directories.filter((directory) => !parents.has(directory))
    yield* sliced(
      leaves,
      (directory) => mkdirSync(path.join(partial, directory), { recursive: true }),
      () => 0,
      (directory) => nodeIoError("create", path.join(partial, directory))
    )
    yield* sliced(
      inspection.files,
      (file) => {
        writeFileSync(path.join(partial, file.path), file.data, { flag: "wx", mode: fileMode(file.executable) })
        return file.data.byteLength
      },
      (written) => written,
      (file) => nodeIoError("write", path.join(partial, file.path))
    )
    yield* fs.rename(partial, target).pipe(Effect.mapError(ioError("rename", partial)))
    return target
  })
  return yield* write.pipe(
    Effect.onError(() =>
      Effect.ignore(fs.remove(parentExisted ? partial : parent, { recursive: true, force: true }))
    )
  )
})

/** Inspect, enforce integrity and the signature policy, and unpack: what install does with a `.host`. */
export const verifyAndUnpack = Effect.fn("Archive.verifyAndUnpack")(function*(
  bytes: Uint8Array,
  options: InspectOptions & UnpackOptions & { readonly requireSignatures: boolean }
) {
  const inspection = yield* inspectArchive(bytes, options)
  yield* enforceTrust(inspection, options.requireSignatures)
  const staged = yield* unpackArchive(inspection, options)
  return { inspection, staged }
})
