import { describe, expect, it } from "vitest"
import { fixture, runHost, tempDir } from "../support/cli.js"

describe("host schedule:list", () => {
  it("lists the tasks of enabled extensions with their cron and next run", async () => {
    const root = tempDir("host-root-")
    const host = (...args: Array<string>) => runHost([...args, "--root", root.path])
    expect((await host("schedule:list")).stdout).toBe("No scheduled tasks.\n")
    await host("add", fixture("extensions", "hello-world"))
    await host("add", fixture("extensions", "full"))
    const before = Date.now()
    const tasks = JSON.parse((await host("schedule:list", "--json")).stdout) as Array<{ id: string; cron: string; next_run: string; without_overlapping: boolean }>
    expect(tasks.map((task) => [task.id, task.cron, task.without_overlapping])).toEqual([
      ["prune-visits", "15 3 * * *", true],
      ["hourly-sync", "0 * * * *", false],
      ["daily-report", "0 0 * * *", false],
      ["morning-digest", "30 7 * * *", false],
      ["weekly-cleanup", "0 2 * * 1", false],
      ["poll", "*/5 * * * *", false],
      ["rotate", "0 */6 * * *", false]
    ])
    const poll = new Date(tasks.find((task) => task.id === "poll")!.next_run)
    expect(poll.getTime()).toBeGreaterThan(before - 1000)
    expect(poll.getTime()).toBeLessThanOrEqual(before + 5 * 60 * 1000)
    expect(poll.getMinutes() % 5).toBe(0)
    await host("disable", "acme/full")
    expect(JSON.parse((await host("schedule:list", "--json")).stdout)).toEqual([])
    root.cleanup()
  })
})
