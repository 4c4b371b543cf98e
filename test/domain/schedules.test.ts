import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { nextRuns, resolveTaskCron, type ScheduleSpec, scheduleToCron, validateCron } from "../../src/domain/Schedules.js"

describe("scheduleToCron", () => {
  it.each<[ScheduleSpec, string]>([
    [{ type: "hourly" }, "0 * * * *"],
    [{ type: "daily" }, "0 0 * * *"],
    [{ type: "dailyAt", at: "07:30" }, "30 7 * * *"],
    [{ type: "dailyAt", at: "0:05" }, "5 0 * * *"],
    [{ type: "weeklyOn", day: "mon", at: "02:00" }, "0 2 * * 1"],
    [{ type: "weeklyOn", day: "Sunday", at: "23:59" }, "59 23 * * 0"],
    [{ type: "weeklyOn", day: "sat", at: "12:00" }, "0 12 * * 6"],
    [{ type: "everyMinutes", interval: 5 }, "*/5 * * * *"],
    [{ type: "everyHours", interval: 6 }, "0 */6 * * *"]
  ])("%j → %s", (spec, cron) => {
    expect(scheduleToCron(spec)).toEqual(Either.right(cron))
  })

  it.each<[ScheduleSpec, string]>([
    [{ type: "dailyAt" }, `"at" (HH:MM) is required for dailyAt`],
    [{ type: "dailyAt", at: "7pm" }, `"7pm" is not a time of day (HH:MM)`],
    [{ type: "dailyAt", at: "24:00" }, `"24:00": hour 24 is out of range 0-23`],
    [{ type: "dailyAt", at: "10:60" }, `"10:60": minute 60 is out of range 0-59`],
    [{ type: "weeklyOn", at: "10:00" }, `"day" (mon..sun) is required for weeklyOn`],
    [{ type: "weeklyOn", day: "someday", at: "10:00" }, `"someday" is not a weekday (use mon, tue, wed, thu, fri, sat or sun)`],
    [{ type: "weeklyOn", day: "mon" }, `"at" (HH:MM) is required for weeklyOn`],
    [{ type: "everyMinutes" }, "interval is required (minutes, 1-59)"],
    [{ type: "everyMinutes", interval: 0 }, "interval 0 is out of range (minutes, a whole number 1-59)"],
    [{ type: "everyMinutes", interval: 60 }, "interval 60 is out of range (minutes, a whole number 1-59)"],
    [{ type: "everyMinutes", interval: 2.5 }, "interval 2.5 is out of range (minutes, a whole number 1-59)"],
    [{ type: "everyHours", interval: 24 }, "interval 24 is out of range (hours, a whole number 1-23)"]
  ])("%j is rejected", (spec, message) => {
    expect(scheduleToCron(spec)).toEqual(Either.left(message))
  })
})

describe("validateCron", () => {
  it.each(["* * * * *", "15 3 * * *", "*/10 9-17 * * 1-5", "0 0 1 */2 *"])("accepts %s", (cron) => {
    expect(Either.isRight(validateCron(cron))).toBe(true)
  })

  it.each([
    ["61 * * * *", "is invalid"],
    ["* * *", "must have 5 fields"],
    ["0 0 * * * *", "must have 5 fields"],
    ["", "must have 5 fields"],
    ["a b c d e", "is invalid"],
    ["0 0 31 2 *", "is invalid"],
    ["? * * * *", `"?" is allowed only in the day fields, not in the minute`],
    ["0 ? * * *", "not in the hour"]
  ])("rejects %s", (cron, message) => {
    const result = validateCron(cron)
    expect(Either.isLeft(result) && result.left.includes(message)).toBe(true)
  })
})

describe("resolveTaskCron", () => {
  it("prefers cron over schedule", () => {
    expect(resolveTaskCron({ id: "t", label: "T", command: "x:y", cron: "1 2 * * *", schedule: { type: "hourly" } }))
      .toEqual(Either.right("1 2 * * *"))
  })

  it("refuses a task with neither", () => {
    expect(resolveTaskCron({ id: "t", label: "T", command: "x:y" })).toEqual(Either.left(`task "t" needs "cron" or "schedule"`))
  })
})

describe("nextRuns", () => {
  it("lists the next run times", () => {
    const runs = nextRuns("30 7 * * *", new Date(2026, 0, 1, 8, 0), 2)
    expect(runs).toEqual([new Date(2026, 0, 2, 7, 30), new Date(2026, 0, 3, 7, 30)])
  })
})
