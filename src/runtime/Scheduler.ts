import { Clock, DateTime, Duration, Effect } from "effect"
import { isDue, type ScheduledTask } from "../domain/Schedules.js"
import { CoreKeys } from "../store/CoreRows.js"
import { OperationLocks } from "../store/OperationLock.js"
import { type ExtensionCommand, extensionCommands } from "./Backend.js"
import { callExtensionCode } from "./ExtensionCode.js"
import type { Generation } from "./Runtime.js"

// Scheduled tasks (docs/backend.md "Scheduled tasks"): each `schedules.tasks` entry runs its console command when its cron
// expression is due. `host schedule:run` (system cron) and the server's runner share this.

export interface TaskOutcome {
  readonly extension: string
  readonly task: string
  readonly command: string
  readonly status: "ok" | "failed" | "skipped"
  readonly detail: string | null
  readonly duration_ms: number
}

export const describeOutcome = (outcome: TaskOutcome): string =>
  `${outcome.status === "ok" ? "ran" : outcome.status} ${outcome.extension} ${outcome.task} (${outcome.command})` +
  `${outcome.status === "ok" ? ` in ${outcome.duration_ms} ms` : ""}${outcome.detail === null ? "" : `: ${outcome.detail}`}`

/** Runs one task's command; a task `without_overlapping` holds its own lock while it runs. */
const runTask = (
  extensionId: string,
  task: ScheduledTask,
  commands: ReadonlyArray<ExtensionCommand>,
  runner: string
) =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const outcome = (status: TaskOutcome["status"], detail: string | null) =>
      Effect.map(Clock.currentTimeMillis, (ended): TaskOutcome => ({
        extension: extensionId,
        task: task.id,
        command: task.command,
        status,
        detail,
        duration_ms: ended - started
      }))
    // The task's own extension's command first, should another extension declare the same name.
    const command = commands.find((candidate) => candidate.name === task.command && candidate.extensionId === extensionId) ??
      commands.find((candidate) => candidate.name === task.command)
    if (command === undefined) return yield* outcome("failed", `no enabled extension provides the command ${task.command}`)
    const run = callExtensionCode(extensionId, `task ${task.id}`, () => command.run([]), Duration.infinity).pipe(
      // As on the command line: a returned non-zero integer is the command's exit code, a failure.
      Effect.flatMap((result) =>
        typeof result === "number" && Number.isInteger(result) && result !== 0
          ? outcome("failed", `exit code ${result}`)
          : outcome("ok", null)
      ),
      Effect.catchAll((error) => outcome("failed", error.detail))
    )
    if (!task.withoutOverlapping) return yield* run
    const locks = yield* OperationLocks
    return yield* Effect.scoped(
      Effect.zipRight(
        locks.acquireNamed(`schedule ${extensionId} ${task.id}`, {
          operation: `schedule ${extensionId} ${task.id}`,
          holder: runner,
          timeout: Duration.zero
        }),
        run
      )
    ).pipe(Effect.catchTag("LockHeld", () => outcome("skipped", "still running elsewhere (without_overlapping)")))
  })

/**
 * Runs every task of the booted extensions that is due in the minute of `now`, one after another.
 * Each minute is claimed once per database (a host/core row), so racing runners — servers, system cron —
 * run its tasks once; a task still running from an earlier minute is skipped when `without_overlapping`.
 */
export const runDueTasks = Effect.fn("Scheduler.runDueTasks")(function*(generation: Generation, now: Date, runner: string) {
  const minute = new Date(now)
  minute.setSeconds(0, 0)
  const locks = yield* OperationLocks
  if (!(yield* locks.claimOnce(CoreKeys.scheduleClaims, minute.toISOString(), runner))) {
    yield* Effect.logInfo(`the tasks of ${minute.toISOString()} were started by another runner`)
    return []
  }
  const due = [...generation.extensions.values()].flatMap((extension) =>
    extension.manifest.schedules.filter((task) => isDue(task.cron, now)).map((task) => ({ extensionId: extension.id, task }))
  )
  if (due.length === 0) return []
  const commands = yield* extensionCommands(generation)
  const outcomes = yield* Effect.forEach(due, ({ extensionId, task }) => runTask(extensionId, task, commands, runner))
  for (const outcome of outcomes) {
    yield* outcome.status === "failed" ? Effect.logWarning(describeOutcome(outcome)) : Effect.logInfo(describeOutcome(outcome))
  }
  return outcomes
})

/**
 * The server's runner: at the start of every minute, the due tasks of the current generation — started
 * in a fiber of their own, so a task running longer than a minute never costs the next minute its turn.
 */
export const runEveryMinute = (current: Effect.Effect<Generation | undefined>) =>
  Effect.gen(function*() {
    for (;;) {
      const now = yield* Clock.currentTimeMillis
      yield* Effect.sleep(Duration.millis(60_000 - (now % 60_000) + 50))
      const generation = yield* current
      if (generation === undefined) continue
      yield* Effect.fork(
        runDueTasks(generation, DateTime.toDateUtc(yield* DateTime.now), "server").pipe(
          Effect.catchAll((error) => Effect.logWarning(`scheduled tasks could not run: ${error.message}`))
        )
      )
    }
  })
