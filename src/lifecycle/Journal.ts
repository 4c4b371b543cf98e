import { FileSystem, Path } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import { namesIn } from "../config/LocalFiles.js"
import { writeFileAtomic } from "../system/AtomicFile.js"
import { parseJsonWithinDepth } from "../domain/JsonDepth.js"
import { onFirstCall } from "../domain/OnFirstCall.js"

// The operation journal (storage/host/journal/<operation id>.json): what an operation that changes
// files is doing, so that a crash at any point can be finished or rolled back by the next process.
// Database changes need no journal: they commit in one transaction with the activity row that proves it.

export const JournalStep = Schema.Literal("begin", "staged", "switching", "switched", "committed")
export type JournalStep = typeof JournalStep.Type

export const JournalEntry = Schema.Struct({
  id: Schema.String,
  operation: Schema.Literal("add", "update", "remove"),
  extensionId: Schema.String,
  step: JournalStep,
  /** The installed folder (`<extensions>/<vendor>/<name>`). */
  target: Schema.String,
  /** The new tree being installed (add/update). */
  staged: Schema.NullOr(Schema.String),
  /** Where the previous tree is kept until the operation commits. */
  backup: Schema.String,
  hadPrevious: Schema.Boolean,
  startedAt: Schema.String,
  /**
   * Migrations whose `up` started (name, and file as a path inside the extension's tree), in order. Where DDL commits at
   * once (MySQL/MariaDB) an operation that does not commit is undone by their downs, in reverse.
   */
  migrations: Schema.optional(Schema.Array(Schema.Struct({ name: Schema.String, file: Schema.String }))),
  /** Remove: migrations whose `down` started (with their batch), in that order; redone in reverse the same way. */
  reverted: Schema.optional(Schema.Array(Schema.Struct({ name: Schema.String, file: Schema.String, batch: Schema.Number })))
})
export type JournalEntry = typeof JournalEntry.Type

// Bounded: a damaged entry's warning formats the value (docs/decisions.md "JSON from outside nests at most 64 levels").
const decodeEntry = onFirstCall(() => Schema.decodeUnknown(parseJsonWithinDepth(JournalEntry)))

export const journalDirectory = Effect.map(HostConfig, ({ paths }) => paths.journal)

/** Writes the entry atomically (temp file + rename), so a crash never leaves half a journal. */
export const writeJournal = Effect.fn("Journal.write")(function*(entry: JournalEntry) {
  const path = yield* Path.Path
  const directory = yield* journalDirectory
  yield* writeFileAtomic(path.join(directory, `${entry.id}.json`), JSON.stringify(entry, null, 2))
})

export const removeJournal = Effect.fn("Journal.remove")(function*(id: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const directory = yield* journalDirectory
  yield* fs.remove(path.join(directory, `${id}.json`), { force: true })
})

/** Every interrupted operation, oldest first. Unreadable entries are reported, not skipped silently. */
export const readJournal = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const directory = yield* journalDirectory
  if (!(yield* fs.exists(directory))) return []
  const names = (yield* fs.readDirectory(directory)).filter((name) => name.endsWith(".json")).sort()
  const entries = yield* Effect.forEach(names, (name) =>
    fs.readFileString(path.join(directory, name)).pipe(
      Effect.flatMap(decodeEntry),
      Effect.map(Option.some),
      Effect.catchAll((error) =>
        Effect.as(Effect.logWarning(`journal entry ${name} is unreadable and was left in place: ${error.message}`), Option.none())
      )
    ))
  return entries.flatMap(Option.toArray).sort((a, b) => a.startedAt.localeCompare(b.startedAt))
}).pipe(Effect.withSpan("Journal.read"))

/** Whether the journal folder holds anything: entries, or an entry write a crash cut short. */
export const hasJournal = Effect.flatMap(journalDirectory, namesIn).pipe(Effect.map((names) => names.length > 0))

/**
 * Removes entry writes a crash cut short (`<id>.json.tmp`): the entry before it (if any) is the
 * operation's last completed step, and nothing was done after a write that never finished.
 */
export const removeUnfinishedWrites = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const directory = yield* journalDirectory
  if (!(yield* fs.exists(directory))) return
  for (const name of yield* fs.readDirectory(directory)) {
    if (name.endsWith(".tmp")) yield* fs.remove(path.join(directory, name), { force: true })
  }
})

/** Whether the entry's operation started migrations that a rollback of its transaction may not undo. */
export const startedMigrations = (entry: JournalEntry): boolean =>
  (entry.migrations ?? []).length > 0 || (entry.reverted ?? []).length > 0
