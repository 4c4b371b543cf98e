import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { request, type RunningServer, startServer, writePanelConfig } from "../http/helpers.js"
import { inspectDatabase } from "../support/extensions.js"
import { hostBin, runHost, tempDir, tempDirsPerTest } from "../support/cli.js"
import { eventually } from "../support/wait.js"
import { mustRun, scaffold } from "./helpers.js"

// `host dev`: a dev-link source served from the folder itself, shown as linked, skipped by integrity
// checks, removed without touching the folder; and --watch reloading a running server on every save.

const temp = tempDirsPerTest()


const snapshot = (folder: string): Record<string, string> => {
  const files: Record<string, string> = {}
  const walk = (relative: string) => {
    for (const entry of readdirSync(join(folder, relative), { withFileTypes: true })) {
      const path = relative === "" ? entry.name : `${relative}/${entry.name}`
      if (entry.isDirectory()) walk(path)
      else files[path] = readFileSync(join(folder, path), "utf8")
    }
  }
  walk("")
  return files
}

describe("host dev --link / --unlink", () => {
  it("links the folder in place, shows it as linked, skips its integrity, and unlinks leaving the folder intact", async () => {
    const work = temp("host-dev-")
    const root = join(work, "panel")
    writePanelConfig(root)
    const { path } = await scaffold(work, "acme/linked", "--preset", "full")
    await mustRun(["build", path])
    const linked = await mustRun(["--root", root, "dev", path, "--link"])
    expect(linked.stdout).toContain(`Linked acme/linked v0.1.0 from ${path}: the panel serves the folder itself.`)

    // Served from the folder itself: the installed path is a link to it, no copy, no checksums.json written.
    const installed = join(root, "host", "extensions", "acme", "linked")
    expect(lstatSync(installed).isSymbolicLink()).toBe(true)
    expect(readlinkSync(installed)).toBe(path)
    expect(existsSync(join(path, "checksums.json"))).toBe(false)

    const list = JSON.parse((await mustRun(["--root", root, "list", "--json"])).stdout) as ReadonlyArray<Record<string, unknown>>
    expect(list).toEqual([expect.objectContaining({
      id: "acme/linked",
      status: "enabled",
      signature: "linked",
      linked: path,
      source: { type: "dev-link", ref: path, sha256: null }
    })])
    const table = await mustRun(["--root", root, "list"])
    expect(table.stdout).toMatch(/acme\/linked\s+Linked\s+0\.1\.0\s+enabled\s+linked/)
    expect(table.stdout).toContain(`acme/linked is linked to ${path} (host dev)`)

    // Editing the folder is not drift: status reports it as linked, not modified or unverifiable.
    writeFileSync(join(path, "README.md"), "# edited\n")
    const status = JSON.parse((await mustRun(["--root", root, "status", "--json"])).stdout) as { drift: Record<string, ReadonlyArray<string>> }
    expect(status.drift).toMatchObject({ modified: [], missing: [], unverifiable: [], linked: ["acme/linked"] })
    const human = await mustRun(["--root", root, "status"])
    expect(human.stdout).toMatch(/Drift:\s+not checked, linked with host dev: acme\/linked/)

    // The migration ran against the panel's database from the folder.
    expect(inspectDatabase(root).tables).toContain("ext_acme_linked_visits")

    // Linking again refreshes instead of failing.
    const again = await mustRun(["--root", root, "dev", path])
    expect(again.stdout).toContain("acme/linked is linked; refreshed from")

    const before = snapshot(path)
    const unlinked = await mustRun(["--root", root, "dev", path, "--unlink"])
    expect(unlinked.stdout).toContain(`Unlinked acme/linked; ${path} was left as it is.`)
    expect(snapshot(path)).toEqual(before)
    expect(existsSync(installed)).toBe(false)
    expect(inspectDatabase(root).tables).not.toContain("ext_acme_linked_visits")
    expect(JSON.parse((await mustRun(["--root", root, "list", "--json"])).stdout)).toEqual([])

    const notLinked = await runHost(["--root", root, "dev", path, "--unlink"])
    expect(notLinked.code).toBe(1)
    expect(notLinked.stderr).toBe(`error: dev: ${path} is not linked to this panel (see host list)\n`)
  })

  it("host remove of a linked extension removes the link only", async () => {
    const work = temp("host-dev-")
    const root = join(work, "panel")
    writePanelConfig(root)
    const { path } = await scaffold(work, "acme/removed", "--preset", "backend")
    await mustRun(["--root", root, "dev", path, "--link"])
    const before = snapshot(path)
    await mustRun(["--root", root, "remove", "acme/removed"])
    expect(snapshot(path)).toEqual(before)
    expect(existsSync(join(root, "host", "extensions", "acme", "removed"))).toBe(false)
  })

  it("refuses to link over an extension installed from another source, changing nothing", async () => {
    const work = temp("host-dev-")
    const root = join(work, "panel")
    writePanelConfig(root)
    const { path } = await scaffold(work, "acme/taken", "--preset", "backend")
    await mustRun(["--root", root, "add", path])
    const result = await runHost(["--root", root, "dev", path, "--link"])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("acme/taken is already installed from another source")
    expect(result.stderr).toContain("hint: host remove acme/taken first")
    const list = JSON.parse((await mustRun(["--root", root, "list", "--json"])).stdout) as ReadonlyArray<{ source: { type: string } }>
    expect(list[0]!.source.type).toBe("path")
    expect(lstatSync(join(root, "host", "extensions", "acme", "taken")).isSymbolicLink()).toBe(false)
  })

  it("refuses --unlink together with --watch (usage error)", async () => {
    const result = await runHost(["dev", ".", "--unlink", "--watch"])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("--unlink cannot be combined")
  })
})

