import { Effect, Queue, type Scope, Stream } from "effect"
import { type Dirent, type FSWatcher, readdirSync, statSync, watch } from "node:fs"
import { join, relative, sep } from "node:path"
import { isTemporaryName } from "../system/AtomicFile.js"

// Watching an extension folder for saved changes (`host build --watch`, `host dev --watch`). Editors
// save in bursts (write a temp file, rename it, touch metadata), so the events of one save are collected
// until the folder has been quiet for `quietMs`, and handed over as one batch of relative paths.

/** Folders whose changes never trigger a rebuild: dependencies, VCS data, and build output. */
export const ignoredFolders: ReadonlyArray<string> = ["node_modules", ".git", "dist", ".idea", ".vscode", "coverage"]

export interface WatchOptions {
  /** Paths (relative, POSIX) to ignore besides `ignoredFolders`: the bundle being written, for instance. */
  readonly ignore?: (relative: string) => boolean
  readonly quietMs?: number
}

const isIgnored = (relative: string, options: WatchOptions) => {
  const parts = relative.split("/")
  if (parts.some((part) => ignoredFolders.includes(part))) return true
  // Editors' lock, backup and swap files, and Host's own files being written (system/AtomicFile.ts).
  if (/(^|\/)\.?#|~$|\.sw[px]$/.test(relative) || isTemporaryName(parts.at(-1) ?? "")) return true
  return options.ignore?.(relative) ?? false
}

/**
 * Starts watching `root` (in the scope) and gives the stream of batches of changed files: changes made
 * after this returns are seen, even before the stream is run. One non-recursive watcher per
 * folder (new folders are added as they appear): Node 20's recursive watch on Linux loses a file once
 * an editor saved it by renaming a temporary file over it, which is how many editors save.
 */
export const watchTree = (root: string, options: WatchOptions = {}): Effect.Effect<Stream.Stream<ReadonlyArray<string>>, never, Scope.Scope> =>
    Effect.gen(function*() {
      const queue = yield* Queue.unbounded<string>()
      const watchers = new Map<string, FSWatcher>()
      const relativeOf = (file: string) => relative(root, file).split(sep).join("/")
      const watchFolder = (folder: string) => {
        if (watchers.has(folder)) return
        let watcher: FSWatcher
        try {
          watcher = watch(folder, (event, name) => {
            if (name === null) return
            const file = join(folder, String(name))
            const relativePath = relativeOf(file)
            if (isIgnored(relativePath, options)) return
            if (event === "rename") {
              try {
                if (statSync(file).isDirectory()) watchTreeOf(file)
              } catch {
                // Gone again (a temporary file): nothing to watch.
              }
            }
            Queue.unsafeOffer(queue, relativePath)
          })
        } catch {
          return
        }
        watcher.on("error", () => {
          watcher.close()
          watchers.delete(folder)
        })
        watchers.set(folder, watcher)
      }
      const watchTreeOf = (folder: string) => {
        watchFolder(folder)
        let entries: Array<Dirent>
        try {
          entries = readdirSync(folder, { withFileTypes: true })
        } catch {
          return
        }
        for (const entry of entries) {
          if (entry.isDirectory() && !ignoredFolders.includes(entry.name)) watchTreeOf(join(folder, entry.name))
        }
      }
      yield* Effect.acquireRelease(
        Effect.sync(() => watchTreeOf(root)),
        () => Effect.sync(() => watchers.forEach((watcher) => watcher.close()))
      )
      const quiet = options.quietMs ?? 20
      // One batch: wait for a first change, then keep taking until `quiet` ms pass without one.
      const batch = Effect.gen(function*() {
        const changed = new Set<string>([yield* Queue.take(queue)])
        for (;;) {
          const next = yield* Queue.take(queue).pipe(Effect.timeout(quiet), Effect.option)
          if (next._tag === "None") break
          changed.add(next.value)
        }
        for (const more of yield* Queue.takeAll(queue)) changed.add(more)
        return [...changed].sort() as ReadonlyArray<string>
      })
      return Stream.repeatEffect(batch)
    })
