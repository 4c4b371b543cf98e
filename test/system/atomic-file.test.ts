import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach } from "vitest"
import { isTemporaryName, temporaryFor, writeFileAtomic, writeFilesAtomic } from "../../src/system/AtomicFile.js"
import { cryptoIds, Ids } from "../../src/system/Ids.js"

// system/AtomicFile: every whole-file write of Host goes temp file → fsync → rename, with one temporary
// name scheme (docs/decisions.md "Ids, atomic files, runtime versions"). A failed write leaves the old
// file and no temporary behind.

const folders: Array<string> = []
const fresh = () => {
  const folder = mkdtempSync(join(tmpdir(), "host-atomic-"))
  folders.push(folder)
  return folder
}
afterEach(() => {
  for (const folder of folders.splice(0)) {
    chmodSync(folder, 0o700)
    rmSync(folder, { recursive: true, force: true })
  }
})

/** Ids whose random bytes are all `byte` and whose UUIDs count up: what a test controls. */
const fixedIds = (byte: number) => {
  let next = 0
  return Ids.of({
    uuid: Effect.sync(() => `00000000-0000-4000-8000-${String(++next).padStart(12, "0")}`),
    bytes: (count) => Effect.succeed(new Uint8Array(count).fill(byte))
  })
}

describe("AtomicFile", () => {
  it.effect("writes a new file, creating its folder, and replaces an existing one whole", () =>
    Effect.gen(function*() {
      const folder = fresh()
      const file = join(folder, "deep", "state.json")
      yield* writeFileAtomic(file, "{\"a\":1}")
      expect(readFileSync(file, "utf8")).toBe("{\"a\":1}")
      yield* writeFileAtomic(file, new TextEncoder().encode("second"))
      expect(readFileSync(file, "utf8")).toBe("second")
      expect(readdirSync(join(folder, "deep"))).toEqual(["state.json"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("names its temporary file .<name>.<pid>-<random>.tmp beside the target; Ids decide the random part", () =>
    Effect.gen(function*() {
      const name = yield* temporaryFor("/srv/panel/config/panel.yaml").pipe(Effect.provideService(Ids, fixedIds(0xab)))
      expect(name).toBe(`/srv/panel/config/.panel.yaml.${process.pid}-abababab.tmp`)
      expect(isTemporaryName(name.slice(name.lastIndexOf("/") + 1))).toBe(true)
      expect(isTemporaryName("panel.yaml")).toBe(false)
      expect(isTemporaryName("notes.tmp")).toBe(false)
      const real = yield* temporaryFor("/x/y").pipe(Effect.provideService(Ids, cryptoIds))
      expect(real).toMatch(new RegExp(`^/x/\\.y\\.${process.pid}-[0-9a-f]{8}\\.tmp$`))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a failed write leaves the old file as it was and removes its temporary files", () =>
    Effect.gen(function*() {
      const folder = fresh()
      const file = join(folder, "journal.json")
      writeFileSync(file, "old")
      // The second target is a folder: its rename fails after both temporaries were written.
      const blocker = join(folder, "blocker")
      yield* writeFileAtomic(join(blocker, "inner"), "x")
      const failure = yield* Effect.flip(writeFilesAtomic([[file, "new"], [blocker, "not a folder"]]))
      expect(failure._tag).toBe("SystemError")
      expect(readdirSync(folder).filter(isTemporaryName)).toEqual([])
      // Renames happen only after every file was written and flushed; the first may already have landed.
      expect(["old", "new"]).toContain(readFileSync(file, "utf8"))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a write that cannot start leaves nothing behind", () =>
    Effect.gen(function*() {
      if (process.getuid?.() === 0) return // root writes into read-only folders
      const folder = fresh()
      const file = join(folder, "state.json")
      writeFileSync(file, "old")
      chmodSync(folder, 0o500)
      const failure = yield* Effect.flip(writeFileAtomic(file, "new"))
      expect(failure._tag).toBe("SystemError")
      chmodSync(folder, 0o700)
      expect(readFileSync(file, "utf8")).toBe("old")
      expect(readdirSync(folder)).toEqual(["state.json"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("several files are renamed in the order given, each from its own temporary", () =>
    Effect.gen(function*() {
      const folder = fresh()
      const map = join(folder, "extension.js.map")
      const bundle = join(folder, "extension.js")
      yield* writeFilesAtomic([[map, "{}"], [bundle, "code"]], { mode: 0o640 })
      expect(readFileSync(map, "utf8")).toBe("{}")
      expect(readFileSync(bundle, "utf8")).toBe("code")
      expect(readdirSync(folder).sort()).toEqual(["extension.js", "extension.js.map"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("beforeRename sees the complete temporary file", () =>
    Effect.gen(function*() {
      const folder = fresh()
      const file = join(folder, "config.php")
      let seen = ""
      yield* writeFileAtomic(file, "<?php return [];", {
        beforeRename: (temporary) => Effect.sync(() => {
          seen = readFileSync(temporary, "utf8")
        })
      })
      expect(seen).toBe("<?php return [];")
    }).pipe(Effect.provide(NodeContext.layer)))
})
