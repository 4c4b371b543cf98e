import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option, Schema } from "effect"
import { existsSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach } from "vitest"
import { hashInstalledTree } from "../../src/archive/Tree.js"
import { cachedTreeHashes, Snapshot, snapshotOf, type TreeMode, uncachedTreeHashes } from "../../src/archive/TreeCache.js"
import { cleanupAll, freshDir, writeTree } from "./helpers.js"

afterEach(cleanupAll)

// archive/TreeCache: tree hashes remembered by the stamps of every entry must always equal what reading
// the tree gives now — a change of any kind is seen on the next run.

const files = {
  "extension.yaml": "id: acme/tree\nversion: 1.0.0\n",
  "resources/frontend/dist/extension.js": "console.log('one')\n",
  "database/migrations/0001_init.sql": "CREATE TABLE t (id INTEGER);\n",
  "checksums.json": "{}\n"
}

/** One run of planning: a cache made from the file, asked once per mode, written back when the run ends. */
const hashedByRun = (cacheFile: string, root: string, racyMillis = 0) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const trees = yield* cachedTreeHashes(cacheFile, { racyMillis })
    return {
      installed: yield* trees.installed(root),
      package: yield* trees.package(root)
    }
  })))

const uncached = (root: string) =>
  Effect.runPromise(Effect.all({ installed: uncachedTreeHashes.installed(root), package: uncachedTreeHashes.package(root) }))

const remembered = (cacheFile: string, mode: TreeMode, root: string): boolean =>
  existsSync(cacheFile) && Object.hasOwn((JSON.parse(readFileSync(cacheFile, "utf8")) as { trees: object }).trees, `${mode}:${root}`)

describe("tree hash cache", () => {
  it("remembers a tree and gives the same hashes as reading it", async () => {
    const root = writeTree(join(freshDir(), "tree"), files)
    const cache = join(freshDir(), "cache", "trees.json")
    const first = await hashedByRun(cache, root)
    expect(first).toEqual(await uncached(root))
    expect(first.installed).toEqual(await Effect.runPromise(hashInstalledTree(root)))
    expect(remembered(cache, "installed", root) && remembered(cache, "package", root)).toBe(true)
    expect(await hashedByRun(cache, root)).toEqual(first)
  })

  it("sees every kind of change on the next run", async () => {
    const root = writeTree(join(freshDir(), "tree"), files)
    const cache = join(freshDir(), "trees.json")
    const bundle = join(root, "resources/frontend/dist/extension.js")
    const changes: ReadonlyArray<readonly [string, () => void]> = [
      // Same size, and the modification time put back: the change time still differs.
      ["content rewritten, mtime restored", () => {
        const { atime, mtime } = statSync(bundle)
        writeFileSync(bundle, "console.log('two')\n")
        utimesSync(bundle, atime, mtime)
      }],
      ["a file added in a subfolder", () => writeFileSync(join(root, "resources/frontend/dist/extra.js"), "planted\n")],
      ["a file removed", () => rmSync(join(root, "database/migrations/0001_init.sql"))],
      ["a file renamed", () => renameSync(join(root, "resources/frontend/dist/extra.js"), join(root, "resources/frontend/extra.js"))],
      ["a symbolic link planted", () => symlinkSync("/etc/passwd", join(root, "resources/link"))],
      ["a folder replaced by a file", () => {
        rmSync(join(root, "database"), { recursive: true })
        writeFileSync(join(root, "database"), "not a folder\n")
      }],
      ["a package-excluded folder added", () => writeTree(join(root, "node_modules"), { "dep/index.js": "x\n" })]
    ]
    let before = await hashedByRun(cache, root)
    for (const [what, change] of changes) {
      change()
      const after = await hashedByRun(cache, root)
      expect(after, what).toEqual(await uncached(root))
      expect(after.installed, what).not.toEqual(before.installed)
      before = after
    }
  })

  it("does not remember entries changed within the racy window, and reads them again", async () => {
    const root = writeTree(join(freshDir(), "tree"), files)
    const cache = join(freshDir(), "trees.json")
    await hashedByRun(cache, root, 60_000)
    expect(remembered(cache, "installed", root)).toBe(false)
    writeFileSync(join(root, "extension.yaml"), "id: acme/tree\nversion: 1.0.1\n")
    expect(await hashedByRun(cache, root, 60_000)).toEqual(await uncached(root))
  })

  it("treats an unreadable cache file as empty and a missing tree as the error reading it gives", async () => {
    const root = writeTree(join(freshDir(), "tree"), files)
    const cache = join(freshDir(), "trees.json")
    writeFileSync(cache, "{ not json")
    expect(await hashedByRun(cache, root)).toEqual(await uncached(root))
    rmSync(root, { recursive: true })
    const missing = await Effect.runPromise(Effect.scoped(Effect.flatMap(cachedTreeHashes(cache, { racyMillis: 0 }), (trees) =>
      Effect.either(trees.installed(root)))))
    expect(Either.isLeft(missing)).toBe(true)
  })

  it("takes a stored snapshot exactly when the Snapshot schema would, and reads the tree again otherwise", async () => {
    const decode = Schema.decodeUnknownOption(Snapshot)
    const good = { dirs: [["", "1:2:3:4:5"]], entries: [["a.txt", "1:2:3:4:5", "ab"]] }
    const sparse: Array<unknown> = []
    sparse.length = 1
    const shapes: ReadonlyArray<unknown> = [
      good, { dirs: [], entries: [] }, { ...good, extra: 1 },
      undefined, null, 1, "x", [], [good], {}, { dirs: [] }, { entries: [] },
      { dirs: null, entries: [] }, { dirs: {}, entries: [] }, { dirs: [[""]], entries: [] }, { dirs: [["", "s", "x"]], entries: [] },
      { dirs: [["", 1]], entries: [] }, { dirs: [], entries: [["a", "s"]] }, { dirs: [], entries: [["a", "s", "h", "x"]] },
      { dirs: [], entries: [["a", "s", null]] }, { dirs: sparse, entries: [] }, { dirs: [sparse], entries: [] },
      { dirs: [["", "s"], "x"], entries: [] }, Object.create({ dirs: [], entries: [] }), Object.assign([], { dirs: [], entries: [] }),
      { dirs: [Object.assign(["", "s"], { more: 1 })], entries: [] }
    ]
    for (const shape of shapes) expect(Option.isSome(snapshotOf(shape)), JSON.stringify(shape)).toBe(Option.isSome(decode(shape)))
    // A stored snapshot of the wrong shape is a miss: the tree is read again and remembered anew.
    const root = writeTree(join(freshDir(), "tree"), files)
    const cache = join(freshDir(), "trees.json")
    const first = await hashedByRun(cache, root)
    writeFileSync(cache, JSON.stringify({ format: 1, trees: { [`installed:${root}`]: { dirs: [], entries: [["extension.yaml", "x", "forged", "extra"]] } } }))
    expect(await hashedByRun(cache, root)).toEqual(first)
    expect(remembered(cache, "installed", root)).toBe(true)
  })
})
