import { FileSystem, Path } from "@effect/platform"
import { Effect, Either } from "effect"
import { parse as parseYaml } from "yaml"
import type { ConfigDocument } from "../config/HostConfig.js"
import type { SignatureStatus } from "../domain/Installed.js"
import { decodeManifest, type Manifest } from "../domain/Manifest.js"
import { problem, type Problem } from "../domain/Problems.js"
import { ArchiveIOError, ArchiveRefused, ioError, type RefusalReason, SignatureRefused } from "./ArchiveErrors.js"
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
import { encodeTar, gunzipCapped, gzipDeterministic, isGzip, parseTar, type RawTarEntry, type TarEntryToWrite } from "./Tar.js"
import { Checksums, listFiles, packageMetaFiles, sha256Hex } from "./Tree.js"

// `.host` archives (DESIGN.md §8): pack a tree deterministically; inspect an archive in memory
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

/** The defaults of DESIGN.md §3: 50 MiB archive, 200 MiB unpacked, 10,000 files. */
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

const formatBytes = (bytes: number): string => {
  if (bytes < 1024) return `${bytes} bytes`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}

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
  const sorted: Record<string, string> = {}
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
 * Packs the extension tree at `root` as a `.host` archive, in memory. Excluded names are skipped at
 * any depth (Tree.listFiles), only regular files are packed, and a checksums.json or signature.json
 * at the root is regenerated rather than copied.
 */