describe("host dev --watch with a running server", () => {
  const work = tempDir("host-dev-watch-")
  const root = join(work.path, "panel")
  let path = ""
  let server: RunningServer
  let dev: ChildProcess
  let output = ""

  beforeAll(async () => {
    writePanelConfig(root)
    path = (await scaffold(work.path, "acme/live")).path
    await mustRun(["--root", root, "dev", path, "--link"])
    // A poll interval far beyond the test: only the dev signal can make the server see a change in time.
    server = await startServer(root, { pollMs: 600_000 })
    dev = spawn(process.execPath, [hostBin, "--root", root, "dev", path, "--watch"], { stdio: ["ignore", "pipe", "pipe"] })
    dev.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
    dev.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
    await eventually(async () => output, (text) => text.includes("Watching "))
  }, 120_000)

  afterAll(async () => {
    if (dev?.exitCode === null) dev.kill("SIGKILL")
    await server?.stop()
    work.cleanup()
  })

  const hello = () => request(`${server.url}/api/client/host/acme/live/hello`, { as: "alice" }).then((answer) => answer.json as { message?: string })

  it("reloads the backend on a saved route change", async () => {
    expect((await hello()).message).toBe("Hello, alice!")
    const routes = join(path, "src", "routes", "api-client.ts")
    writeFileSync(routes, readFileSync(routes, "utf8").replace("`Hello, ${user.username}!`", "`Hello again, ${user.username}!`"))
    await eventually(hello, (body) => body.message === "Hello again, alice!")
  })

  it("serves the rebuilt bundle under a new URL, and keeps the last good one when a save does not build", async () => {
    const bundleOf = async () => {
      const extensions = await request(`${server.url}/api/client/host/extensions`, { as: "alice" })
      return (extensions.json as { data: ReadonlyArray<{ bundle: string }> }).data[0]!.bundle
    }
    const firstUrl = await bundleOf()
    const widget = join(path, "resources", "frontend", "src", "components", "LiveWidget.tsx")
    writeFileSync(widget, readFileSync(widget, "utf8").replace("Loading…", "Asking the panel…"))
    // The linked file changes before the swap moves its URL, and a swap an earlier save started can move
    // the URL first: wait until both the URL is new and what it serves holds the change.
    const { served } = await eventually(
      async () => {
        const url = await bundleOf()
        return { url, served: await fetch(`${server.url}${url}`).then((response) => response.text()) }
      },
      ({ served, url }) => url !== firstUrl && served.includes("Asking the panel…")
    )

    output = ""
    writeFileSync(widget, readFileSync(widget, "utf8").replace("return (", "return ((<"))
    await eventually(async () => output, (text) => text.includes("error: build failed; the previous bundle stays"))
    expect(output).toMatch(/resources\/frontend\/src\/components\/LiveWidget\.tsx:\d+:\d+: /)
    // What the panel serves is still the last good bundle. (Not "the same URL as above": the URL seen
    // above may be a generation the server swapped away from since — it swaps on the dev signal, on
    // its own time — and comparing it raced.)
    expect(await fetch(`${server.url}${await bundleOf()}`).then((response) => response.text())).toBe(served)
  })

  it("stops on Ctrl-C and leaves the extension linked", async () => {
    const exit = new Promise<number | null>((resolve) => dev.once("exit", (code) => resolve(code)))
    dev.kill("SIGINT")
    expect(await exit).toBe(0)
    expect(output).toContain("SIGINT: stopped watching; acme/live stays linked")
    const list = JSON.parse((await mustRun(["--root", root, "list", "--json"])).stdout) as ReadonlyArray<{ signature: string }>
    expect(list[0]!.signature).toBe("linked")
  })
})
