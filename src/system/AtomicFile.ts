import { FileSystem, Path } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect } from "effect"
import { randomHex } from "./Ids.js"

// Every file Host replaces whole is written the same way (docs/decisions.md "Ids, atomic files, runtime
// versions"): to a temporary file beside it, flushed to the disk, then renamed over it. A reader sees the
// old file or the new one, never half of either, and after a crash the new file is either all there or
// absent. The temporary name is one scheme everywhere — `.<name>.<pid>-<random>.tmp` in the same folder:
// hidden, never taken by another process or a concurrent write, and recognisable for clean-ups.

/** The temporary name for a new version of `file` (same folder, so the rename stays on one file system). */
export const temporaryFor = (file: string): Effect.Effect<string, never, Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const token = yield* randomHex(4)
    return path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}-${token}.tmp`)
  })

/** Whether a folder entry is a temporary file of this scheme (a write cut short leaves one behind). */
export const isTemporaryName = (name: string): boolean => /^\..+\.\d+-[0-9a-f]+\.tmp$/.test(name)

export interface AtomicWriteOptions {
  /** The new file's permission bits (default 0o666 less the umask). */
  readonly mode?: number
  /** Runs on the complete temporary file just before the rename (to copy the old file's owner, say). */
  readonly beforeRename?: (temporary: string) => Effect.Effect<void, PlatformError>
}

const encoder = new TextEncoder()

/** Writes `data` to a new file and flushes it to the disk. */
const writeFlushed = (fs: FileSystem.FileSystem, file: string, data: string | Uint8Array, mode: number | undefined) =>
  Effect.scoped(
    Effect.gen(function*() {
      const handle = yield* fs.open(file, mode === undefined ? { flag: "wx" } : { flag: "wx", mode })
      yield* handle.writeAll(typeof data === "string" ? encoder.encode(data) : data)
      yield* handle.sync
    })
  )

/**
 * Replaces `file` with `data` (text as UTF-8): temporary file, fsync, rename; the folder is created
 * when missing. On failure the temporary file is removed and `file` is as it was.
 */
export const writeFileAtomic = (file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}) =>
  writeFilesAtomic([[file, data]], options)

/**
 * Replaces several files: all are written and flushed first, then renamed in the order given (put the
 * file readers look for first last, so it never names a companion that is not there yet).
 */
export const writeFilesAtomic = (
  files: ReadonlyArray<readonly [file: string, data: string | Uint8Array]>,
  options: AtomicWriteOptions = {}
): Effect.Effect<void, PlatformError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const written: Array<readonly [temporary: string, file: string]> = []
    const write = Effect.gen(function*() {
      for (const [file, data] of files) {
        yield* fs.makeDirectory(path.dirname(file), { recursive: true })
        const temporary = yield* temporaryFor(file)
        written.push([temporary, file])
        yield* writeFlushed(fs, temporary, data, options.mode)
        if (options.beforeRename !== undefined) yield* options.beforeRename(temporary)
      }
      for (const [temporary, file] of written) yield* fs.rename(temporary, file)
    })
    yield* write.pipe(
      Effect.onError(() => Effect.forEach(written, ([temporary]) => Effect.ignore(fs.remove(temporary, { force: true })), { discard: true }))
    )
  })
