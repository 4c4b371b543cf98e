import { Effect, Queue, Stream } from "effect"
import { watch } from "node:fs"
import { sep } from "node:path"

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
  if (/(^|\/)\.?#|~$|\.sw[px]$|\.tmp-\d+-[a-z0-9]+$/.test(relative)) return true
  return options.ignore?.(relative) ?? false
}

/** A stream of batches of changed files under `root` (recursive `fs.watch`), until interrupted. */
export const watchTree = (root: string, options: WatchOptions = {}): Stream.Stream<ReadonlyArray<string>> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const queue = yield* Queue.unbounded<string>()
      const watcher = yield* Effect.acquireRelease(
        Effect.sync(() =>
          watch(root, { recursive: true }, (_event, file) => {
            if (file === null) return
            const relative = String(file).split(sep).join("/")
            if (!isIgnored(relative, options)) Queue.unsafeOffer(queue, relative)
          })
        ),
        (watcher) => Effect.sync(() => watcher.close())
      )
      watcher.on("error", () => undefined)
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
  )
