import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runHost, tempDirsPerTest } from "../support/cli.js"
import { writeExtension } from "../support/extensions.js"
import { until } from "../support/wait.js"

const temp = tempDirsPerTest()

const toolsSource = `import { HostExtension } from "@host/sdk/server"
import { appendFileSync, existsSync } from "node:fs"

const out = () => process.env.TOOLS_OUT ?? "/dev/null"

export class ToolsExtension extends HostExtension {
  getCommands() {
    return [
      { name: "tools:hello", description: "Greets", run: (args: ReadonlyArray<string>) => { console.log(\`hello \${args.join(" ")}\`) } },
      { name: "tools:fail", description: "Fails", run: () => { throw new Error("boom") } },
      { name: "tools:code", run: () => 3 },
      { name: "tools:touch", run: () => { appendFileSync(out(), "touched\\n") } },
      // Marks its start; with TOOLS_RELEASE it runs until that file exists, else for 2 s.
      { name: "tools:slow", run: async () => {
        appendFileSync(out(), "slow-begin\\n")
        const release = process.env.TOOLS_RELEASE
        if (release === undefined) await new Promise((resolve) => setTimeout(resolve, 2000))
        else while (!existsSync(release)) await new Promise((resolve) => setTimeout(resolve, 20))
        appendFileSync(out(), "slow\\n")
      } }
    ]
  }

  getHealthChecks() {
    return [
      { id: "db", status: "pass" },
      { id: "api", status: "fail", message: "api down" },
      { id: "extra", status: "degraded" }
    ]
  }

  getEventListeners() {
    return {
      // The class name in the Host\\Events namespace names the same event as the bare name.
      "Host\\\\Events\\\\ExtensionInstalled": [(event: { extensionId: string }) => { appendFileSync(out(), \`installed \${event.extensionId}\\n\`) }],
      ExtensionEnabled: [() => { throw new Error("listener broke") }]
    }
  }
}
`

const toolsManifest = `health:
  checks:
    - { id: db, label: Database, severity: critical }
    - { id: api, label: API, severity: warning }
schedules:
  tasks:
    - { id: touch, label: Touch, command: "tools:touch", cron: "* * * * *" }
    - { id: slow, label: Slow, command: "tools:slow", cron: "* * * * *", without_overlapping: true }
    - { id: code, label: Code, command: "tools:code", cron: "5 10 * * *" }
`

const tools = (dir: string) => {
  const root = writeExtension(dir, { id: "acme/tools", version: "1.0.0", files: { "src/ToolsExtension.ts": toolsSource } })
  const manifest = join(root, "extension.yaml")
  appendFileSync(manifest, toolsManifest)
  return root
}