export const packTree = Effect.fn("Archive.packTree")(function*(root: string, options: PackOptions = {}) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const limits = options.limits ?? defaultLimits
  const listed = (yield* listFiles(root).pipe(Effect.mapError(ioError("read", root))))
    .filter((file) => !packageMetaFiles.has(file))
  const refuse = (reason: RefusalReason, detail: string) => new ArchiveRefused({ source: root, reason, detail })
  if (listed.length > limits.files) {
    return yield* refuse("too-many-files", `the tree has ${listed.length} files; the limit is ${limits.files}`)
  }
  const infos = yield* Effect.forEach(listed, (file) => {
    const absolute = path.join(root, file)
    return fs.stat(absolute).pipe(Effect.mapError(ioError("read", absolute)))
  }, { concurrency: 32 })
  const unpackedBytes = infos.reduce((sum, info) => sum + Number(info.size), 0)
  if (unpackedBytes > limits.unpackedBytes) {
    return yield* refuse(
      "unpacked-too-large",
      `the files add up to ${formatBytes(unpackedBytes)}; the limit is ${formatBytes(limits.unpackedBytes)}`
    )
  }
  const files = yield* Effect.forEach(listed, (file, index) => {
    const absolute = path.join(root, file)
    return fs.readFile(absolute).pipe(
      Effect.mapError(ioError("read", absolute)),
      Effect.map((data) => ({ path: file, data, executable: (infos[index]!.mode & 0o111) !== 0 }))
    )
  }, { concurrency: 32 })
  const checksums: Record<string, string> = {}
  for (const file of files) checksums[file.path] = sha256Hex(file.data)
  const checksumsJson = encodeChecksums(checksums)
  const signature: SignatureFile | undefined = options.secretKey === undefined ? undefined : {
    alg: "ed25519",
    key: options.secretKey.publicKey,
    sig: yield* signBytes(checksumsJson, options.secretKey)
  }
  const meta: Array<readonly [string, Uint8Array]> = [["checksums.json", checksumsJson]]
  if (signature !== undefined) meta.push(["signature.json", encodeSignatureFile(signature)])
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

/** Checks one entry path and returns it canonical (no `./` prefix, no trailing `/`), or why not. */
export const canonicalEntryPath = (raw: string): Either.Either<string, Refusal> => {
  const refuse = (reason: RefusalReason, why: string) =>
    Either.left<Refusal>({ reason, entry: raw, detail: `entry ${JSON.stringify(raw)} ${why}` })
  if (raw.startsWith("/") || raw.startsWith("\\") || /^[A-Za-z]:/.test(raw)) return refuse("absolute-path", "is an absolute path")
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(raw)) return refuse("invalid-path", "contains control characters")
  if (raw.includes("\\")) return refuse("invalid-path", "contains a backslash")
  let path = raw
  while (path.startsWith("./")) path = path.slice(2)
  if (path.endsWith("/")) path = path.slice(0, -1)
  if (path === "" || path === ".") return Either.right("")
  const segments = path.split("/")
  if (segments.includes("..")) return refuse("parent-segment", `has a ".." segment`)
  if (segments.some((segment) => segment === "" || segment === ".")) return refuse("invalid-path", "is not a canonical path")
  if (segments.some((segment) => Buffer.byteLength(segment) > 255) || Buffer.byteLength(path) > 1024) {
    return refuse("invalid-path", "is too long")
  }
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
  let directoryEntries = 0
  for (const entry of raw) {
    const typeRefusal = entryTypeRefusal(entry)
    const path = canonicalEntryPath(entry.path)
    if (Either.isLeft(path)) return path
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
    if (files.length + 1 > limits.files) {
      return Either.left({ reason: "too-many-files", detail: `it has more than ${limits.files} files` })
    }
    unpackedBytes += entry.size
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
    const parts = file.path.split("/")
    for (let depth = 1; depth < parts.length; depth++) {
      const parent = parts.slice(0, depth).join("/")
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

/** Decompresses (when gzip) within the limits, telling a bomb from an honest oversized archive. */
const decompress = (bytes: Uint8Array, limits: ArchiveLimits, refuse: (refusal: Refusal) => ArchiveRefused) =>
  Effect.gen(function*() {
    if (!isGzip(bytes)) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    const honestCap = limits.unpackedBytes + tarOverheadPerEntry * 2 * limits.files + 1024
    const bombCap = Math.max(bombFloorBytes, bytes.length * bombRatio)
    return yield* gunzipCapped(bytes, Math.min(honestCap, bombCap)).pipe(
      Effect.mapError((failure) => {
        switch (failure._tag) {
          case "TooLarge":
            return refuse(
              bombCap < honestCap
                ? {
                  reason: "compression-bomb",
                  detail: `it inflates more than ${bombRatio} times its size (${formatBytes(bytes.length)} compressed), which signals a decompression bomb`
                }
                : {
                  reason: "unpacked-too-large",
                  detail: `it inflates past the unpacked limit of ${formatBytes(limits.unpackedBytes)}`
                }
            )
          case "Truncated":
            return refuse({ reason: "truncated", detail: failure.detail })
          case "Corrupt":
            return refuse({ reason: "corrupt", detail: failure.detail })
        }
      })
    )
  })

const decodeChecksums = (data: Uint8Array): Either.Either<Checksums, string> => {
  let raw: unknown
  try {
    raw = JSON.parse(Buffer.from(data).toString("utf8"))
  } catch (error) {
    return Either.left(`checksums.json is not JSON (${error instanceof Error ? error.message : String(error)})`)
  }
  const decoded = Either.mapLeft(
    Checksums.pipe((schema) => schemaDecode(schema)(raw)),
    (issue) => `checksums.json ${issue}`
  )
  if (Either.isLeft(decoded)) return decoded
  for (const key of Object.keys(decoded.right)) {
    const path = canonicalEntryPath(key)
    if (Either.isLeft(path) || path.right !== key || packageMetaFiles.has(key)) {
      return Either.left(`checksums.json lists ${JSON.stringify(key)}, which is not a canonical file path of the package`)
    }
  }
  return decoded
}

import { ParseResult, Schema } from "effect"

const schemaDecode = <A, I>(schema: Schema.Schema<A, I>) => (raw: unknown): Either.Either<A, string> =>
  Either.mapLeft(
    Schema.decodeUnknownEither(schema)(raw),
    (error) => {
      const first = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
      if (first === undefined) return "is malformed"
      const where = first.path.length === 0 ? "" : ` at ${JSON.stringify(first.path.map(String).join("."))}`
      return `is malformed${where}: ${first.message}`
    }
  )
