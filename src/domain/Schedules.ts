import type { CronExpressionParser as CronParser } from "cron-parser"
import { Either, Schema } from "effect"

// schedules.tasks: each task runs a console command on a cron expression, given directly (`cron`)
// or as a `schedule` object. `cron` wins when both are present. Invalid means rejected, never "every minute".

export const ScheduleType = Schema.Literal("hourly", "daily", "dailyAt", "weeklyOn", "everyMinutes", "everyHours")

export const ScheduleSpec = Schema.Struct({
  type: ScheduleType,
  at: Schema.optional(Schema.String),
  day: Schema.optional(Schema.String),
  interval: Schema.optional(Schema.Number)
})
export type ScheduleSpec = typeof ScheduleSpec.Type

export const ScheduleTaskDeclaration = Schema.Struct({
  id: Schema.NonEmptyString,
  label: Schema.NonEmptyString,
  command: Schema.NonEmptyString,
  cron: Schema.optional(Schema.String),
  schedule: Schema.optional(ScheduleSpec),
  without_overlapping: Schema.optional(Schema.Boolean)
})
export type ScheduleTaskDeclaration = typeof ScheduleTaskDeclaration.Type

export interface ScheduledTask {
  readonly id: string
  readonly label: string
  readonly command: string
  readonly cron: string
  readonly withoutOverlapping: boolean
}

const weekdays: Record<string, number> = {
  sun: 0, sunday: 0,
  mon: 1, monday: 1,
  tue: 2, tues: 2, tuesday: 2,
  wed: 3, wednesday: 3,
  thu: 4, thur: 4, thurs: 4, thursday: 4,
  fri: 5, friday: 5,
  sat: 6, saturday: 6
}

/** Parses `HH:MM` (24-hour) into hour and minute. */
export const parseTimeOfDay = (at: string): Either.Either<{ hour: number; minute: number }, string> => {
  const match = /^(\d{1,2}):(\d{2})$/.exec(at.trim())
  if (match === null) return Either.left(`"${at}" is not a time of day (HH:MM)`)
  const hour = Number(match[1])
  const minute = Number(match[2])
  if (hour > 23) return Either.left(`"${at}": hour ${hour} is out of range 0-23`)
  if (minute > 59) return Either.left(`"${at}": minute ${minute} is out of range 0-59`)
  return Either.right({ hour, minute })
}

/** Day name (`mon`..`sun`, full names too, any case) → cron weekday number (Sunday = 0). */
export const parseWeekday = (day: string): Either.Either<number, string> => {
  const number = weekdays[day.trim().toLowerCase()]
  return number === undefined
    ? Either.left(`"${day}" is not a weekday (use mon, tue, wed, thu, fri, sat or sun)`)
    : Either.right(number)
}

const interval = (
  value: number | undefined,
  max: number,
  unit: string
): Either.Either<number, string> => {
  if (value === undefined) return Either.left(`interval is required (${unit}, 1-${max})`)
  if (!Number.isInteger(value) || value < 1 || value > max) {
    return Either.left(`interval ${value} is out of range (${unit}, a whole number 1-${max})`)
  }
  return Either.right(value)
}

const requireAt = (spec: ScheduleSpec) =>
  spec.at === undefined ? Either.left(`"at" (HH:MM) is required for ${spec.type}`) : parseTimeOfDay(spec.at)

/** Maps a `schedule` object to its five-field cron expression. */
export const scheduleToCron = (spec: ScheduleSpec): Either.Either<string, string> => {
  switch (spec.type) {
    case "hourly":
      return Either.right("0 * * * *")
    case "daily":
      return Either.right("0 0 * * *")
    case "dailyAt":
      return Either.map(requireAt(spec), ({ hour, minute }) => `${minute} ${hour} * * *`)
    case "weeklyOn": {
      if (spec.day === undefined) return Either.left(`"day" (mon..sun) is required for weeklyOn`)
      const day = parseWeekday(spec.day)
      if (Either.isLeft(day)) return Either.left(day.left)
      return Either.map(requireAt(spec), ({ hour, minute }) => `${minute} ${hour} * * ${day.right}`)
    }
    case "everyMinutes":
      return Either.map(interval(spec.interval, 59, "minutes"), (n) => `*/${n} * * * *`)
    case "everyHours":
      return Either.map(interval(spec.interval, 23, "hours"), (n) => `0 */${n} * * *`)
  }
}

// cron-parser (and luxon under it) loads when a cron expression is first read, not with this module:
// every plan decodes the installed manifests, which loads this module, and most declare no schedule;
// evaluating the package cost every plan several milliseconds
// (docs/decisions.md "P4 (session 10): Schema checks by hand, modules on first use").
// A synchronous `require`, which the bundle resolves to the package it contains (and vitest to
// node_modules), because decoding is synchronous.
let cronParser: typeof CronParser | undefined
const CronExpressionParser = {
  parse: (...args: Parameters<typeof CronParser.parse>) =>
    (cronParser ??= (require("cron-parser") as typeof import("cron-parser")).CronExpressionParser).parse(...args)
}

/** Accepts a five-field cron expression that cron-parser understands; anything else is refused. */
export const validateCron = (expression: string): Either.Either<string, string> => {
  const trimmed = expression.trim().replace(/\s+/g, " ")
  const fields = trimmed === "" ? 0 : trimmed.split(" ").length
  if (fields !== 5) return Either.left(`cron "${expression}" must have 5 fields (minute hour day month weekday), has ${fields}`)
  // cron-parser reads `?` anywhere as "every"; cron allows it only for the day of the month or the week.
  const [minuteField, hourField, , monthField] = trimmed.split(" ")
  const questioned = [["minute", minuteField], ["hour", hourField], ["month", monthField]].find(([, field]) => field!.includes("?"))
  if (questioned !== undefined) return Either.left(`cron "${expression}" is invalid: "?" is allowed only in the day fields, not in the ${questioned[0]}`)
  try {
    CronExpressionParser.parse(trimmed, { strict: false })
    return Either.right(trimmed)
  } catch (error) {
    return Either.left(`cron "${expression}" is invalid: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/** The task's cron expression: `cron` when given, else the mapped `schedule`; validated either way. */
export const resolveTaskCron = (task: ScheduleTaskDeclaration): Either.Either<string, string> => {
  if (task.cron !== undefined) return validateCron(task.cron)
  if (task.schedule !== undefined) return Either.flatMap(scheduleToCron(task.schedule), validateCron)
  return Either.left(`task "${task.id}" needs "cron" or "schedule"`)
}

/** The next run times of a cron expression after `from` (for `schedule:list`). */
export const nextRuns = (cron: string, from: Date, count: number): ReadonlyArray<Date> => {
  const expression = CronExpressionParser.parse(cron, { currentDate: from })
  return expression.take(count).map((date) => date.toDate())
}

/** Whether a cron expression fires in the minute of `now` (what `schedule:run`, run every minute, runs). */
export const isDue = (cron: string, now: Date): boolean => {
  const minute = new Date(now)
  minute.setSeconds(0, 0)
  const previous = CronExpressionParser.parse(cron, { currentDate: new Date(minute.getTime() + 1000) }).prev().toDate()
  return previous.getTime() === minute.getTime()
}
