import { describe, expect, it } from "vitest"
import { commandWord, helpGroups, helpWidth } from "../../src/cli/Help.js"
import { builtinCommandNames } from "../../src/cli/main.js"
import { runHost } from "../support/cli.js"

// `host --help` is a page a person reads (docs/decisions.md, "A hand-written `host --help`").
describe("host --help", () => {
  it("groups the commands, one line each within 100 columns, then the global flags", async () => {
    const run = await runHost(["--help"])
    expect(run.code).toBe(0)
    expect(run.stderr).toBe("")
    const lines = run.stdout.trimEnd().split("\n")
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(helpWidth)
    const titles = ["Extensions:", "Desired state:", "Archives and registry:", "Server and panel:", "Authoring:", "Global flags:"]
    const positions = titles.map((title) => lines.indexOf(title))
    expect(positions.every((position) => position > 0)).toBe(true)
    expect([...positions].sort((a, b) => a - b)).toEqual(positions)
    // The library's own flags no longer lead the page.
    expect(run.stdout).not.toMatch(/--wizard|--completions/)
    expect(lines.find((line) => line.trimStart().startsWith("doctor"))).toMatch(/^ {2}doctor \[<id>\] +\S/)
  })

  it("names every registered command, and the commands the panel and permission work adds", async () => {
    const { stdout } = await runHost(["--help"])
    const listed = new Set(stdout.split("\n").filter((line) => line.startsWith("  ")).map((line) => line.trim().split(" ")[0]))
    for (const name of builtinCommandNames) expect(listed, `host ${name} has no line in src/cli/Help.ts`).toContain(name)
    for (const name of ["panel:install", "panel:uninstall", "panel:status", "permissions:grant", "permissions:revoke", "permissions:list", "doctor"]) {
      expect(listed).toContain(name)
    }
    // Each command once, and no line for a command that does not exist (those the panel and permission
    // work adds excepted until it is merged).
    const words = helpGroups.flatMap((group) => group.lines.map(commandWord))
    expect(new Set(words).size).toBe(words.length)
    const pending = ["panel:install", "panel:uninstall", "panel:status", "permissions:grant", "permissions:revoke", "permissions:list"]
    for (const word of words) expect(builtinCommandNames.includes(word) || pending.includes(word), `${word} is no command`).toBe(true)
  })

  it("is the same page for `host` and `host help`; `host help <command>` is the command's own help", async () => {
    const page = await runHost(["--help"])
    expect(await runHost([])).toEqual(page)
    expect(await runHost(["help"])).toEqual(page)
    const list = await runHost(["help", "list"])
    expect(list.code).toBe(0)
    expect(list.stdout).toContain("--enabled")
  })
})
