import { FileSystem, Path } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, DateTime, Duration, Effect, Either, Option, Ref } from "effect"
import { ArtifactStore } from "../archive/ArtifactStore.js"
import { Faults } from "../config/Debug.js"
import { HostConfig } from "../config/HostConfig.js"
import type { LifecycleEvent } from "../domain/Events.js"
import { type Actor, installedStates } from "../domain/Installed.js"
import type { OperationLock } from "../domain/Lock.js"
import type { Refusal } from "../domain/Preconditions.js"
import { ActivityRepo, type ActivityWrite } from "../store/ActivityRepo.js"
import { redactUrl } from "../store/Dialect.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { MigrationsRepo } from "../store/MigrationsRepo.js"
import { type LockHeld, OperationLocks } from "../store/OperationLock.js"
import { StateGeneration } from "../store/StateGeneration.js"
import type { StoreError } from "../store/StoreError.js"
import { writeTransaction } from "../store/Transaction.js"
import { classify, type FailureCause, type OperationFailed, type OperationName, OperationRefused } from "./Errors.js"
import { LifecycleEvents, Progress } from "../kernel/Events.js"
import { finishFiles, holderName, recoverHeld, restoreFiles, switchFiles } from "./FileSwitch.js"
import { type JournalEntry, type JournalStep, writeJournal } from "./Journal.js"
import { undoStartedMigrations } from "./MigrationUndo.js"
import type { MigrationFile } from "./Migrations.js"
import { ModuleLoader } from "../kernel/ModuleLoader.js"

// What every lifecycle operation shares (docs/architecture.md "One install"), so each operation's own
// module (lifecycle/operations/) holds only its steps:
// - `operate`: the lock (unless the caller holds it), recovery of interrupted operations, progress lines,
//   and the shaping of every failure into the OperationFailed of its kind, naming the step it stopped at;
// - `openJournal`: a journaled change of the installed tree — the journal entry, the file switch, and one
//   transaction that ends in the state generation's bump; on failure the started migrations are undone
//   and the files put back, on success the entry is committed and the leftovers cleaned up;
// - the small pieces several operations read: the installed record, the installed-state map, refusals,
//   activity context, events, dropping artifacts nothing references.

export interface OperationOptions {
  readonly actor: Actor
  /** Seconds to wait for another operation's lock (0: fail at once). */
  readonly lockTimeout?: number
  /** Goes into the activity context (the reconciler's plan id). */
  readonly context?: Readonly<Record<string, unknown>>
}

export interface OperationResult {
  readonly operation: OperationName
  readonly id: string
  readonly action: "installed" | "updated" | "enabled" | "disabled" | "removed" | "configured" | "unchanged"
  readonly version: string
  readonly fromVersion: string | null
  readonly enabled: boolean
  readonly migrations: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
}

/** Present while a caller (the reconciler) holds the operation lock for a run of operations. */
export class HeldOperationLock extends Context.Tag("host/HeldOperationLock")<HeldOperationLock, OperationLock>() {}

/** Reports the step an operation is at: the progress line, and the step a failure is named after. */
export type Step = (name: string) => Effect.Effect<void>

/** An error a step may raise: a classified cause, or already a refusal or a held lock. */
export type StepError = FailureCause | OperationRefused | LockHeld

// ---- the lock and error shaping ------------------------------------------------------------------

/** Takes the lock (recovering interrupted operations first) for `effect`, which may run several operations. */
export const withLockHeld = <A, E, R>(operation: string, options: OperationOptions, effect: Effect.Effect<A, E, R>) =>
  Effect.scoped(
    Effect.gen(function*() {
      const locks = yield* OperationLocks
      const lock = yield* locks.acquire({
        operation,
        holder: holderName(options.actor),
        timeout: Duration.seconds(options.lockTimeout ?? 0)
      })
      yield* recoverHeld
      return yield* Effect.provideService(effect, HeldOperationLock, lock)
    })
  )

/**
 * Runs `body` holding the lock, after recovering interrupted operations. Every failure that is not
 * a refusal or a held lock becomes the OperationFailed of its kind, naming the step it happened in and
 * keeping the error as its cause. `body` may raise only errors classified in lifecycle/Errors.ts.
 */
