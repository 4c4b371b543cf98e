import { spawn } from "node:child_process"
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { hostBin, runHost, tempDirsPerTest } from "../support/cli.js"
import { expectNoReactInside, mustRun, scaffold } from "./helpers.js"

// `host build`: one IIFE per extension with React and @host/sdk taken from the page, errors as
// file:line:column with the previous bundle left alone, --json, styles beside, and --watch.

const temp = tempDirsPerTest()

const widget = (folder: string) => join(folder, "resources", "frontend", "src", "components", "BuiltWidget.tsx")

describe("host build", () => {
  it("prints file:line:column for a syntax error, exits 1, and leaves the previous bundle untouched", async () => {
    const { path } = await scaffold(temp("host-build-"), "acme/built")
    await mustRun(["build", path])
    const bundle = join(path, "resources", "frontend", "dist", "extension.js")
    const before = readFileSync(bundle)
    const mapBefore = readFileSync(`${bundle}.map`)
    const source = readFileSync(widget(path), "utf8").split("\n")
    const line = source.findIndex((text) => text.includes("return ("))
    source[line] = "  return ((<section>"
    writeFileSync(widget(path), source.join("\n"))
    const result = await runHost(["build", path])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe("")
    expect(result.stderr).toMatch(
      new RegExp(`^error: build: the frontend of ${path.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} does not build:\\nresources/frontend/src/components/BuiltWidget\\.tsx:\\d+:\\d+: `)
    )
    const [, reportedLine] = /BuiltWidget\.tsx:(\d+):(\d+)/.exec(result.stderr)!
    expect(Number(reportedLine)).toBeGreaterThanOrEqual(line + 1)
    expect(readFileSync(bundle).equals(before)).toBe(true)
    expect(readFileSync(`${bundle}.map`).equals(mapBefore)).toBe(true)
  })

  it("prints {bundle, bytes, styles, ms} with --json and nothing else", async () => {
    const { path } = await scaffold(temp("host-build-"), "acme/built")
    const result = await mustRun(["build", path, "--json"])
    const parsed = JSON.parse(result.stdout) as Record<string, unknown>
    expect(Object.keys(parsed).sort()).toEqual(["bundle", "bytes", "ms", "styles"])
    expect(parsed).toMatchObject({ bundle: "resources/frontend/dist/extension.js", styles: "resources/frontend/dist/extension.css" })
    const css = readFileSync(join(path, "resources", "frontend", "dist", "extension.css"), "utf8")
    expect(css).toContain(".acme-built-card")
    expect(css).toContain("sourceMappingURL=extension.css.map")
    const js = expectNoReactInside(join(path, "resources", "frontend", "dist", "extension.js"))
    // One IIFE: nothing leaks into the page's global scope.
    expect(js).toMatch(/^(?:"use strict";)?\(\(\)=>\{/)
  })

  it("writes to the manifest's frontend.bundle and frontend.styles", async () => {
    const { path } = await scaffold(temp("host-build-"), "acme/built")
    appendFileSync(join(path, "extension.yaml"), "frontend:\n  bundle: public/app.js\n  styles: public/look.css\n")
    const result = JSON.parse((await mustRun(["build", path, "--json"])).stdout) as { bundle: string; styles: string }
    expect(result).toMatchObject({ bundle: "public/app.js", styles: "public/look.css" })
    expect(readFileSync(join(path, "public", "app.js"), "utf8")).toContain("//# sourceMappingURL=app.js.map")
    expect(readFileSync(join(path, "public", "look.css"), "utf8")).toContain("sourceMappingURL=look.css.map")
    expect(existsSync(join(path, "public", "look.css.map"))).toBe(true)
    await mustRun(["validate", "--strict", path])
  })

  it("names the import the panel does not provide", async () => {
    const { path } = await scaffold(temp("host-build-"), "acme/built")
    const text = readFileSync(widget(path), "utf8")
    writeFileSync(widget(path), `import { renderToString } from "react-dom/server"\nvoid renderToString\n${text}`)
    const result = await runHost(["build", path])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/BuiltWidget\.tsx:1:\d+: react-dom\/server is not provided by the panel; a bundle may import react, react-dom/)
  })

  it("says where the frontend source was looked for when there is none", async () => {
    const { path } = await scaffold(temp("host-build-"), "acme/built", "--preset", "backend")
    const result = await runHost(["build", path])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("no frontend source: expected one of resources/frontend/src/index.tsx")
  })

  it("--watch rebuilds on a saved change, reports a failed save, and stops on Ctrl-C", async () => {
    const { path } = await scaffold(temp("host-build-"), "acme/built")
    const bundle = join(path, "resources", "frontend", "dist", "extension.js")
    const child = spawn(process.execPath, [hostBin, "build", path, "--watch", "--json"], { stdio: ["ignore", "pipe", "pipe"] })
    const lines: Array<string> = []
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    const waitFor = (predicate: (line: string) => boolean) =>
      new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching line; got ${lines.join("\n")}\n${stderr}`)), 30_000)
        const check = () => {
          const found = lines.find(predicate)
          if (found !== undefined) {
            clearTimeout(timer)
            child.stdout.off("data", onData)
            resolve(found)
          }
        }
        const onData = (chunk: Buffer) => {
          lines.push(...chunk.toString().split("\n").filter((line) => line !== ""))
          check()
        }
        child.stdout.on("data", onData)
        check()
      })
    try {
      await waitFor((line) => line.includes("\"bundle\""))
      lines.length = 0
      writeFileSync(widget(path), readFileSync(widget(path), "utf8").replace("Loading…", "Fetching the greeting…"))
      await waitFor((line) => line.includes("\"bundle\""))
      expect(readFileSync(bundle, "utf8")).toContain("Fetching the greeting…")
      lines.length = 0
      const good = readFileSync(bundle)
      writeFileSync(widget(path), readFileSync(widget(path), "utf8").replace("return (", "return ((<"))
      const failure = await waitFor((line) => line.includes("\"errors\""))
      expect(JSON.parse(failure).errors[0]).toMatchObject({ file: "resources/frontend/src/components/BuiltWidget.tsx", line: expect.any(Number) })
      expect(readFileSync(bundle).equals(good)).toBe(true)
    } finally {
      const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
      child.kill("SIGINT")
      expect(await exit).toBe(0)
    }
  })
})
