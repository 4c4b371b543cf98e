import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { describeOutcome, runScheduledTasks, scheduledTasks } from "../../usecases/Schedules.js"
import { CliInvocation } from "../Invocation.js"
import { exitWith, formatTable, printJson } from "../Output.js"
import { operationsLayer } from "../Runtime.js"

// host schedule:list and schedule:run: the use cases of usecases/Schedules.ts, rendered.

export const scheduleListCommand = Command.make(
  "schedule:list",
  { json: Options.boolean("json").pipe(Options.withDescription("print a JSON array only")) },
  ({ json }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const tasks = yield* scheduledTasks.pipe(Effect.provide(operationsLayer(invocation)))
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
      const outcomes = yield* runScheduledTasks.pipe(Effect.provide(operationsLayer(invocation)))
      if (json) yield* printJson(outcomes)
      else if (outcomes.length === 0) yield* Console.log("No tasks due.")
      else yield* Console.log(outcomes.map(describeOutcome).join("\n"))
      if (outcomes.some((outcome) => outcome.status === "failed")) return yield* exitWith(1)
    })
).pipe(Command.withDescription("Run the scheduled tasks that are due now (run it every minute from system cron)"))
