import { execFileSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { repoRoot, tempDir } from "../support/cli.js"

// bin/host.js runs the bundle from V8's code cache (dist/host.cjs.cache). V8 checks a cache only against
// the length of the source it was made from, so the cache of the previous build must not be used for a
// new bundle of the same length (docs/architecture.md "Startup").

const sandbox = tempDir("host-code-cache-")
afterAll(() => sandbox.cleanup())

/** A copy of the built CLI (bin/ and dist/host.cjs with its cache), using the repository's packages. */
const copyOfTheCli = () => {
  const root = sandbox.path
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
})
