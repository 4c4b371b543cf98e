import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach } from "vitest"
import { make } from "../../src/kernel/ModuleLoader.js"

// kernel/ModuleLoader's compiled-module cache (docs/decisions.md "Compiled-module cache"): a source whose
// files kept their content is imported from the cache as compiled before; a changed file — the entry or
// one it imports — is compiled again, and a damaged record only costs a compile.

const folders: Array<string> = []
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true })
})

const setup = () => {
  const root = mkdtempSync(join(tmpdir(), "host-modules-"))
  folders.push(root)
  const cache = join(root, "modules")
  mkdirSync(cache)
  mkdirSync(join(root, "src"))
  writeFileSync(join(root, "src", "value.ts"), "export const value: number = 1\n")
  writeFileSync(join(root, "src", "entry.ts"), "import { value } from \"./value\"\nexport default value\n")
  const load = (file: string) =>
    Effect.flatMap(make({ sdkDirectory: join(process.cwd(), "sdk", "dist"), cacheDirectory: cache }), (loader) => loader.load(file)).pipe(
      Effect.provide(NodeContext.layer)
    )
  const records = () => readdirSync(join(cache, "sources")).map((name) => JSON.parse(readFileSync(join(cache, "sources", name), "utf8")))
  const modules = () => readdirSync(cache).filter((name) => name.endsWith(".mjs")).sort()
  /** The record file's inode: a compile writes a new record (temporary file, then rename), a cache hit does not. */
  const recordInode = () => statSync(join(cache, "sources", readdirSync(join(cache, "sources"))[0]!)).ino
  return { root, cache, load, records, modules, recordInode, entry: join(root, "src", "entry.ts") }
}

describe("compiled-module cache", () => {
  it.effect("records every file a module was compiled from, and reuses the compiled module while they keep their content", () =>
    Effect.gen(function*() {
      const { entry, load, modules, recordInode, records, root } = setup()
      expect((yield* load(entry)).default).toBe(1)
      const [record] = records()
      expect(Object.keys(record.inputs).sort()).toEqual([join(root, "src", "entry.ts"), join(root, "src", "value.ts")])
      const before = { modules: modules(), inode: recordInode() }
      expect((yield* load(entry)).default).toBe(1)
      expect({ modules: modules(), inode: recordInode() }).toEqual(before)
    }))

  it.effect("compiles again when a file the module imports changed, and when the record is damaged", () =>
    Effect.gen(function*() {
      const { cache, entry, load, recordInode, records, root } = setup()
      expect((yield* load(entry)).default).toBe(1)
      const inode = recordInode()
      writeFileSync(join(root, "src", "value.ts"), "export const value: number = 2\n")
      expect((yield* load(entry)).default).toBe(2)
      expect(recordInode()).not.toBe(inode)
      const [record] = records()
      writeFileSync(join(root, "src", "value.ts"), "export const value: number = 3\n")
      writeFileSync(join(cache, "sources", readdirSync(join(cache, "sources"))[0]!), "{ not json")
      expect((yield* load(entry)).default).toBe(3)
      expect(records()[0].module).not.toBe(record.module)
    }))
})
