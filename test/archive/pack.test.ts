import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Parser, type ReadEntry } from "tar"
import { afterEach } from "vitest"
import { defaultLimits, inspectArchive, packTree, unpackArchive } from "../../src/archive/Archive.js"
import { emptyKeyring } from "../../src/archive/Signing.js"
import { checkTree, listFiles } from "../../src/archive/Tree.js"
import { cleanupAll, everything, fixtureCopy, freshDir, writeTree } from "./helpers.js"

afterEach(cleanupAll)

const run = <A, E>(effect: Effect.Effect<A, E, NodeContext.NodeContext>) => effect.pipe(Effect.provide(NodeContext.layer))

interface ListedEntry {
  readonly path: string
  readonly type: string
  readonly mode: number
  readonly uid: number
  readonly gid: number
  readonly uname: string
  readonly gname: string
  readonly mtime: string
}

/** The entries of an archive as tar's own parser sees them. */
const listEntries = (bytes: Uint8Array): Promise<ReadonlyArray<ListedEntry>> =>
  new Promise((resolve, reject) => {
    const entries: Array<ListedEntry> = []
    const parser = new Parser({
      onReadEntry: (entry: ReadEntry) => {
        entries.push({
          path: entry.path,
          type: entry.type,
          mode: entry.mode ?? -1,
          uid: entry.uid ?? -1,
          gid: entry.gid ?? -1,
          uname: entry.uname ?? "",
          gname: entry.gname ?? "",
          mtime: entry.mtime?.toISOString() ?? ""
        })
        entry.resume()
      }
    })
    parser.on("error", reject)
    parser.on("end", () => resolve(entries))
    parser.end(Buffer.from(bytes))
  })

