import { execFileSync, spawnSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { startServer } from "../http/helpers.js"
import { repoRoot, tempDir } from "../support/cli.js"
import { until } from "../support/wait.js"

// bin/host.js runs the bundle from V8's code cache (dist/host.cjs.<command>.cache). V8 checks a cache only against
// the length of the source it was made from, so the cache of the previous build must not be used for a
// new bundle of the same length (docs/architecture.md "Startup").

const sandbox = tempDir("host-code-cache-")
afterAll(() => sandbox.cleanup())

/** A copy of the built CLI (bin/ and dist/host.cjs with its cache), using the repository's packages. */
const copyOfTheCli = () => {
  const root = mkdtempSync(join(sandbox.path, "cli-"))
  mkdirSync(join(root, "bin"))
  mkdirSync(join(root, "dist"))
  // As the build leaves it: `host list`'s cache only (other tests' runs may have made more in dist/).
  for (const file of ["bin/host.js", "bin/package.json", "dist/host.cjs", "dist/host.cjs.list.cache"]) {
    copyFileSync(join(repoRoot, file), join(root, file))
  }
  symlinkSync(join(repoRoot, "node_modules"), join(root, "node_modules"))
  symlinkSync(join(repoRoot, "package.json"), join(root, "package.json"))
  return root
}

const version = (root: string) => execFileSync(process.execPath, [join(root, "bin", "host.js"), "--version"], { encoding: "utf8" }).trim()
/** Runs `host <args>` from a copy of the CLI; the exit code (a usage error is 2). */
const hostIn = (cli: string, args: ReadonlyArray<string>) => spawnSync(process.execPath, [join(cli, "bin", "host.js"), ...args], { encoding: "utf8" }).status

describe("the code cache", () => {
  it("is not used for a rebuilt bundle of the same length, and is made again for it", () => {
    const root = copyOfTheCli()
    const bundle = join(root, "dist", "host.cjs")
    const cache = `${bundle}.cache`
    expect(version(root)).toContain("1.2.3")
    // A "rebuild" that changes the framework's version and nothing else: the same length, a newer file.
    const text = readFileSync(bundle, "latin1")
    const marker = 'name:"@host/framework",version:"1.2.3"'
    expect(text).toContain(marker)
    writeFileSync(bundle, text.replace(marker, 'name:"@host/framework",version:"7.7.7"'), "latin1")
    expect(statSync(bundle).size).toBe(text.length)
    expect(version(root)).toContain("7.7.7")
    // The run wrote a cache for the new bundle, and the next run uses it.
    expect(existsSync(cache) && statSync(cache).mtimeMs >= statSync(bundle).mtimeMs).toBe(true)
    expect(version(root)).toContain("7.7.7")
  })

  it("is not reached for a bundle of another build: the launcher says to build again and exits 1", () => {
    // The build writes the bundle already wrapped (scripts/cli-bundle.mjs); an unwrapped one, left by an
    // older build, would have failed deep inside (docs/decisions.md "P1 floor: the bundle is read once").
    const root = copyOfTheCli()
    const bundle = join(root, "dist", "host.cjs")
    writeFileSync(bundle, "module.exports = {}\n")
    const run = spawnSync(process.execPath, [join(root, "bin", "host.js"), "--version"], { encoding: "utf8" })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("dist/host.cjs was built for another version of bin/host.js; run `npm run build`")
    expect(run.stdout).toBe("")
  })

  it("is kept per kind of command: a server and a command do not reject each other's", async () => {
    // Servers run with other V8 flags than short commands, and V8 rejects a cache made under other flags:
    // with one file, each rewrote it for the other (docs/decisions.md "A code cache per kind of command").
    const cli = copyOfTheCli()
    const panelRoot = mkdtempSync(join(sandbox.path, "panel-"))
    // `host list`'s cache, which the build writes.
    const commandCache = join(cli, "dist", "host.cjs.list.cache")
    const serverCache = join(cli, "dist", "host.cjs.server.cache")
    const list = () => expect(hostIn(cli, ["list", "--json", "--root", panelRoot])).toBe(0)
    const built = readFileSync(commandCache)
    list()
    expect(readFileSync(commandCache).equals(built)).toBe(true)
    const server = await startServer(panelRoot, { bin: join(cli, "bin", "host.js") })
    try {
      // Written once the server has started, not when it stops.
      await until(() => existsSync(serverCache), "the server's code cache is written")
    } finally {
      await server.stop()
    }
    const serverWritten = readFileSync(serverCache)
    expect(readFileSync(commandCache).equals(built)).toBe(true)
    // A command after the server still uses its own cache (a rejected one would be written again),
    // and the next server start uses the server's.
    list()
    expect(readFileSync(commandCache).equals(built)).toBe(true)
    const again = await startServer(panelRoot, { bin: join(cli, "bin", "host.js") })
    await again.stop()
    expect(readFileSync(serverCache).equals(serverWritten)).toBe(true)
    expect(readFileSync(commandCache).equals(built)).toBe(true)
  })

  it("is kept per built-in command, made by its first run; a mistyped command makes none", () => {
    // One cache shared by every command held what the build's `host list` compiled, so the others compiled
    // the rest of theirs on every run (docs/decisions.md "A code cache per command").
    const cli = copyOfTheCli()
    const panelRoot = mkdtempSync(join(sandbox.path, "panel-"))
    const cacheOf = (name: string) => join(cli, "dist", `host.cjs.${name}.cache`)
    const listCache = readFileSync(cacheOf("list"))
    expect(existsSync(cacheOf("status"))).toBe(false)
    expect(hostIn(cli, ["status", "--root", panelRoot])).toBe(0)
    const statusCache = readFileSync(cacheOf("status"))
    // Its own holds what `status` compiled, more than `list` needs.
    expect(statusCache.length).toBeGreaterThan(listCache.length)
    expect(hostIn(cli, ["host:status", "--json", "--root", panelRoot])).toBe(0)
    expect(readFileSync(cacheOf("status")).equals(statusCache)).toBe(true)
    expect(readFileSync(cacheOf("list")).equals(listCache)).toBe(true)
    // A name with a colon: one file, its colon a dash.
    expect(hostIn(cli, ["--root", panelRoot, "schedule:list"])).toBe(0)
    expect(existsSync(cacheOf("schedule-list"))).toBe(true)
    // A mistyped command is a usage error; it leaves no file of its name, nor the plain one.
    expect(hostIn(cli, ["lisst", "--root", panelRoot])).toBe(2)
    expect(existsSync(cacheOf("lisst"))).toBe(false)
    expect(existsSync(join(cli, "dist", "host.cjs.cache"))).toBe(false)
    // `--version` names no command: the plain file.
    version(cli)
    expect(existsSync(join(cli, "dist", "host.cjs.cache"))).toBe(true)
  })
})
