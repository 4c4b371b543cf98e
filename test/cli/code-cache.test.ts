import { execFileSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { startServer } from "../http/helpers.js"
import { repoRoot, tempDir } from "../support/cli.js"
import { until } from "../support/wait.js"

// bin/host.js runs the bundle from V8's code cache (dist/host.cjs.cache). V8 checks a cache only against
// the length of the source it was made from, so the cache of the previous build must not be used for a
// new bundle of the same length (docs/architecture.md "Startup").

const sandbox = tempDir("host-code-cache-")
afterAll(() => sandbox.cleanup())

/** A copy of the built CLI (bin/ and dist/host.cjs with its cache), using the repository's packages. */
const copyOfTheCli = () => {
  const root = mkdtempSync(join(sandbox.path, "cli-"))
  mkdirSync(join(root, "bin"))
  mkdirSync(join(root, "dist"))
  for (const file of ["bin/host.js", "bin/package.json", "dist/host.cjs", "dist/host.cjs.cache"]) {
    copyFileSync(join(repoRoot, file), join(root, file))
  }
  symlinkSync(join(repoRoot, "node_modules"), join(root, "node_modules"))
  symlinkSync(join(repoRoot, "package.json"), join(root, "package.json"))
  return root
}

const version = (root: string) => execFileSync(process.execPath, [join(root, "bin", "host.js"), "--version"], { encoding: "utf8" }).trim()

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

  it("is kept per kind of command: a server and a command do not reject each other's", async () => {
    // Servers run with other V8 flags than short commands, and V8 rejects a cache made under other flags:
    // with one file, each rewrote it for the other (docs/decisions.md "A code cache per kind of command").
    const cli = copyOfTheCli()
    const commandCache = join(cli, "dist", "host.cjs.cache")
    const serverCache = join(cli, "dist", "host.cjs.server.cache")
    const built = readFileSync(commandCache)
    version(cli)
    expect(readFileSync(commandCache).equals(built)).toBe(true)
    const panelRoot = mkdtempSync(join(sandbox.path, "panel-"))
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
    version(cli)
    expect(readFileSync(commandCache).equals(built)).toBe(true)
    const again = await startServer(panelRoot, { bin: join(cli, "bin", "host.js") })
    await again.stop()
    expect(readFileSync(serverCache).equals(serverWritten)).toBe(true)
    expect(readFileSync(commandCache).equals(built)).toBe(true)
  })
})
