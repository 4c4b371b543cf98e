import { FileSystem, Path } from "@effect/platform"
import { type PlatformError, SystemError } from "@effect/platform/Error"
import { Effect, Either, Schema } from "effect"
import { type Dirent, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { sha256Hex } from "../system/Hash.js"

// An extension tree on disk: its files (with the archive exclusions) and their checksums.

/** Names excluded from packing at any depth (docs/archives.md "Format"). */
const excludedNames: ReadonlySet<string> = new Set(["node_modules", ".git", "vendor", ".idea", ".vscode", ".DS_Store"])
const excludedSuffixes = [".host", ".host.sha256", ".host.sig"]

export const isExcluded = (name: string): boolean =>
  excludedNames.has(name) || excludedSuffixes.some((suffix) => name.endsWith(suffix))

/** Files the framework writes into a package itself; never listed in checksums.json. */
export const packageMetaFiles: ReadonlySet<string> = new Set(["checksums.json", "signature.json"])

export const systemError = (method: string, path: string) => (cause: unknown) => {
  const code = (cause as NodeJS.ErrnoException).code
  return new SystemError({
    reason: code === "ENOENT" ? "NotFound" : code === "EACCES" || code === "EPERM" ? "PermissionDenied" : "Unknown",
    module: "FileSystem",
    method,
    pathOrDescriptor: path,
    description: cause instanceof Error ? cause.message : String(cause),
    cause
  })
}

/**
 * Every entry below `root` that is not a folder, as a POSIX relative path with its directory entry, in
 * directory order; `skip` names leave a whole entry (and what is below it) out. One readdir per folder with
 * the types (no stat per file): planning reads thousands of trees. Links are never followed. `onFolder`
 * sees each folder (`""` for the root) before it is listed.
 */
export const walkTree = (
  root: string,
  skip: (name: string) => boolean,
  onFolder?: (relative: string) => void
): ReadonlyArray<readonly [string, Dirent]> => {
  const found: Array<readonly [string, Dirent]> = []
  const walk = (relative: string) => {
    onFolder?.(relative)
    for (const entry of readdirSync(relative === "" ? root : join(root, relative), { withFileTypes: true })) {
      if (skip(entry.name)) continue
      const child = relative === "" ? entry.name : `${relative}/${entry.name}`
      if (entry.isDirectory()) walk(child)
      else found.push([child, entry])
    }
  }
  walk("")
  return found
}

/**
 * Every regular file below `root` as a sorted POSIX relative path, skipping excluded names at any
 * depth. Symbolic links are skipped without being followed (a link to a file or folder outside the
 * tree is never packed, validated or checked), and so are other special files.
 */
export const listFiles = (root: string): Effect.Effect<ReadonlyArray<string>, PlatformError> =>
  Effect.try({
    try: () => walkTree(root, isExcluded).filter(([, entry]) => entry.isFile()).map(([path]) => path).sort(),
    catch: systemError("readDirectory", root)
  })

/**
 * The checksums an installed tree has now, for comparing with its checksums.json: every entry counts (no
 * exclusions, unlike packing), and a symbolic link or special file stands as `(symlink)` / `(special
 * file)` without being followed or read, so anything planted beside the package shows as a change.
 */
export const hashInstalledTree = (root: string): Effect.Effect<Record<string, string>, PlatformError> =>
  Effect.try({
    try: () =>
      Object.fromEntries(
        walkTree(root, () => false)
          .filter(([path]) => !packageMetaFiles.has(path))
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([path, entry]) => [
            path,
            entry.isFile() ? sha256Hex(readFileSync(join(root, path))) : entry.isSymbolicLink() ? "(symlink)" : "(special file)"
          ])
      ),
    catch: systemError("readDirectory", root)
  })

/** A file's text, or undefined when there is no such file (read synchronously: see listFiles). */
export const readTextIfExists = (file: string): Effect.Effect<string | undefined, PlatformError> =>
  Effect.try({
    try: () => {
      try {
        return readFileSync(file, "utf8")
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "ENOTDIR") return undefined
        throw error
      }
    },
    catch: systemError("readFile", file)
  })

