import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach } from "vitest"
import { type ArchiveLimits, defaultLimits, inspectArchive, packTree, verifyAndUnpack } from "../../src/archive/Archive.js"
import type { RefusalReason } from "../../src/archive/ArchiveErrors.js"
import { emptyKeyring } from "../../src/archive/Signing.js"
import { runHost } from "../support/cli.js"
import {
  checksumsOf,
  cleanupAll,
  everything,
  fixtureCopy,
  freshDir,
  gz,
  manifestYaml,
  packageEntries,
  rawTar,
  sha256
} from "./helpers.js"

afterEach(cleanupAll)

interface Case {
  readonly name: string
  readonly reason: RefusalReason
  readonly bytes: () => Uint8Array
  readonly limits?: ArchiveLimits
  /** Part of the message that names the check. */
  readonly says: string
}

const tgz = (...args: Parameters<typeof packageEntries>) => gz(rawTar(packageEntries(...args)))

const validArchive = () => gz(rawTar(packageEntries({ "README.md": "hello\n", "src/index.js": "export {}\n" })))

const cases: ReadonlyArray<Case> = [
  {
    name: "an absolute path",
    reason: "absolute-path",
    says: `entry "/tmp/host-evil-absolute" is an absolute path`,
    bytes: () => tgz(undefined, { extra: [{ path: "/tmp/host-evil-absolute", data: "x" }] })
  },
  {
    name: "a leading .. segment",
    reason: "parent-segment",
    says: `entry "../host-evil-parent" has a ".." segment`,
    bytes: () => tgz(undefined, { extra: [{ path: "../host-evil-parent", data: "x" }] })
  },
  {
    name: "a .. segment inside the path",
    reason: "parent-segment",
    says: `has a ".." segment`,
    bytes: () => tgz(undefined, { extra: [{ path: "src/../../host-evil-inner", data: "x" }] })
  },
  {
    name: "a symbolic link",
    reason: "symlink",
    says: `entry "passwd" is a symbolic link (to "/etc/passwd")`,
    bytes: () => tgz(undefined, { extra: [{ path: "passwd", type: "SymbolicLink", linkpath: "/etc/passwd" }] })
  },
  {
    name: "a hard link",
    reason: "hardlink",
    says: `entry "copy.yaml" is a hard link (to "extension.yaml")`,
    bytes: () => tgz(undefined, { extra: [{ path: "copy.yaml", type: "Link", linkpath: "extension.yaml" }] })
  },
  {
    name: "a character device",
    reason: "special-file",
    says: `entry "null" is a device`,
    bytes: () => tgz(undefined, { extra: [{ path: "null", type: "CharacterDevice" }] })
  },
  {
    name: "a block device",
    reason: "special-file",
    says: `entry "sda" is a device`,
    bytes: () => tgz(undefined, { extra: [{ path: "sda", type: "BlockDevice" }] })
  },
  {
    name: "a FIFO",
    reason: "special-file",
    says: `entry "pipe" is a FIFO`,
    bytes: () => tgz(undefined, { extra: [{ path: "pipe", type: "FIFO" }] })
  },
  {
    name: "a duplicate entry",
    reason: "duplicate-entry",
    says: `entry "README.md" appears more than once`,
    bytes: () => tgz(undefined, { extra: [{ path: "README.md", data: "second copy\n" }] })
  },
  {
    name: "entries that differ only by case",
    reason: "duplicate-entry",
    says: `entries "README.md" and "readme.md" differ only by case`,
    bytes: () => tgz(undefined, { extra: [{ path: "readme.md", data: "hello\n" }] })
  },
  {
    name: "a file and a folder at one path",
    reason: "path-conflict",
    says: `entry "README.md" is a file, but "README.md/x" is inside it`,
    bytes: () => tgz(undefined, { extra: [{ path: "README.md/x", data: "x" }] })
  },
  {
    name: "a backslash in a path",
    reason: "invalid-path",
    says: "contains a backslash",
    bytes: () => tgz(undefined, { extra: [{ path: "src\\..\\..\\evil", data: "x" }] })
  },
  {
    name: "a file not listed in checksums.json",
    reason: "unlisted-file",
    says: `"extra.js" is not listed in checksums.json`,
    bytes: () => tgz(undefined, { extra: [{ path: "extra.js", data: "x" }] })
  },
  {
    name: "a listed file that is missing",
    reason: "missing-file",
    says: `"gone.js" is listed in checksums.json but missing from the archive`,
    bytes: () => tgz(undefined, { listed: { "gone.js": "x" } })
  },
  {
    name: "a file whose hash differs",
    reason: "checksum-mismatch",
    says: `"README.md" content differs from checksums.json`,
    bytes: () =>
      tgz(undefined, { checksums: checksumsOf({ "extension.yaml": manifestYaml, "README.md": "something else\n" }) })
  },
  {
    name: "checksums.json that is not JSON",
    reason: "checksums-malformed",
    says: "checksums.json is not JSON",
    bytes: () => tgz(undefined, { checksums: "{ not json" })
  },
  {
    name: "checksums.json with a value that is not a sha256",
    reason: "checksums-malformed",
    says: "must be a lowercase sha256 hex digest",
    bytes: () => tgz(undefined, { checksums: JSON.stringify({ "README.md": "abc", "extension.yaml": sha256(manifestYaml) }) })
  },
  {
    name: "checksums.json listing a path outside the package",
    reason: "checksums-malformed",
    says: `checksums.json lists "../x"`,
    bytes: () =>
      tgz(undefined, {
        checksums: JSON.stringify({
          "../x": sha256("x"),
          "README.md": sha256("hello\n"),
          "extension.yaml": sha256(manifestYaml)
        })
      })
  },
  {
    name: "no checksums.json",
    reason: "checksums-missing",
    says: "it has no checksums.json",
    bytes: () => gz(rawTar(packageEntries().slice(1)))
  },
  {
    name: "no extension.yaml",
    reason: "manifest-missing",
    says: "it has no extension.yaml",
    bytes: () => gz(rawTar([{ path: "checksums.json", data: checksumsOf({ "README.md": "x" }) }, { path: "README.md", data: "x" }]))
  },
  {
    name: "an archive over the archive size limit",
    reason: "archive-too-large",
    says: "the limit is 100 bytes",
    limits: { ...defaultLimits, archiveBytes: 100 },
    bytes: validArchive
  },
  {
    name: "files over the unpacked size limit",
    reason: "unpacked-too-large",
    says: "add up to more than 1.0 KiB",
    limits: { ...defaultLimits, unpackedBytes: 1024 },
    bytes: () => tgz({ "big.bin": "x".repeat(4096) })
  },
  {
    name: "more files than the file-count limit",
    reason: "too-many-files",
    says: "more than 3 files",
    limits: { ...defaultLimits, files: 3 },
    bytes: () => tgz({ "a.js": "a", "b.js": "b", "c.js": "c" })
  },
  {
    name: "more folders (implied by deep file paths) than the file-count limit",
    reason: "too-many-files",
    says: "more than 3 folders",
    limits: { ...defaultLimits, files: 3 },
    bytes: () => tgz({ "a/b/c/d/e.js": "e" })
  },
  {
    name: "a file inside a folder packing excludes (node_modules)",
    reason: "invalid-path",
    says: `entry "node_modules/x/index.js" is inside "node_modules", which packages never contain`,
    bytes: () => tgz({ "node_modules/x/index.js": "x" })
  },
  {
    name: "a file inside vendor/",
    reason: "invalid-path",
    says: `is inside "vendor"`,
    bytes: () => tgz({ "vendor/autoload.php": "<?php" })
  },
  {
    name: "a compression ratio that signals a bomb",
    reason: "compression-bomb",
    says: "which signals a decompression bomb",
    bytes: () => tgz({ "zeros.bin": "\u0000".repeat(24 * 1024 * 1024) })
  },
  {
    name: "a truncated gzip stream",
    reason: "truncated",
    says: "the gzip stream ends early",
    bytes: () => validArchive().subarray(0, validArchive().length - 30)
  },
  {
    name: "a truncated plain tar",
    reason: "truncated",
    says: "the tar data",
    bytes: () => rawTar(packageEntries()).subarray(0, 1024 + 300)
  },
  {
    name: "a plain tar without its end-of-archive marker",
    reason: "truncated",
    says: "ends before its end-of-archive marker",
    bytes: () => {
      const tar = rawTar(packageEntries())
      return tar.subarray(0, tar.length - 1024)
    }
  },
  {
    name: "damaged gzip data",
    reason: "corrupt",
    says: "the gzip data is damaged",
    bytes: () => {
      const bytes = Buffer.from(validArchive())
      bytes[bytes.length - 6] = bytes[bytes.length - 6]! ^ 0xff // inside the CRC32 trailer
      return bytes
    }
  },
  {
    name: "garbage that is neither gzip nor tar",
    reason: "not-an-archive",
    says: "the data is neither gzip nor tar",
    bytes: () => Buffer.from("PK\u0003\u0004 this is a zip file, or maybe not ".repeat(40))
  },
  {
    name: "gzip of something that is not tar",
    reason: "not-an-archive",
    says: "the data is neither gzip nor tar",
    bytes: () => gz(Buffer.from("just text, no tar headers here\n".repeat(100)))
  },
  {
    name: "an empty file",
    reason: "not-an-archive",
    says: "the data is neither gzip nor tar",
    bytes: () => new Uint8Array(0)
  }
]

