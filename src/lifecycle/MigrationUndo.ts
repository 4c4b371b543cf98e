import { FileSystem, Path } from "@effect/platform"
import { Effect } from "effect"
import { type JournalEntry, startedMigrations } from "./Journal.js"
import { redoMigrations, undoMigrations } from "./Migrations.js"

// Where DDL commits at once (MySQL/MariaDB, docs/decisions.md "MySQL/MariaDB batches"), an
// operation that did not commit is undone by the downs of the migrations it started (and a remove by the
// ups of those it reverted). Shared by an operation's own failure path and by crash recovery.

/**
 * Runs those downs (and ups) from whichever tree holds the files now: staged, switched in, or set aside.
 * `strict` (crash recovery): a down that fails stops and fails (lifecycle/Migrations undoMigrations).
 */
export const undoStartedMigrations = (entry: JournalEntry, options: { readonly strict?: boolean } = {}) =>
  Effect.gen(function*() {
    if (!startedMigrations(entry)) return
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const exists = (file: string) => fs.exists(file).pipe(Effect.orElseSucceed(() => false))
    const tree = entry.operation === "remove"
      ? ((yield* exists(entry.backup)) ? entry.backup : entry.target)
      : entry.staged !== null && (yield* exists(entry.staged)) ? entry.staged : entry.target
    yield* undoMigrations(
      entry.extensionId,
      (entry.migrations ?? []).map((migration) => ({ name: migration.name, file: path.join(tree, migration.file) })),
      options
    )
    yield* redoMigrations(
      entry.extensionId,
      (entry.reverted ?? []).map((migration) => ({ name: migration.name, file: path.join(tree, migration.file), batch: migration.batch }))
    )
  })