/** sha256 of each listed file (relative paths below `root`). */
export const hashFiles = (root: string, files: ReadonlyArray<string>): Effect.Effect<Record<string, string>, PlatformError> =>
  Effect.try({
    try: () => Object.fromEntries(files.map((file) => [file, sha256Hex(readFileSync(join(root, file)))])),
    catch: systemError("readFile", root)
  })

export const Checksums = Schema.Record({
  key: Schema.String,
  value: Schema.String.pipe(Schema.filter((hex) => /^[0-9a-f]{64}$/.test(hex) || "must be a lowercase sha256 hex digest"))
})
export type Checksums = typeof Checksums.Type

const sha256Pattern = /^[0-9a-f]{64}$/

/**
 * Parses the text of a `checksums.json` into a null-prototype map, so every listed path is an own key —
 * `"__proto__"` and `"constructor"` included — and lookups never reach Object.prototype. Decoding it
 * with a Schema record would drop `"__proto__"` (an assignment sets the prototype instead), and
 * formatting a deeply nested value for an error message recurses, so the checks here are written to
 * never print the value (docs/decisions.md, "checksums.json is read into a null-prototype map").
 */
export const parseChecksums = (text: string): Either.Either<Checksums, string> => {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (error) {
    return Either.left(`checksums.json is not JSON (${error instanceof Error ? error.message : String(error)})`)
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return Either.left(`checksums.json is malformed: it must be an object of paths to sha256 digests, not ${raw === null ? "null" : Array.isArray(raw) ? "an array" : `a ${typeof raw}`}`)
  }
  const checksums: Record<string, string> = Object.create(null) as Record<string, string>
  for (const key of Object.keys(raw)) {
    const value: unknown = (raw as Record<string, unknown>)[key]
    if (typeof value !== "string" || !sha256Pattern.test(value)) {
      return Either.left(`checksums.json is malformed at ${JSON.stringify(key)}: must be a lowercase sha256 hex digest`)
    }
    checksums[key] = value
  }
  return Either.right(checksums)
}

/** Whether `checksums` lists `file` (an own key; never a name inherited from Object.prototype). */
export const lists = (checksums: Readonly<Record<string, string>>, file: string): boolean => Object.hasOwn(checksums, file)

export type TreeIntegrity =
  | { readonly _tag: "Intact"; readonly files: number }
  | { readonly _tag: "Modified"; readonly problems: ReadonlyArray<string> }
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Unverifiable"; readonly reason: string }

/** Compares the files of an installed tree with its checksums.json: changed, missing and extra files. */
export const checkTree = (root: string): Effect.Effect<TreeIntegrity, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    if (!(yield* fs.exists(root))) return { _tag: "Missing" } as const
    const checksumsFile = path.join(root, "checksums.json")
    if (!(yield* fs.exists(checksumsFile))) return { _tag: "Unverifiable", reason: "no checksums.json" } as const
    const parsed = parseChecksums(yield* fs.readFileString(checksumsFile))
    if (Either.isLeft(parsed)) return { _tag: "Unverifiable", reason: parsed.left } as const
    const checksums = parsed.right
    const actual = yield* hashInstalledTree(root)
    const problems: Array<string> = []
    for (const [file, expected] of Object.entries(checksums)) {
      if (!lists(actual, file)) problems.push(`${file}: missing`)
      else if (actual[file] !== expected) problems.push(`${file}: content differs from checksums.json`)
    }
    for (const file of Object.keys(actual)) {
      if (!lists(checksums, file)) problems.push(`${file}: not listed in checksums.json`)
    }
    return problems.length === 0
      ? { _tag: "Intact", files: Object.keys(checksums).length } as const
      : { _tag: "Modified", problems } as const
  }).pipe(
    Effect.catchAll((error) => Effect.succeed<TreeIntegrity>({ _tag: "Unverifiable", reason: error.message }))
  )