describe("extension backend parts from the CLI", () => {
  it("lists and runs extension console commands", async () => {
    const root = temp("host-root-")
    const out = join(temp("host-out-"), "log")
    const env = { TOOLS_OUT: out }
    expect((await runHost(["add", tools(temp("host-src-")), "--root", root], { env })).code).toBe(0)
    expect(readFileSync(out, "utf8")).toBe("installed acme/tools\n")

    const list = await runHost(["commands", "--json", "--root", root], { env })
    expect(JSON.parse(list.stdout).map((c: { name: string; extension: string }) => [c.name, c.extension])).toEqual([
      ["tools:code", "acme/tools"],
      ["tools:fail", "acme/tools"],
      ["tools:hello", "acme/tools"],
      ["tools:slow", "acme/tools"],
      ["tools:touch", "acme/tools"]
    ])
    const hello = await runHost(["tools:hello", "a", "b", "--root", root], { env })
    expect(hello).toMatchObject({ code: 0, stdout: "hello a b\n" })
    const fail = await runHost(["tools:fail", "--root", root], { env })
    expect(fail.code).toBe(1)
    expect(fail.stderr).toContain("error: tools:fail of acme/tools failed: boom")
    expect((await runHost(["tools:code", "--root", root], { env })).code).toBe(3)
    const unknown = await runHost(["tools:nope", "--root", root], { env })
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("tools:nope is neither a built-in command nor one of an enabled extension")

    expect((await runHost(["disable", "acme/tools", "--root", root], { env })).code).toBe(0)
    expect((await runHost(["tools:hello", "--root", root], { env })).code).toBe(2)
    const enable = await runHost(["enable", "acme/tools", "--root", root], { env })
    expect(enable.code).toBe(0)
    expect(enable.stderr).toContain("a listener for ExtensionEnabled of acme/tools failed: listener broke")
    expect((await runHost(["list", "--json", "--root", root], { env })).stdout).toContain(`"status": "enabled"`)
  })

  it("status --health joins declared checks with results; a hanging critical check fails it", async () => {
    const root = temp("host-root-")
    const src = temp("host-src-")
    await runHost(["add", tools(src), "--root", root])
    const healthy = await runHost(["status", "--health", "--json", "--root", root])
    expect(healthy.code).toBe(0)
    expect(JSON.parse(healthy.stdout).health).toEqual([{
      extensionId: "acme/tools",
      checks: [
        { id: "db", label: "Database", severity: "critical", status: "ok", message: null, details: null, declared: true },
        { id: "api", label: "API", severity: "warning", status: "error", message: "api down", details: null, declared: true },
        { id: "extra", label: "extra", severity: null, status: "warning", message: null, details: null, declared: false }
      ]
    }])

    const hangs = writeExtension(src, {
      id: "acme/hangs",
      version: "1.0.0",
      files: {
        "src/HangsExtension.js": `export class HangsExtension { getId() { return "acme/hangs" } getName() { return "Hangs" } getVersion() { return "1.0.0" } register() {} boot() {} getBasePath() { return "" } getHealthChecks() { return new Promise(() => {}) } }\n`
      }
    })
    appendFileSync(join(hangs, "extension.yaml"), "health:\n  checks:\n    - { id: upstream, label: Upstream, severity: critical }\n")
    await runHost(["add", hangs, "--root", root])
    const failing = await runHost(["status", "--health", "--root", root])
    expect(failing.code).toBe(1)
    expect(failing.stdout).toMatch(/acme\/hangs\s+upstream\s+error\s+critical\s+no answer within 5s/)
    expect(failing.stderr).toContain("critical health checks failing: acme/hangs upstream")
  }, 30_000)

  it("schedule:run: racing runners run a minute once; a long task without overlapping is skipped next minute", async () => {
    const root = temp("host-root-")
    const out = join(temp("host-out-"), "log")
    const at = (minute: string) => ({ TOOLS_OUT: out, HOST_DEBUG: JSON.stringify({ now: `2026-01-01T10:${minute}:30Z` }) })
    await runHost(["add", tools(temp("host-src-")), "--root", root], { env: { TOOLS_OUT: out } })
    type Outcome = { task: string; status: string }
    const racing = await Promise.all([
      runHost(["schedule:run", "--json", "--root", root], { env: at("00") }),
      runHost(["schedule:run", "--json", "--root", root], { env: at("00") })
    ])
    expect(racing.map((run) => run.code)).toEqual([0, 0])
    const outcomes = racing.map((run) => JSON.parse(run.stdout) as Array<Outcome>)
    expect(outcomes.map((list) => list.length).sort()).toEqual([0, 2])
    expect(outcomes.flat().map((o) => [o.task, o.status])).toEqual([["touch", "ok"], ["slow", "ok"]])

    // The next minute's run starts while the first one is surely inside its slow task.
    const release = join(temp("host-release-"), "release")
    const first = runHost(["schedule:run", "--json", "--root", root], { env: { ...at("01"), TOOLS_RELEASE: release } })
    const slowBegun = () => readFileSync(out, "utf8").split("\n").filter((line) => line === "slow-begin").length
    await until(() => slowBegun() >= 2, "the first runner's slow task to begin")
    const next = await runHost(["schedule:run", "--json", "--root", root], { env: at("02") })
    writeFileSync(release, "")
    expect((JSON.parse(next.stdout) as Array<Outcome>).map((o) => [o.task, o.status])).toEqual([["touch", "ok"], ["slow", "skipped"]])
    expect((JSON.parse((await first).stdout) as Array<Outcome>).map((o) => [o.task, o.status])).toEqual([["touch", "ok"], ["slow", "ok"]])
    const log = readFileSync(out, "utf8").split("\n").filter((line) => line !== "")
    expect(log.filter((line) => line === "slow")).toHaveLength(2)
    expect(log.filter((line) => line === "touched")).toHaveLength(3)
    expect(existsSync(out)).toBe(true)

    // A task's command returning a non-zero exit code failed, as on the command line; durations are measured.
    const coded = await runHost(["schedule:run", "--json", "--root", root], { env: at("05") })
    expect(coded.code).toBe(1)
    const codedOutcomes = JSON.parse(coded.stdout) as Array<Outcome & { detail: string | null; duration_ms: number }>
    expect(codedOutcomes.map((o) => [o.task, o.status, o.detail])).toEqual([["touch", "ok", null], ["slow", "ok", null], ["code", "failed", "exit code 3"]])
    expect(codedOutcomes[1]!.duration_ms).toBeGreaterThanOrEqual(1900)
  }, 30_000)
})
