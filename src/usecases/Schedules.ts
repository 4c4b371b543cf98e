import { DateTime, Effect } from "effect"
import { manifestOf } from "../domain/Installed.js"
import { nextRuns } from "../domain/Schedules.js"
import { bootForCli } from "../runtime/Backend.js"
import { quarantineReason, readQuarantine } from "../runtime/Quarantine.js"
import { runDueTasks } from "../runtime/Scheduler.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"

// The scheduled tasks of enabled extensions (docs/backend.md "Scheduled tasks"): which there are, with
// their next run, and running the ones due now.

/** A scheduled task as `host schedule:list` shows it. */
export interface ScheduledTask {
  readonly extension: string
  readonly id: string
  readonly label: string
  readonly command: string
  readonly cron: string
  readonly without_overlapping: boolean
  readonly next_run: string | null
}

/** `schedule:list`: the tasks of the enabled extensions no process quarantined, each with its next run from now. */
export const scheduledTasks = Effect.gen(function*() {
  const { extensions, quarantine } = yield* Effect.all({
    extensions: Effect.flatMap(ExtensionsRepo, (repo) => repo.list),
    quarantine: readQuarantine
  })
  const now = DateTime.toDateUtc(yield* DateTime.now)
  return extensions
    .filter((extension) => extension.enabled && quarantineReason(quarantine, extension) === undefined)
    .flatMap((extension) =>
      (manifestOf(extension)?.schedules ?? []).map((task): ScheduledTask => ({
        extension: extension.extensionId,
        id: task.id,
        label: task.label,
        command: task.command,
        cron: task.cron,
        without_overlapping: task.withoutOverlapping,
        next_run: nextRuns(task.cron, now, 1)[0]?.toISOString() ?? null
      }))
    )
})

/** `schedule:run`: boots the enabled extensions and runs the tasks due this minute of the run's clock. */
export const runScheduledTasks = Effect.gen(function*() {
  const generation = yield* bootForCli
  // The run's clock (HOST_DEBUG's `now` sets it, to run the tasks of a chosen minute: docs/operations.md).
  return yield* runDueTasks(generation, DateTime.toDateUtc(yield* DateTime.now), "cli")
})

/** A task's outcome in one line, as the scheduler logs it. */
export { describeOutcome } from "../runtime/Scheduler.js"