export const operate = <A, E extends StepError, R>(
  operation: OperationName,
  extensionId: string,
  options: OperationOptions,
  body: (step: Step) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const { config } = yield* HostConfig
    const current = yield* Ref.make("waiting for the operation lock")
    const step: Step = (name) =>
      Effect.zipRight(
        Ref.set(current, name),
        Effect.flatMap(Effect.serviceOption(Progress), Option.match({ onNone: () => Effect.void, onSome: (progress) => progress.step(name) }))
      )
    const held = yield* Effect.serviceOption(HeldOperationLock)
    const run: Effect.Effect<
      A,
      E | PlatformError | StoreError | LockHeld,
      R | FileSystem.FileSystem | Path.Path | HostConfig | ActivityRepo | OperationLocks
    > = Option.isSome(held) ? body(step) : withLockHeld(`${operation} ${extensionId}`, options, body(step))
    return yield* run.pipe(
      Effect.catchAll((error: StepError): Effect.Effect<never, OperationFailed | OperationRefused | LockHeld> =>
        error._tag === "OperationRefused" || error._tag === "LockHeld"
          ? Effect.fail(error)
          : Effect.flatMap(Ref.get(current), (stepName) =>
            Effect.fail(classify(operation, extensionId, stepName, error, redactUrl(config.database)))))
    )
  }).pipe(Effect.withSpan(`Lifecycle.${operation}`, { attributes: { extensionId } }))

// ---- the journaled change ------------------------------------------------------------------------

/** A journaled change of the installed tree (add, update, remove); see `openJournal`. */
export interface JournaledChange {
  /** The entry as journaled so far. */
  readonly entry: Effect.Effect<JournalEntry>
  /** Journals the next step (with what it learned), before doing what the step says. */
  readonly advance: (next: JournalStep, patch?: Partial<JournalEntry>) => Effect.Effect<JournalEntry, PlatformError>
  /** Journals each migration before its `up` runs (files relative to `tree`), for undo on MySQL. */
  readonly upStarting: (tree: string) => (migration: MigrationFile) => Effect.Effect<void, PlatformError>
  /** Journals each migration before its `down` runs (files relative to `tree`), for redo on MySQL. */
  readonly downStarting: (tree: string) => (migration: MigrationFile, batch: number) => Effect.Effect<void, PlatformError>
  /**
   * Moves the files between "switching" and "switched" (crash points after each), so recovery knows which
   * renames may have happened. `staged`: the folder to switch in when it is not the journaled one.
   */
  readonly switchFiles: (options?: { readonly staged?: string; readonly link?: boolean }) => Effect.Effect<void, PlatformError>
  /**
   * Before the transaction only the staging folder and the journal exist: drops them (used when the
   * change fails before it gets that far; does nothing once files may have moved).
   */
  readonly dropStaging: Effect.Effect<void>
  /**
   * Runs `transaction` in one write transaction ending with the state generation's bump (replicas
   * converge to the change once it commits, docs/operations.md "Running replicas"). On failure the
   * migrations it started are undone and the files put back; on success the entry is journaled as
   * committed and the previous tree, the staging folder and the entry are dropped.
   */
  readonly commit: <A, E, R>(step: Step, transaction: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError | StoreError | PlatformError, R>
}

type JournalContext =
  | FileSystem.FileSystem
  | Path.Path
  | HostConfig
  | SqlClient.SqlClient
  | MigrationsRepo
  | ActivityRepo
  | ModuleLoader
  | StateGeneration
  | Faults

/** Where a new journal entry starts: a fresh id, the step "begin", and the time. */
export const newEntry = (fields: Omit<JournalEntry, "step" | "startedAt">) =>
  Effect.map(DateTime.now, (now): JournalEntry => ({ ...fields, step: "begin", startedAt: DateTime.formatIso(now) }))

/** Opens a journaled change from its first entry (not yet written: `advance("begin")` writes it). */
export const openJournal = (initial: JournalEntry) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<JournalContext>()
    const closed = <A, E>(effect: Effect.Effect<A, E, JournalContext>) => Effect.provide(effect, context)
    const sql = Context.get(context, SqlClient.SqlClient)
    const { reached: crashPoint } = Context.get(context, Faults)
    const journal = yield* Ref.make(initial)
    const rewrite = (change: (entry: JournalEntry) => JournalEntry) =>
      closed(Effect.tap(Ref.updateAndGet(journal, change), (entry) => writeJournal(entry)))
    const advance = (next: JournalStep, patch: Partial<JournalEntry> = {}) => rewrite((entry) => ({ ...entry, ...patch, step: next }))
    const path = Context.get(context, Path.Path)

