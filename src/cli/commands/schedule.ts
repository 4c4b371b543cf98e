import { Command, Options } from "@effect/cli"
import { Console, DateTime, Effect } from "effect"
import { bootForCli } from "../../runtime/Backend.js"
import { describeOutcome, runDueTasks } from "../../runtime/Scheduler.js"
import { manifestOf } from "../../domain/Installed.js"
import { nextRuns } from "../../domain/Schedules.js"
import { readQuarantine, quarantineReason } from "../../runtime/Quarantine.js"
import { ExtensionsRepo } from "../../store/ExtensionsRepo.js"
import { CliInvocation } from "../Invocation.js"
import { exitWith, formatTable, printJson } from "../Output.js"
import { storeLayer } from "../Runtime.js"

// host schedule:list: the scheduled tasks of enabled extensions (docs/backend.md "Scheduled tasks") with their next run.

export const scheduleListCommand = Command.make(
  "schedule:list",
  { json: Options.boolean("json").pipe(Options.withDescription("print a JSON array only")) },
  ({ json }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const { extensions, quarantine } = yield* Effect.all({
        extensions: Effect.flatMap(ExtensionsRepo, (repo) => repo.list),
        quarantine: readQuarantine
      }).pipe(Effect.provide(storeLayer(invocation)))
      const now = DateTime.toDateUtc(yield* DateTime.now)
      const tasks = extensions
        .filter((extension) => extension.enabled && quarantineReason(quarantine, extension) === undefined)
        .flatMap((extension) =>
          (manifestOf(extension)?.schedules ?? []).map((task) => ({
            extension: extension.extensionId,
            id: task.id,
            label: task.label,
            command: task.command,
            cron: task.cron,
            without_overlapping: task.withoutOverlapping,
            next_run: nextRuns(task.cron, now, 1)[0]?.toISOString() ?? null
          }))
        )
      if (json) return yield* printJson(tasks)
      if (tasks.length === 0) return yield* Console.log("No scheduled tasks.")
      yield* Console.log(formatTable(
        ["Extension", "Task", "Command", "Cron", "Next run", "Overlap"],
        tasks.map((task) => [
          task.extension,
          task.id,
          task.command,
          task.cron,
          task.next_run ?? "",
          task.without_overlapping ? "no" : "allowed"
        ])
      ))
    })
).pipe(Command.withDescription("List the scheduled tasks of enabled extensions and their next run"))

/**
 * host schedule:run: runs the tasks due this minute (for system cron: `* * * * * host schedule:run`).
 * A `without_overlapping` task takes a lock of its own; if another process still runs it, it is skipped.
 */
export const scheduleRunCommand = Command.make(
  "schedule:run",
  { json: Options.boolean("json").pipe(Options.withDescription("print the outcomes as a JSON array only")) },
  ({ json }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const outcomes = yield* Effect.gen(function*() {
        const generation = yield* bootForCli
        // The run's clock (HOST_DEBUG's `now` sets it, to run the tasks of a chosen minute: docs/operations.md).
        return yield* runDueTasks(generation, DateTime.toDateUtc(yield* DateTime.now), "cli")
      }).pipe(Effect.provide(storeLayer(invocation)))
      if (json) yield* printJson(outcomes)
      else if (outcomes.length === 0) yield* Console.log("No tasks due.")
      else yield* Console.log(outcomes.map(describeOutcome).join("\n"))
      if (outcomes.some((outcome) => outcome.status === "failed")) return yield* exitWith(1)
    })
).pipe(Command.withDescription("Run the scheduled tasks that are due now (run it every minute from system cron)"))
