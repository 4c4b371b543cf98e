import { FileSystem, Path } from "@effect/platform"
import { Effect } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import { namesIn } from "../config/LocalFiles.js"
import { processAlive } from "../store/OperationLock.js"

// Leftovers of work in progress (docs/operations.md "Uploads and leftovers"): uploads and staging.
// The admin API writes each upload
// into storage/host/uploads/<pid>-<uuid>/ and removes the folder when the request ends, however it ends.
// Only a process that dies mid-request (kill -9, power loss) leaves one behind; its name says which
// process owned it, so recovery removes the folders of processes that are gone — never the upload a
// live server is receiving — and `host status` reports them until then.

export const uploadsDirectory = Effect.map(HostConfig, ({ paths }) => `${paths.storage}/uploads`)

/** A fresh upload folder's name, owned by this process; `unique` is a random UUID. */
export const uploadFolderName = (unique: string) => `${process.pid}-${unique}`

const ownerAlive = (name: string): boolean => {
  const match = /^(\d+)-/.exec(name)
  // A folder named otherwise was written by an earlier version: nothing in flight owns it.
  if (match === null) return false
  const pid = Number(match[1])
  return pid === process.pid || processAlive(pid)
}

export interface Leftover {
  readonly path: string
  readonly bytes: number
}

/** Total bytes of the regular files under `folder`. */
export const folderBytes = (folder: string): Effect.Effect<number, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    let total = 0
    const pending = [folder]
    while (pending.length > 0) {
      const current = pending.pop()!
      const info = yield* fs.stat(current).pipe(Effect.option)
      if (info._tag === "None") continue
      if (info.value.type === "Directory") {
        for (const name of yield* fs.readDirectory(current).pipe(Effect.orElseSucceed(() => []))) pending.push(path.join(current, name))
      } else if (info.value.type === "File") total += Number(info.value.size)
    }
    return total
  })

/** Upload folders whose process is gone, with their size. */
export const leftoverUploads = Effect.gen(function*() {
  const path = yield* Path.Path
  const directory = yield* uploadsDirectory
  const names = yield* namesIn(directory)
  return yield* Effect.forEach(
    names.filter((name) => !ownerAlive(name)).sort(),
    (name) => Effect.map(folderBytes(path.join(directory, name)), (bytes): Leftover => ({ path: path.join(directory, name), bytes }))
  )
})

/** Removes the upload folders of processes that are gone; a folder that cannot be removed is logged. */
export const sweepUploads = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const leftovers = yield* leftoverUploads
  for (const leftover of leftovers) {
    yield* fs.remove(leftover.path, { recursive: true, force: true }).pipe(
      Effect.tap(() => Effect.logWarning(`removed an upload an interrupted server left behind: ${leftover.path}`)),
      Effect.catchAll((error) => Effect.logWarning(`could not remove the leftover upload ${leftover.path}: ${error.message}`))
    )
  }
  return leftovers
})

/**
 * Staging entries (storage/host/staging/*) no journal entry names: an operation's work that a crash cut
 * short before its journal could name it, or a health gate's kept copy. Only meaningful while no live
 * process holds the operation lock (an operation in flight stages under it).
 */
export const leftoverStaging = Effect.gen(function*() {
  const path = yield* Path.Path
  const { paths } = yield* HostConfig
  const names = yield* namesIn(paths.staging)
  if (names.length === 0) return []
  // Journal files that exist (readable or not) keep whatever their operation id prefixes.
  const journalIds = (yield* namesIn(paths.journal))
    .map((name) => name.replace(/\.json(\.tmp)?$/, ""))
  const referenced = (name: string) => journalIds.some((id) => name === id || name.startsWith(`${id}.`))
  return yield* Effect.forEach(
    names.filter((name) => !referenced(name)).sort(),
    (name) => Effect.map(folderBytes(path.join(paths.staging, name)), (bytes): Leftover => ({ path: path.join(paths.staging, name), bytes }))
  )
})

/** Removes the staging entries no journal entry names; the caller holds the operation lock. */
export const sweepStaging = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const leftovers = yield* leftoverStaging
  for (const leftover of leftovers) {
    yield* fs.remove(leftover.path, { recursive: true, force: true }).pipe(
      Effect.catchAll((error) => Effect.logWarning(`could not remove the leftover ${leftover.path}: ${error.message}`))
    )
  }
  return leftovers
})
