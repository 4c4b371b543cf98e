import type { PlatformError } from "@effect/platform/Error"
import { Context, Effect, Option, Schema, type Scope } from "effect"
import { lstatSync, mkdirSync, readFileSync, renameSync, type Stats, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { sha256Hex } from "../system/Hash.js"
import { hashFiles, hashInstalledTree, isExcluded, listFiles, packageMetaFiles, systemError, walkTree } from "./Tree.js"

// The file hashes of extension trees, remembered between runs by the identity of every entry (device,
// inode, size, modification and change time), so planning a panel of hundreds of extensions in sync
// reads one stat per entry instead of every folder listing and every file (docs/architecture.md,
// "One reconcile"; docs/decisions.md, "Tree hashes are cached by the identity of each entry").
//
// Why it stays correct: writing a file or adding, removing or renaming an entry of a folder changes the
// change time (ctime) of that file or folder, and nobody can set a ctime back (touch sets mtime only).
// An entry changed within the same clock tick as its stat would keep its stamp, so an entry whose
// times are less than two seconds old when a tree is read is not remembered (git's "racy clean" rule):
// the next run hashes that tree again. Anything unreadable or unexpected in the cache file is a miss.

/** `installed`: every entry of an installed tree (hashInstalledTree); `package`: the files a package holds. */
export type TreeMode = "installed" | "package"

export interface TreeHashes {
  /** What hashInstalledTree(root) answers. */
  readonly installed: (root: string) => Effect.Effect<Record<string, string>, PlatformError>
  /** The checksums of a package folder's files: listFiles, without checksums.json and signature.json, hashed. */
  readonly package: (root: string) => Effect.Effect<Record<string, string>, PlatformError>
}

const packageChecksums = (root: string) =>
  Effect.flatMap(listFiles(root), (files) => hashFiles(root, files.filter((file) => !packageMetaFiles.has(file))))

/** Without a cache: every call reads the tree. */
export const uncachedTreeHashes: TreeHashes = { installed: hashInstalledTree, package: packageChecksums }

/** The hashes planning uses; a reconcile run provides a cached one (cachedTreeHashes). */
export class TreeHashing extends Context.Reference<TreeHashing>()("host/archive/TreeHashing", {
  defaultValue: (): TreeHashes => uncachedTreeHashes
}) {}

/** One tree as last read: its folders' and entries' stamps, and each entry's hash (or link / special marker). */
export const Snapshot = Schema.Struct({
  dirs: Schema.Array(Schema.Tuple(Schema.String, Schema.String)),
  entries: Schema.Array(Schema.Tuple(Schema.String, Schema.String, Schema.String))
})
type Snapshot = typeof Snapshot.Type

const CacheFile = Schema.Struct({
  format: Schema.Literal(1),
  trees: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})
const decodeCacheFile = Schema.decodeUnknownOption(CacheFile)

/** Whether `value` is an array of exactly `length`-long arrays of strings, with no holes. */
const isStringTuples = (value: unknown, length: number): boolean => {
  if (!Array.isArray(value)) return false
  for (let index = 0; index < value.length; index++) {
    const tuple: unknown = value[index]
    if (!Array.isArray(tuple) || tuple.length !== length) return false
    for (let part = 0; part < length; part++) if (typeof tuple[part] !== "string") return false
  }
  return true
}

// What Snapshot's decoder accepts, checked by hand: planning checks one snapshot per tree, and the
// Schema decoder cost more than the stats it guards; test/archive/tree-cache.test.ts keeps the two in step
// (docs/decisions.md "P4 (session 10): Schema checks by hand, modules on first use").
export const snapshotOf = (value: unknown): Option.Option<Snapshot> =>
  typeof value === "object" && value !== null && !Array.isArray(value) &&
    isStringTuples((value as { dirs: unknown }).dirs, 2) && isStringTuples((value as { entries: unknown }).entries, 3)
    ? Option.some(value as Snapshot)
    : Option.none()

// Times in milliseconds with their fraction (a double holds them to well under a microsecond); bigint
// stats would cost more than the stat itself.
const stampOf = (stats: Stats) => `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`

const statOf = (file: string): Stats | undefined => lstatSync(file, { throwIfNoEntry: false })

/** Whether the entry at `path` (the root itself, or below it) still has `stamp`. */
const keeps = (root: string, path: string, stamp: string): boolean => {
  // The paths were written by walkTree (POSIX, relative, no `.` or `..`), so the root, a slash and the
  // path name the same entry `join` would, without its normalising (a few per cent of a plan in sync).
  const stats = statOf(path === "" ? root : `${root}/${path}`)
  return stats !== undefined && stampOf(stats) === stamp
}

/** Whether every folder and entry of the snapshot still has its stamp. */
const unchanged = (root: string, snapshot: Snapshot): boolean =>
  snapshot.dirs.every(([dir, stamp]) => keeps(root, dir, stamp)) &&
  snapshot.entries.every(([file, stamp]) => keeps(root, file, stamp))

/**
 * Reads a tree as its mode says, with the stamps to remember it by; undefined stamps when an entry is
 * too new to be remembered (see above).
 */
const readTree = (
  root: string,
  mode: TreeMode,
  racyMillis: number
): { readonly hashes: Record<string, string>; readonly snapshot: Snapshot | undefined } => {
  const now = Date.now()
  let racy = false
  const stamp = (file: string) => {
    const stats = statOf(file)
    if (stats === undefined) {
      racy = true
      return ""
    }
    if (now - stats.ctimeMs < racyMillis || now - stats.mtimeMs < racyMillis) racy = true
    return stampOf(stats)
  }
  const dirs: Array<readonly [string, string]> = []
  // Folders are stamped before they are listed: an entry added after the stamp changes it for next time.
  const listed = walkTree(root, mode === "package" ? isExcluded : () => false, (dir) => dirs.push([dir, stamp(dir === "" ? root : join(root, dir))]))
  const kept = listed
    .filter(([path, entry]) => !packageMetaFiles.has(path) && (mode === "installed" || entry.isFile()))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const entries = kept.map(([path, entry]): readonly [string, string, string] => {
    const file = join(root, path)
    const before = stamp(file)
    const hash = entry.isFile() ? sha256Hex(readFileSync(file)) : entry.isSymbolicLink() ? "(symlink)" : "(special file)"
    return [path, before, hash]
  })
  return {
    hashes: Object.fromEntries(entries.map(([path, , hash]) => [path, hash])),
    snapshot: racy ? undefined : { dirs, entries }
  }
}

/**
 * Tree hashes remembered in `file` (a JSON file under storage/host/cache) for the scope: read once when
 * made, written back (atomically) when the scope closes if anything changed. A cache that cannot be read
 * or written only costs the speed-up. `racyMillis`: how old an entry must be to be remembered (2 s).
 */
export const cachedTreeHashes = (file: string, options: { readonly racyMillis?: number } = {}): Effect.Effect<TreeHashes, never, Scope.Scope> =>
  Effect.gen(function*() {
    const stored = yield* Effect.sync(() =>
      Option.getOrElse(
        Option.flatMap(
          Option.liftThrowable(() => JSON.parse(readFileSync(file, "utf8")) as unknown)(),
          decodeCacheFile
        ),
        () => ({ format: 1 as const, trees: {} })
      )
    ).pipe(Effect.withSpan("TreeCache.read"))
    const trees = new Map<string, unknown>(Object.entries(stored.trees))
    let changed = false
    const hashes = (mode: TreeMode) => (root: string) =>
      Effect.try({
        try: () => {
          const key = `${mode}:${root}`
          const known = trees.has(key) ? snapshotOf(trees.get(key)) : Option.none()
          if (Option.isSome(known) && unchanged(root, known.value)) {
            return Object.fromEntries(known.value.entries.map(([path, , hash]) => [path, hash]))
          }
          const { hashes, snapshot } = readTree(root, mode, options.racyMillis ?? 2_000)
          if (snapshot === undefined) {
            if (trees.delete(key)) changed = true
          } else {
            trees.set(key, snapshot)
            changed = true
          }
          return hashes
        },
        catch: systemError("readDirectory", root)
      })
    yield* Effect.addFinalizer(() =>
      changed
        ? Effect.sync(() => {
          try {
            mkdirSync(dirname(file), { recursive: true })
            const temporary = `${file}.${process.pid}`
            writeFileSync(temporary, JSON.stringify({ format: 1, trees: Object.fromEntries(trees) }))
            renameSync(temporary, file)
          } catch {
            // An unwritable storage folder: the next run reads the trees again.
          }
        }).pipe(Effect.withSpan("TreeCache.write"))
        : Effect.void
    )
    return { installed: hashes("installed"), package: hashes("package") } satisfies TreeHashes
  })
