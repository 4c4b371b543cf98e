import { FileSystem, Path } from "@effect/platform"
import { Context, Duration, Effect, Option } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import type { Actor } from "../domain/Installed.js"
import { ActivityRepo } from "../store/ActivityRepo.js"
import { redactUrl } from "../store/Dialect.js"
import { OperationLocks } from "../store/OperationLock.js"
import { beforeAnyChange, type StoreError } from "../store/StoreError.js"
import {
  hasJournal,
  type JournalEntry,
  readJournal,
  removeJournal,
  removeUnfinishedWrites,
  startedMigrations
} from "./Journal.js"
import { leftoverStaging, sweepStaging, sweepUploads } from "./Uploads.js"

// The journaled file switch: how an operation moves an extension's folder aside and puts another in
// its place so that a crash at any point can be finished or rolled back (docs/architecture.md, "One
// install"). Crash recovery needs only this module, the journal and the store — not the operations —
// so every command can run it first without loading the lifecycle graph.

export interface RecoveryOutcome {
  readonly id: string
  readonly operation: JournalEntry["operation"]
  readonly extensionId: string
  readonly outcome: "finished" | "rolled back"
}

type Files = FileSystem.FileSystem | Path.Path | HostConfig

const exists = (fs: FileSystem.FileSystem, file: string) => fs.exists(file).pipe(Effect.orElseSucceed(() => false))

/** Puts the files back as they were before the entry's operation, then drops the entry. */
export const restoreFiles = (entry: JournalEntry) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    if (yield* exists(fs, entry.backup)) {
      yield* fs.remove(entry.target, { recursive: true, force: true })
      yield* fs.rename(entry.backup, entry.target)
    } else if (!entry.hadPrevious && (entry.step === "switching" || entry.step === "switched") && (yield* exists(fs, entry.target))) {
      // Only when something is there: a switch that failed because the target's folder could not be
      // made (a file in its place) left nothing to remove, and removing would fail the same way and
      // keep the entry — and every later operation — stuck.
      yield* fs.remove(entry.target, { recursive: true, force: true })
    }
    if (entry.staged !== null) {
      yield* fs.remove(entry.staged, { recursive: true, force: true })
      // An unpack interrupted before its final rename leaves `.<name>.partial` beside it.
      yield* fs.remove(path.join(path.dirname(entry.staged), `.${path.basename(entry.staged)}.partial`), { recursive: true, force: true })
    }
    yield* removeJournal(entry.id)
  })

/** After commit: drop the previous tree, what is left of the staging folder, and the entry. */
export const finishFiles = (entry: JournalEntry) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    yield* fs.remove(entry.backup, { recursive: true, force: true })
    if (entry.staged !== null) yield* fs.remove(entry.staged, { recursive: true, force: true })
    yield* removeJournal(entry.id)
  })

/**
 * Moves the installed tree aside (when there is one) and the staged tree (when there is one) into
 * its place. The caller journals "switching" before and "switched" after, so recovery knows which
 * of the two renames may have happened.
 */
export const switchFiles = (entry: JournalEntry, options: { readonly link?: boolean } = {}) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    if (entry.hadPrevious) {
      yield* fs.makeDirectory(path.dirname(entry.backup), { recursive: true })
      yield* fs.rename(entry.target, entry.backup)
    }
    if (entry.staged !== null) {
      yield* fs.makeDirectory(path.dirname(entry.target), { recursive: true })
      // `link`: the target becomes a symbolic link to the staged folder (a dev link to the author's tree).
      if (options.link === true) yield* fs.symlink(entry.staged, entry.target)
      else yield* fs.rename(entry.staged, entry.target)
    }
  })

/** An operation committed when the activity row carrying its id exists (it is written in the same transaction). */
const committed = (entry: JournalEntry) =>
  Effect.flatMap(ActivityRepo, (activity) =>
    Effect.map(
      activity.list({ extensionId: entry.extensionId, limit: 50 }),
      (rows) => rows.some((row) => row.context.operation === entry.id)
    ))

/**
 * How recovery undoes the migrations an interrupted operation started where DDL commits at once
 * (lifecycle/MigrationUndo). It needs the module loader, so the composition supplies it, loaded only
 * when an entry needs it; the default does nothing (SQLite and PostgreSQL roll a batch back themselves).
 * A down that fails stops recovery with that failure (DESIGN.md §23): the entry stays, so the next command
 * tries again once the database is fixed by hand.
 */
export class InterruptedMigrations extends Context.Reference<InterruptedMigrations>()("host/lifecycle/InterruptedMigrations", {
  defaultValue: (): { readonly undo: (entry: JournalEntry) => Effect.Effect<void, StoreError> } => ({ undo: () => Effect.void })
}) {}


/** Finishes or rolls back every interrupted operation in the journal. Call it holding the lock. */
export const recoverHeld = Effect.gen(function*() {
  yield* removeUnfinishedWrites
  const entries = yield* readJournal
  return yield* Effect.forEach(entries, (entry) =>
    Effect.gen(function*() {
      const done = yield* committed(entry)
      if (!done && startedMigrations(entry)) yield* Effect.flatMap(InterruptedMigrations, (migrations) => migrations.undo(entry))
      yield* done ? finishFiles(entry) : restoreFiles(entry)
      const outcome: RecoveryOutcome = {
        id: entry.id,
        operation: entry.operation,
        extensionId: entry.extensionId,
        outcome: done ? "finished" : "rolled back"
      }
      yield* Effect.logWarning(`recovered an interrupted ${entry.operation} of ${entry.extensionId}: ${outcome.outcome}`)
      return outcome
    }))
})

export const holderName = (actor: Actor) => `${actor.type}${actor.user === undefined ? "" : ` (${actor.user})`}`

/**
 * Recovers interrupted operations, and clears the lock of a holder that died, unless a live process
 * holds the lock (it is mid-operation and owns its journal).
 */
export const recover = (actor: Actor, options: { readonly sweepLeftovers?: boolean } = {}) =>
  Effect.scoped(
    Effect.gen(function*() {
      // Uploads name the process receiving them: those of processes that are gone go, lock or not.
      const sweep = options.sweepLeftovers !== false
      if (sweep) yield* sweepUploads
      const locks = yield* OperationLocks
      // Until the lock is taken nothing is changed: a database failure here says so, naming the database.
      const { config } = yield* HostConfig
      const unchanged = beforeAnyChange(redactUrl(config.database))
      const lock = yield* Effect.mapError(locks.current, unchanged)
      if (Option.isSome(lock) && !(yield* Effect.mapError(locks.isDead(lock.value), unchanged))) return []
      if (!(yield* hasJournal) && Option.isNone(lock) && (!sweep || (yield* leftoverStaging).length === 0)) return []
      yield* Effect.mapError(locks.acquire({ operation: "recovery", holder: holderName(actor), timeout: Duration.zero }), unchanged)
      const outcomes = yield* recoverHeld
      // What is left in staging after the journal is done belongs to no operation.
      if (sweep) yield* sweepStaging
      return outcomes
    })
  ).pipe(Effect.catchTag("LockHeld", () => Effect.succeed<ReadonlyArray<RecoveryOutcome>>([])))

export type FileSwitchContext = Files | ActivityRepo