    const change: JournaledChange = {
      entry: Ref.get(journal),
      advance,
      upStarting: (tree) => (migration) =>
        Effect.asVoid(rewrite((entry) => ({
          ...entry,
          migrations: [...(entry.migrations ?? []), { name: migration.name, file: path.relative(tree, migration.file) }]
        }))),
      downStarting: (tree) => (migration, batch) =>
        Effect.asVoid(rewrite((entry) => ({
          ...entry,
          reverted: [...(entry.reverted ?? []), { name: migration.name, file: path.relative(tree, migration.file), batch }]
        }))),
      switchFiles: (options = {}) =>
        Effect.gen(function*() {
          const switching = yield* advance("switching")
          yield* closed(switchFiles(
            options.staged === undefined ? switching : { ...switching, staged: options.staged },
            options.link === undefined ? {} : { link: options.link }
          ))
          yield* advance("switched")
          yield* crashPoint("switched")
        }),
      dropStaging: Effect.flatMap(Ref.get(journal), (entry) =>
        entry.step === "begin" || entry.step === "staged" ? closed(restoreFiles(entry)) : Effect.void).pipe(Effect.ignore),
      commit: <A, E, R>(step: Step, transaction: Effect.Effect<A, E, R>) =>
        Effect.gen(function*() {
          const generation = Context.get(context, StateGeneration)
          const result = yield* writeTransaction(
            sql,
            Effect.zipLeft(transaction, Effect.zipRight(generation.bump, crashPoint("recorded")))
          ).pipe(
            Effect.provideService(ModuleLoader, Context.get(context, ModuleLoader)),
            Effect.tapErrorCause(() =>
              Effect.flatMap(Ref.get(journal), (entry) =>
                Effect.zipRight(Effect.ignore(closed(undoStartedMigrations(entry))), closed(restoreFiles(entry)))).pipe(Effect.ignore)
            )
          )
          const done = yield* advance("committed")
          yield* crashPoint("committed")
          yield* step("cleaning up")
          yield* closed(finishFiles(done)).pipe(Effect.ignore)
          return result
        })
    }
    return change
  })

// ---- what several operations read or write ----------------------------------------------------

/** The installed-state map of every installed extension, as the preconditions read it. */
export const currentStates = Effect.map(Effect.flatMap(ExtensionsRepo, (repo) => repo.list), installedStates)

/** A precondition's refusal (domain/Preconditions.ts) as the operation's OperationRefused. */
export const refusedAs = <A>(operation: OperationName, extensionId: string, outcome: Either.Either<A, Refusal>) =>
  Either.match(outcome, {
    onLeft: (refusal) => Effect.fail(new OperationRefused({ operation, extensionId, ...refusal })),
    onRight: Effect.succeed
  })

/** The record of an installed extension, or the refusal every operation but add gives when there is none. */
export const requireInstalled = (operation: OperationName, id: string) =>
  Effect.flatMap(ExtensionsRepo, (extensions) =>
    Effect.flatMap(extensions.find(id), Option.match({
      onNone: () =>
        Effect.fail(new OperationRefused({ operation, extensionId: id, reason: "not-installed", detail: "it is not installed", hint: "see host list" })),
      onSome: Effect.succeed
    })))

/** Logs each warning a precondition let through (forced, or a dependency out of range). */
export const logWarnings = (warnings: ReadonlyArray<string>) => Effect.forEach(warnings, (warning) => Effect.logWarning(warning), { discard: true })

/** Appends the operation's activity row; its context names who did it, the operation id and the caller's context. */
export const recordActivity = (
  options: OperationOptions,
  operationId: string,
  write: Omit<ActivityWrite, "context">,
  extra: Readonly<Record<string, unknown>> = {}
) =>
  Effect.flatMap(ActivityRepo, (activity) =>
    activity.append({
      ...write,
      context: { actor: options.actor, operation: operationId, ...options.context, ...extra }
    }))

/** Tells the runtime's listeners (after the change committed; a failing listener is only logged). */
export const publish = (event: LifecycleEvent) => Effect.flatMap(LifecycleEvents, (events) => events.publish(event))

/**
 * Drops the artifacts no installed record references any more (held under the lock, so no operation
 * records one meanwhile). Best effort: an artifact left behind costs space, not correctness.
 */
export const dropUnreferenced = (digests: ReadonlyArray<string | null>) =>
  Effect.gen(function*() {
    const wanted = digests.filter((digest): digest is string => digest !== null)
    if (wanted.length === 0) return
    const artifacts = yield* ArtifactStore
    const referenced = new Set((yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.list)).map((record) => record.source.sha256))
    for (const digest of wanted) {
      if (!referenced.has(digest)) yield* artifacts.remove(digest)
    }
  }).pipe(Effect.catchAllCause((cause) => Effect.logWarning(`dropping unreferenced artifacts failed: ${String(cause)}`)))