const hasSystemTar = (() => {
  try {
    execFileSync("tar", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

describe("packing", () => {
  it.effect("writes checksums.json first, then sorted entries with fixed owner, time and modes", () =>
    run(Effect.gen(function*() {
      const root = fixtureCopy("full")
      chmodSync(join(root, "src", "FullExtension.ts"), 0o700)
      chmodSync(join(root, "extension.yaml"), 0o600)
      const packed = yield* packTree(root)
      const entries = yield* Effect.promise(() => listEntries(packed.bytes))
      expect(entries[0]!.path).toBe("checksums.json")
      const rest = entries.slice(1).map((entry) => entry.path)
      expect(rest).toEqual([...rest].sort())
      expect(rest).toContain("src/")
      expect(rest.indexOf("src/")).toBeLessThan(rest.indexOf("src/FullExtension.ts"))
      for (const entry of entries) {
        expect(entry).toMatchObject({ uid: 0, gid: 0, uname: "", gname: "", mtime: "1980-01-01T00:00:00.000Z" })
        expect(entry.type === "File" || entry.type === "Directory").toBe(true)
        const expectedMode = entry.type === "Directory" || entry.path === "src/FullExtension.ts" ? 0o755 : 0o644
        expect([entry.path, entry.mode.toString(8)]).toEqual([entry.path, expectedMode.toString(8)])
      }
      // gzip header: no file name, mtime 0, OS "Unix"
      expect([...packed.bytes.subarray(0, 10)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3])
      const checksums = JSON.parse(Buffer.from((yield* inspectArchive(packed.bytes, {
        source: "full.host",
        limits: defaultLimits,
        keyring: emptyKeyring
      })).files[0]!.data).toString())
      expect(Object.keys(checksums)).toEqual(Object.keys(checksums).sort())
      expect(Object.keys(checksums)).toEqual(yield* listFiles(root))
    })))

  it.effect("gives byte-identical archives for the same tree, whatever the mtimes, permissions or location", () =>
    run(Effect.gen(function*() {
      const first = fixtureCopy("full")
      const before = yield* packTree(first)
      // touch every file and folder, loosen and tighten permissions (but not the executable bits)
      for (const file of yield* listFiles(first)) {
        utimesSync(join(first, file), new Date(2031, 1, 2), new Date(2031, 1, 2))
        chmodSync(join(first, file), 0o664)
      }
      utimesSync(first, new Date(1999, 1, 1), new Date(1999, 1, 1))
      const again = yield* packTree(first)
      expect(again.sha256).toBe(before.sha256)
      expect(Buffer.compare(Buffer.from(again.bytes), Buffer.from(before.bytes))).toBe(0)
      const elsewhere = yield* packTree(fixtureCopy("full"))
      expect(elsewhere.sha256).toBe(before.sha256)
      // the executable bit is content: it changes the bytes, deterministically
      chmodSync(join(first, "src", "FullExtension.ts"), 0o755)
      const executable = yield* packTree(first)
      expect(executable.sha256).not.toBe(before.sha256)
      expect((yield* packTree(first)).sha256).toBe(executable.sha256)
    })))

  it.effect("leaves out excluded names at any depth, links, and an old checksums.json/signature.json", () =>
    run(Effect.gen(function*() {
      const root = fixtureCopy("hello-world")
      const clean = yield* packTree(root)
      writeTree(root, {
        "node_modules/left-pad/index.js": "x",
        "resources/node_modules/deep/index.js": "x",
        ".git/config": "x",
        "src/.git/HEAD": "x",
        "vendor/autoload.php": "x",
        "lib/vendor/x.php": "x",
        ".idea/workspace.xml": "x",
        ".vscode/settings.json": "x",
        ".DS_Store": "x",
        "resources/.DS_Store": "x",
        "acme-hello-world-0.9.0.host": "x",
        "acme-hello-world-0.9.0.host.sha256": "x",
        "dist/old.host.sig": "x",
        "checksums.json": "{}",
        "signature.json": "{}"
      })
      symlinkSync("/etc/passwd", join(root, "passwd"))
      symlinkSync("resources", join(root, "resources-link"))
      const packed = yield* packTree(root)
      expect(packed.sha256).toBe(clean.sha256)
      expect(Object.keys(packed.checksums)).toEqual([
        "extension.yaml",
        "resources/frontend/dist/extension.js",
        "resources/frontend/dist/extension.js.map",
        "resources/frontend/src/index.tsx"
      ])
    })))

  it.effect("round-trips: inspect and unpack give back every file, byte for byte, with its executable bit", () =>
    run(Effect.gen(function*() {
      const root = fixtureCopy("full")
      chmodSync(join(root, "src", "FullExtension.ts"), 0o755)
      writeTree(root, { "assets/blob.bin": new Uint8Array(Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256)) })
      writeTree(root, { [`deep/${"long-folder-name/".repeat(12)}file-with-a-long-name.txt`]: "pax path\n" })
      writeTree(root, { "docs/naïve-ünïcode.md": "utf-8 path\n" })
      const packed = yield* packTree(root)
      const inspection = yield* inspectArchive(packed.bytes, { source: "full.host", limits: defaultLimits, keyring: emptyKeyring })
      expect(inspection.status).toBe("unsigned")
      expect(inspection.problems).toEqual([])
      expect(inspection.manifest).toMatchObject({ id: "acme/full", version: "1.2.0" })
      expect(inspection.manifest.decoded?.document.name).toBe("Full Example")
      const staging = join(freshDir(), "storage", "host", "staging")
      const staged = yield* unpackArchive(inspection, { into: staging })
      expect(staged.startsWith(join(staging, "acme-full-1.2.0-"))).toBe(true)
      expect(everything(staging).filter((path) => !path.includes("/"))).toEqual([staged.slice(staging.length + 1)])
      const files = yield* listFiles(root)
      expect(yield* listFiles(staged)).toEqual([...files, "checksums.json"].sort())
      for (const file of files) {
        expect(Buffer.compare(readFileSync(join(staged, file)), readFileSync(join(root, file)))).toBe(0)
      }
      expect(statSync(join(staged, "src", "FullExtension.ts")).mode & 0o111).not.toBe(0)
      expect(statSync(join(staged, "extension.yaml")).mode & 0o111).toBe(0)
      expect(yield* checkTree(staged)).toEqual({ _tag: "Intact", files: files.length })
      // the same staging name again is refused, and nothing changes
      const name = staged.slice(staging.length + 1)
      const again = yield* unpackArchive(inspection, { into: staging, name }).pipe(Effect.flip)
      expect(again.message).toContain("it already exists")
      expect(yield* listFiles(staged)).toEqual([...files, "checksums.json"].sort())
    })))

  it.effect("removes what it started when unpacking fails half-way", () =>
    run(Effect.gen(function*() {
      const packed = yield* packTree(fixtureCopy("full"))
      const inspection = yield* inspectArchive(packed.bytes, { source: "full.host", limits: defaultLimits, keyring: emptyKeyring })
      // an extra file inside a path that is a file: its write fails after others have been written
      const broken = {
        ...inspection,
        directories: [...inspection.directories],
        files: [...inspection.files, { path: "extension.yaml/x", data: new Uint8Array(1), executable: false }]
      }
      const sandbox = freshDir()
      const staging = join(sandbox, "staging")
      const failure = yield* unpackArchive(broken, { into: staging }).pipe(Effect.flip)
      expect(failure._tag).toBe("ArchiveIOError")
      expect(everything(sandbox)).toEqual([])
      mkdirSync(staging)
      writeFileSync(join(staging, "keep.txt"), "mine")
      yield* unpackArchive(broken, { into: staging }).pipe(Effect.flip)
      expect(everything(sandbox)).toEqual(["staging", "staging/keep.txt"])
    })))

  it.effect.skipIf(!hasSystemTar)("is read by the system tar (tar tzf) with the same file list", () =>
    run(Effect.gen(function*() {
      const root = fixtureCopy("full")
      const packed = yield* packTree(root)
      const dir = freshDir()
      writeFileSync(join(dir, "a.host"), packed.bytes)
      const listing = execFileSync("tar", ["tzf", join(dir, "a.host")], { encoding: "utf8" }).trim().split("\n")
      expect(listing.filter((path) => !path.endsWith("/"))).toEqual(["checksums.json", ...(yield* listFiles(root))])
      mkdirSync(join(dir, "out"))
      execFileSync("tar", ["xzf", join(dir, "a.host"), "-C", join(dir, "out")])
      expect(yield* checkTree(join(dir, "out"))).toMatchObject({ _tag: "Intact" })
    })))
})