const integrityReasons: ReadonlyArray<RefusalReason> = ["unlisted-file", "missing-file", "checksum-mismatch"]

const escapeTargets = ["/tmp/host-evil-absolute"]

describe("malicious and broken archives", () => {
  it.effect.each(cases)("refuses $name ($reason) and writes nothing", (testCase) =>
    Effect.gen(function*() {
      const sandbox = freshDir("host-refusal-")
      const staging = join(sandbox, "root", "storage", "host", "staging")
      const error = yield* verifyAndUnpack(testCase.bytes(), {
        source: "evil.host",
        limits: testCase.limits ?? defaultLimits,
        keyring: emptyKeyring,
        requireSignatures: false,
        into: staging
      }).pipe(Effect.flip)
      expect(error._tag).toBe("ArchiveRefused")
      if (error._tag !== "ArchiveRefused") return
      expect(error.reason).toBe(testCase.reason)
      expect(error.message).toContain(`evil.host is refused (${testCase.reason}): `)
      expect(error.message).toContain(testCase.says)
      expect(everything(sandbox)).toEqual([])
      for (const target of escapeTargets) expect(existsSync(target)).toBe(false)
      expect(existsSync(join(sandbox, "host-evil-parent"))).toBe(false)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("tells integrity problems apart from unsafe archives: inspect reports them as modified", () =>
    Effect.gen(function*() {
      const bytes = gz(rawTar(packageEntries(undefined, {
        extra: [{ path: "extra.js", data: "x" }],
        listed: { "gone.js": "x" },
        checksums: checksumsOf({ "extension.yaml": manifestYaml, "README.md": "changed\n", "gone.js": "x" })
      })))
      const inspection = yield* inspectArchive(bytes, { source: "t.host", limits: defaultLimits, keyring: emptyKeyring })
      expect(inspection.status).toBe("modified")
      expect(inspection.integrity.map((p) => [p.reason, p.path])).toEqual([
        ["checksum-mismatch", "README.md"],
        ["unlisted-file", "extra.js"],
        ["missing-file", "gone.js"]
      ])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("accepts what tar czf makes of a packed tree (./ prefixes, plain directories)", () =>
    Effect.gen(function*() {
      const bytes = gz(rawTar([
        { path: "./", type: "Directory" },
        ...packageEntries({ "src/a.js": "a" }).map((entry) => ({ ...entry, path: `./${entry.path}` })),
        { path: "./src/", type: "Directory" }
      ]))
      const inspection = yield* inspectArchive(bytes, { source: "t.host", limits: defaultLimits, keyring: emptyKeyring })
      expect(inspection.status).toBe("unsigned")
      expect(inspection.files.map((file) => file.path)).toEqual(["checksums.json", "extension.yaml", "src/a.js"])
      expect(inspection.directories).toEqual(["src"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("reads a plain (uncompressed) tar as well as tar.gz", () =>
    Effect.gen(function*() {
      const plain = rawTar(packageEntries({ "src/a.js": "a" }))
      const inspection = yield* inspectArchive(plain, { source: "t.tar", limits: defaultLimits, keyring: emptyKeyring })
      expect(inspection).toMatchObject({ compressed: false, status: "unsigned", problems: [] })
      expect(inspection.manifest).toMatchObject({ id: "acme/evil", version: "1.0.0" })
      const staging = join(freshDir(), "staging")
      const { staged } = yield* verifyAndUnpack(plain, {
        source: "t.tar",
        limits: defaultLimits,
        keyring: emptyKeyring,
        requireSignatures: false,
        into: staging,
        name: "plain"
      })
      expect(everything(staged)).toEqual(["checksums.json", "extension.yaml", "src", "src/a.js"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("refuses to pack a tree over the limits", () =>
    Effect.gen(function*() {
      const root = fixtureCopy("full")
      const tooMany = yield* packTree(root, { limits: { ...defaultLimits, files: 3 } }).pipe(Effect.flip)
      expect(tooMany._tag === "ArchiveRefused" && tooMany.reason).toBe("too-many-files")
      const tooBig = yield* packTree(root, { limits: { ...defaultLimits, unpackedBytes: 1000 } }).pipe(Effect.flip)
      expect(tooBig._tag === "ArchiveRefused" && tooBig.reason).toBe("unpacked-too-large")
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("limits count what packing counts", () => {
  it.effect("checksums.json and signature.json count for neither the file nor the size limit", () =>
    Effect.gen(function*() {
      const sandbox = freshDir("host-limits-")
      const limits = { ...defaultLimits, files: 3 }
      const result = yield* verifyAndUnpack(tgz({ "a.js": "a", "b.js": "b" }), {
        source: "exact.host",
        limits,
        keyring: emptyKeyring,
        requireSignatures: false,
        into: join(sandbox, "staging")
      })
      // Three files and checksums.json under a limit of three files: accepted and all unpacked.
      expect(readdirSync(result.staged).sort()).toEqual(["a.js", "b.js", "checksums.json", "extension.yaml"])
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("host verify on refused archives", () => {
  it("prints one error line naming the check, exits 1, and with --json one error document on stdout", async () => {
    const dir = freshDir()
    const unsafe = cases.filter((c) => c.limits === undefined && !integrityReasons.includes(c.reason))
    for (const testCase of unsafe) {
      const file = join(dir, `${testCase.reason}.host`)
      writeFileSync(file, testCase.bytes())
      const run = await runHost(["verify", file, "--json"], { cwd: dir })
      expect({ name: testCase.name, code: run.code }).toEqual({ name: testCase.name, code: 1 })
      expect(JSON.parse(run.stdout).error.message).toContain(`${testCase.reason}.host is refused (${testCase.reason})`)
      expect(run.stderr).toMatch(new RegExp(`^error: verify: ${testCase.reason}\\.host is refused \\(${testCase.reason}\\): `))
      expect(run.stderr.trim().split("\n")).toHaveLength(1)
    }
  }, 120_000)

  it("reports files that differ from checksums.json as status modified, with each problem, exit 1", async () => {
    const dir = freshDir()
    for (const testCase of cases.filter((c) => integrityReasons.includes(c.reason))) {
      const file = join(dir, `${testCase.reason}.host`)
      writeFileSync(file, testCase.bytes())
      const run = await runHost(["verify", file, "--json"], { cwd: dir })
      expect(run.code).toBe(1)
      const report = JSON.parse(run.stdout)
      expect(report).toMatchObject({ status: "modified", id: "acme/evil", version: "1.0.0" })
      expect(report.problems.map((p: { path: string; message: string }) => `"${p.path}" ${p.message}`).join("\n")).toContain(testCase.says)
    }
  })
})
