import { Effect } from "effect"
import { readdirSync, type Stats, statSync } from "node:fs"

// Synchronous looks at the panel root's own folders, for the checks every command makes while it
// starts (the root, config/host.yaml, the database file, the journal, uploads and staging). Those paths
// are almost always missing or empty, and through the asynchronous file system a missing path costs a
// thread-pool round trip and a failure with its stack trace: several milliseconds of each command's
// cold start for a yes or no (docs/architecture.md, "Startup").

/** What `stat` says of `path`, or undefined when nothing is there (or it cannot be looked at). */
export const statIfExists = (path: string): Effect.Effect<Stats | undefined> =>
  Effect.sync(() => {
    try {
      return statSync(path, { throwIfNoEntry: false })
    } catch {
      return undefined
    }
  })

/** The names in `directory`, none when it does not exist or cannot be read. */
export const namesIn = (directory: string): Effect.Effect<ReadonlyArray<string>> =>
  Effect.sync(() => {
    try {
      return readdirSync(directory)
    } catch {
      return []
    }
  })
