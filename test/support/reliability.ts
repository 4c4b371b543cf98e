import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { gunzipSync, gzipSync } from "node:zlib"
import Database from "better-sqlite3"
import fc from "fast-check"
import { stringify } from "yaml"
import { main } from "../../src/cli/main.js"

// R2, the fuzzing suite (docs/operations.md#reliability-suites): generated manifests and mutated
// archives given to the real CLI, in this process (main(), not a child), with the properties every
// answer must have. The test runs a few hundred cases; bench/fuzz.bench.mjs bundles this file and
// runs ten thousand.

// ---- running the CLI in this process -----------------------------------------------------------

export interface CaseRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  readonly ms: number
}

type Writer = (chunk: unknown, ...rest: Array<unknown>) => boolean

/** Runs `host <argv>` through main() with stdout/stderr (and console) captured. One at a time. */
export const runInProcess = async (frameworkRoot: string, argv: ReadonlyArray<string>, cwd: string): Promise<CaseRun> => {
  let stdout = ""
  let stderr = ""
  const text = (args: ReadonlyArray<unknown>) => `${args.map((arg) => (typeof arg === "string" ? arg : String(arg))).join(" ")}\n`
  const saved = {
    out: process.stdout.write,
    err: process.stderr.write,
    log: console.log,
    info: console.info,
    error: console.error,
    warn: console.warn
  }
  const capture = (append: (chunk: string) => void): Writer => (chunk) => {
    append(typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8"))
    return true
  }
  process.stdout.write = capture((chunk) => (stdout += chunk)) as typeof process.stdout.write
  process.stderr.write = capture((chunk) => (stderr += chunk)) as typeof process.stderr.write
  console.log = (...args: Array<unknown>) => void (stdout += text(args))
  console.info = console.log
  console.error = (...args: Array<unknown>) => void (stderr += text(args))
  console.warn = console.error
  const started = performance.now()
  try {
    const code = await main(argv, frameworkRoot, { NO_COLOR: "1", PATH: process.env.PATH }, cwd)
    return { code, stdout, stderr, ms: performance.now() - started }
  } catch (error) {
    return { code: -1, stdout, stderr: `${stderr}main() rejected: ${String(error)}`, ms: performance.now() - started }
  } finally {
    process.stdout.write = saved.out
    process.stderr.write = saved.err
    console.log = saved.log
    console.info = saved.info
    console.error = saved.error
    console.warn = saved.warn
  }
}

// ---- the properties ------------------------------------------------------------------------------

const stackLine = /^\s+at .+(:\d+:\d+\)?|\(native\)|\(<anonymous>\))$/m

/** What every answer must satisfy: no stack trace, an exit code in {0,1,2}, one JSON document on stdout. */
export const answerProblems = (run: CaseRun, json: boolean): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (![0, 1, 2].includes(run.code)) problems.push(`exit code ${run.code}`)
  if (stackLine.test(run.stdout) || stackLine.test(run.stderr)) problems.push("a stack trace was printed")
  if (/unexpected failure/.test(run.stderr)) problems.push(`a defect: ${run.stderr.split("\n").find((line) => line.includes("unexpected failure"))}`)
  if (json) {
    try {
      JSON.parse(run.stdout)
    } catch {
      problems.push(`stdout is not one JSON document: ${JSON.stringify(run.stdout.slice(0, 120))}`)
    }
  }
  return problems
}

/** The panel root's state: records and folders agree, nothing half-installed or left behind. */
export const rootProblems = (root: string): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const allowed = new Set(["storage", "host", "public", "config", "desired-state"])
  for (const entry of readdirSync(root)) if (!allowed.has(entry)) problems.push(`unexpected ${entry} in the root`)
  const dbFile = join(root, "storage", "host", "host.db")
  if (!existsSync(dbFile)) return problems
  const db = new Database(dbFile, { readonly: true })
  try {
    const records = (db.prepare("SELECT extension_id FROM host_extensions ORDER BY extension_id").all() as Array<{ extension_id: string }>)
      .map((row) => row.extension_id)
    const lock = db.prepare("SELECT COUNT(*) AS n FROM host_settings WHERE extension_id = 'host/core' AND key = 'lock'").get() as { n: number }
    const extensionsDir = join(root, "host", "extensions")
    const folders = existsSync(extensionsDir)
      ? readdirSync(extensionsDir).flatMap((vendor) => readdirSync(join(extensionsDir, vendor)).map((name) => `${vendor}/${name}`)).sort()
      : []
    if (JSON.stringify(records) !== JSON.stringify(folders)) problems.push(`half install: records ${records} but folders ${folders}`)
    if (lock.n > 0) problems.push("the operation lock was left behind")
  } finally {
    db.close()
  }
  for (const leftover of ["staging", "journal"]) {
    const dir = join(root, "storage", "host", leftover)
    const left = existsSync(dir) ? readdirSync(dir) : []
    if (left.length > 0) problems.push(`${leftover} left behind: ${left.join(", ")}`)
  }
  return problems
}

/** Nothing may appear next to the root and the source folder (a write outside the root). */
export const sandboxProblems = (sandbox: string, expected: ReadonlyArray<string>): ReadonlyArray<string> => {
  const entries = readdirSync(sandbox).sort()
  const extra = entries.filter((entry) => !expected.includes(entry))
  return extra.length === 0 ? [] : [`written outside the root: ${extra.join(", ")}`]
}

// ---- generated manifests ----------------------------------------------------------------------------

const junk = fc.anything({ maxDepth: 2, maxKeys: 4, withNullPrototype: true, withBigInt: false })
const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined, freq: 3 })
const oneOrJunk = <T>(arbitrary: fc.Arbitrary<T>) => fc.oneof({ weight: 6, arbitrary }, { weight: 1, arbitrary: junk })

const segment = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/)
const validId = fc.tuple(segment, segment).map(([vendor, name]) => `${vendor}/${name}`)
const idArbitrary = fc.oneof({ weight: 8, arbitrary: validId }, { weight: 1, arbitrary: fc.string({ maxLength: 20 }) }, { weight: 1, arbitrary: fc.constantFrom("host/core", "../x/y", "a/b/c", "") })
const versionArbitrary = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("1.0.0", "0.1.0", "2.3.4-beta.1", "10.20.30") },
  { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
  { weight: 1, arbitrary: fc.integer() }
)
const rangeArbitrary = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom("^1.0", ">=20", "*", "~1.2.3", "1.x", ">=1.0 <3", "^99") },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) }
)
const pathArbitrary = fc.oneof(
  fc.constantFrom("database/migrations", "src/routes/web.ts", "../../etc/passwd", "/etc/passwd", "dist/x.js", "a\u0000b", "C:\\win"),
  fc.string({ maxLength: 16 })
)
const settingField = fc.record({
  type: oneOrJunk(fc.constantFrom("string", "text", "number", "boolean", "select", "color", "email", "url", "password", "json", "nonsense")),
  default: maybe(junk),
  options: maybe(fc.array(fc.string({ maxLength: 6 }), { maxLength: 4 })),
  required: maybe(fc.boolean()),
  public: maybe(fc.boolean()),
  input: maybe(fc.constantFrom("textarea", "password", "email", "select", "weird")),
  label: maybe(fc.string({ maxLength: 12 })),
  min: maybe(fc.integer()),
  max: maybe(fc.integer())
}, { requiredKeys: [] })

export const manifestObject = fc.record({
  host: oneOrJunk(fc.constant("1.0")),
  id: idArbitrary,
  name: oneOrJunk(fc.string({ maxLength: 20 })),
  version: versionArbitrary,
  description: oneOrJunk(fc.string({ maxLength: 30 })),
  license: oneOrJunk(fc.constantFrom("MIT", "Apache-2.0", "")),
  requires: maybe(fc.dictionary(fc.constantFrom("host", "panel", "php", "node", "other"), rangeArbitrary, { maxKeys: 4 })),
  dependencies: maybe(fc.dictionary(idArbitrary, rangeArbitrary, { maxKeys: 3 })),
  entrypoint: maybe(fc.oneof(fc.constant("Acme\\X\\XExtension"), fc.string({ maxLength: 20 }))),
  backend: maybe(fc.record({
    permissions: maybe(fc.array(fc.oneof(fc.constant("x.view"), fc.string({ maxLength: 10 })), { maxLength: 4 })),
    routes: maybe(fc.dictionary(fc.constantFrom("web", "admin", "api-client", "other"), pathArbitrary, { maxKeys: 3 })),
    migrations: maybe(pathArbitrary)
  }, { requiredKeys: [] })),
  admin: maybe(fc.record({ settings: maybe(fc.dictionary(fc.string({ maxLength: 10 }), settingField, { maxKeys: 5 })) }, { requiredKeys: [] })),
  frontend: maybe(fc.record({
    bundle: maybe(pathArbitrary),
    styles: maybe(pathArbitrary),
    slots: maybe(fc.dictionary(fc.constantFrom("dashboard.widgets", "navbar.after", "no.such.slot"), junk, { maxKeys: 2 })),
    css_isolation: maybe(fc.constantFrom("scoped", "shadow", "none", "weird"))
  }, { requiredKeys: [] })),
  health: maybe(fc.record({
    checks: fc.array(fc.record({
      id: fc.string({ maxLength: 8 }),
      label: fc.string({ maxLength: 8 }),
      severity: maybe(fc.constantFrom("critical", "warning", "info", "fatal"))
    }), { maxLength: 3 })
  })),
  schedules: maybe(fc.record({
    tasks: fc.array(fc.record({
      id: fc.string({ maxLength: 8 }),
      command: fc.oneof(fc.constant("x:run"), fc.string({ maxLength: 8 })),
      cron: maybe(fc.oneof(fc.constantFrom("* * * * *", "0 3 * * *", "61 * * * *", "* * * * * *"), fc.string({ maxLength: 12 }))),
      schedule: maybe(fc.oneof(fc.record({ type: fc.constantFrom("hourly", "daily", "dailyAt", "weeklyOn", "everyMinutes") }), junk))
    }, { requiredKeys: ["id", "command"] }), { maxLength: 3 })
  })),
  extra: maybe(fc.dictionary(fc.string({ maxLength: 8 }), junk, { maxKeys: 3 }))
}, { requiredKeys: ["id", "version"] })

/** Hostile YAML texts a parser must refuse quickly and cleanly. */
const hostileYaml = fc.oneof(
  fc.constant("a: &a [*a]\n"),
  fc.constant("id: *nope\n"),
  fc.integer({ min: 2, max: 9 }).map((depth) => {
    // A "billion laughs" ladder of aliases.
    const lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for (let level = 1; level <= depth; level++) lines.push(`a${level}: &a${level} [${Array(10).fill(`*a${level - 1}`).join(", ")}]`)
    return `${lines.join("\n")}\n`
  }),
  fc.integer({ min: 100, max: 3000 }).map((keys) => Array.from({ length: keys }, (_, index) => `k${index}: ${index}`).join("\n")),
  fc.integer({ min: 100, max: 5000 }).map((depth) => `${"[".repeat(depth)}${"]".repeat(depth)}\n`),
  fc.integer({ min: 100, max: 5000 }).map((depth) => `${"{a: ".repeat(depth)}1${"}".repeat(depth)}\n`),
  fc.constant("host: \"1.0\"\nid: a/b\nid: a/c\n"),
  fc.constant("\t- tab\n"),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString("latin1"))
)

/** Small edits of a YAML text (inserted, deleted or replaced characters). */
const mutateText = (text: string) =>
  fc.array(fc.tuple(fc.nat(), fc.constantFrom("insert", "delete", "replace"), fc.constantFrom(":", "-", " ", "\n", "\"", "'", "&", "*", "{", "[", "#", "!", "%", "@", "|", ">", "\t")), { minLength: 1, maxLength: 4 })
    .map((edits) => {
      let out = text
      for (const [position, kind, char] of edits) {
        const at = out.length === 0 ? 0 : position % out.length
        out = kind === "insert" ? out.slice(0, at) + char + out.slice(at) : kind === "delete" ? out.slice(0, at) + out.slice(at + 1) : out.slice(0, at) + char + out.slice(at + 1)
      }
      return out
    })

export interface ManifestCase {
  readonly yaml: string
  /** Extra files in the extension folder (path → content). */
  readonly files: Readonly<Record<string, string>>
}

const extraFiles = fc.dictionary(
  fc.constantFrom("database/migrations/001_a.sql", "database/migrations/002_b.js", "src/routes/web.ts", "dist/x.js", "README.md"),
  fc.oneof(fc.constant("-- up\nCREATE TABLE ext_fuzz_a (id INTEGER);\n-- down\nDROP TABLE ext_fuzz_a;\n"), fc.constant("-- up\nNOT SQL;\n-- down\n"), fc.string({ maxLength: 40 })),
  { maxKeys: 2 }
)

/** A manifest whose required part is valid, with generated optional sections: many of these install. */
const installableManifest = fc.record({
  id: validId,
  version: fc.constantFrom("1.0.0", "1.2.3"),
  admin: maybe(fc.record({ settings: fc.dictionary(fc.stringMatching(/^[a-z][a-z_]{0,8}$/), settingField, { maxKeys: 3 }) })),
  requires: maybe(fc.dictionary(fc.constantFrom("host", "node"), fc.constantFrom(">=1.0", "^99", "*"), { maxKeys: 2 })),
  dependencies: maybe(fc.dictionary(validId, fc.constant("^1.0"), { maxKeys: 1 }))
}, { requiredKeys: ["id", "version"] }).map((manifest) => ({
  host: "1.0",
  name: "Fuzzed",
  description: "A generated extension.",
  license: "MIT",
  ...manifest
}))

export const manifestCase: fc.Arbitrary<ManifestCase> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ yaml: installableManifest.map((manifest) => stringify(manifest)), files: extraFiles }) },
  { weight: 6, arbitrary: fc.record({ yaml: manifestObject.map((manifest) => stringify(manifest)), files: extraFiles }) },
  { weight: 2, arbitrary: fc.record({ yaml: manifestObject.chain((manifest) => mutateText(stringify(manifest))), files: extraFiles }) },
  { weight: 1, arbitrary: fc.record({ yaml: hostileYaml, files: fc.constant({}) }) },
  { weight: 1, arbitrary: fc.record({ yaml: fc.string({ maxLength: 200 }), files: fc.constant({}) }) }
)

/** Writes a manifest case as an extension folder (replacing what was there). */
export const writeManifestCase = (folder: string, testCase: ManifestCase) => {
  rmSync(folder, { recursive: true, force: true })
  mkdirSync(folder, { recursive: true })
  writeFileSync(join(folder, "extension.yaml"), testCase.yaml)
  for (const [path, content] of Object.entries(testCase.files)) {
    mkdirSync(join(folder, path, ".."), { recursive: true })
    writeFileSync(join(folder, path), content)
  }
}

// ---- mutated archives -------------------------------------------------------------------------------

interface TarEntry {
  readonly header: number
  readonly size: number
}

const tarEntries = (tar: Uint8Array): Array<TarEntry> => {
  const entries: Array<TarEntry> = []
  let offset = 0
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512)
    if (header.every((byte) => byte === 0)) break
    const size = Number.parseInt(Buffer.from(header.subarray(124, 136)).toString("latin1").replace(/\0.*$/, "").trim() || "0", 8)
    entries.push({ header: offset, size: Number.isFinite(size) ? size : 0 })
    offset += 512 + Math.ceil((Number.isFinite(size) ? size : 0) / 512) * 512
  }
  return entries
}

/** Recomputes a header's checksum, so a mutation reaches the framework's checks instead of the tar parser's. */
const fixChecksum = (tar: Uint8Array, header: number) => {
  tar.fill(0x20, header + 148, header + 156)
  let sum = 0
  for (let index = header; index < header + 512; index++) sum += tar[index]!
  Buffer.from(`${sum.toString(8).padStart(6, "0")}\0 `, "latin1").copy(tar, header + 148)
}

const setField = (tar: Uint8Array, at: number, length: number, value: string) => {
  tar.fill(0, at, at + length)
  Buffer.from(value.slice(0, length), "latin1").copy(tar, at)
}

export type ArchiveMutation =
  | { readonly kind: "flip"; readonly positions: ReadonlyArray<number>; readonly values: ReadonlyArray<number> }
  | { readonly kind: "truncate"; readonly at: number }
  | { readonly kind: "append"; readonly bytes: Uint8Array; readonly zeros: number }
  | { readonly kind: "tar-flip"; readonly positions: ReadonlyArray<number>; readonly values: ReadonlyArray<number> }
  | { readonly kind: "rename"; readonly entry: number; readonly name: string }
  | { readonly kind: "type"; readonly entry: number; readonly flag: string; readonly link: string }
  | { readonly kind: "size"; readonly entry: number; readonly size: string }
  | { readonly kind: "duplicate"; readonly entry: number }
  | { readonly kind: "drop"; readonly entry: number }
  | { readonly kind: "content"; readonly entry: number; readonly byte: number }
  | { readonly kind: "trailing-zeros"; readonly blocks: number }

export const archiveMutation: fc.Arbitrary<ArchiveMutation> = fc.oneof(
  fc.record({ kind: fc.constant("flip" as const), positions: fc.array(fc.nat(), { minLength: 1, maxLength: 8 }), values: fc.array(fc.nat(255), { minLength: 8, maxLength: 8 }) }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("append" as const), bytes: fc.uint8Array({ maxLength: 64 }), zeros: fc.nat(4096) }),
  fc.record({ kind: fc.constant("tar-flip" as const), positions: fc.array(fc.nat(), { minLength: 1, maxLength: 8 }), values: fc.array(fc.nat(255), { minLength: 8, maxLength: 8 }) }),
  fc.record({
    kind: fc.constant("rename" as const),
    entry: fc.nat(),
    name: fc.constantFrom("../evil.txt", "/etc/evil", "a/../../b", "./checksums.json", "host/../../x", "dist/\u0000x", "C:\\evil", "extension.yaml", "very/".repeat(30) + "deep")
  }),
  fc.record({ kind: fc.constant("type" as const), entry: fc.nat(), flag: fc.constantFrom("1", "2", "3", "4", "5", "6", "7", "x", "g", "L"), link: fc.constantFrom("/etc/passwd", "../../config", "checksums.json") }),
  fc.record({ kind: fc.constant("size" as const), entry: fc.nat(), size: fc.constantFrom("77777777777", "0", "1", "zzz", "-1") }),
  fc.record({ kind: fc.constant("duplicate" as const), entry: fc.nat() }),
  fc.record({ kind: fc.constant("drop" as const), entry: fc.nat() }),
  fc.record({ kind: fc.constant("content" as const), entry: fc.nat(), byte: fc.nat(255) }),
  fc.record({ kind: fc.constant("trailing-zeros" as const), blocks: fc.integer({ min: 1, max: 20000 }) })
)

/** Applies a mutation to a `.host` archive's bytes (tar-level ones unpack, edit and re-gzip). */
export const mutateArchive = (archive: Uint8Array, mutation: ArchiveMutation): Uint8Array => {
  switch (mutation.kind) {
    case "flip": {
      const out = Uint8Array.from(archive)
      mutation.positions.forEach((position, index) => (out[position % out.length] = mutation.values[index % mutation.values.length]!))
      return out
    }
    case "truncate":
      return archive.subarray(0, mutation.at % archive.length)
    case "append":
      return Buffer.concat([archive, mutation.bytes, Buffer.alloc(mutation.zeros)])
    default:
      break
  }
  const tar = Uint8Array.from(gunzipSync(archive))
  const entries = tarEntries(tar)
  const pick = (index: number) => entries[index % entries.length]!
  const regzip = (bytes: Uint8Array) => gzipSync(bytes)
  switch (mutation.kind) {
    case "tar-flip":
      mutation.positions.forEach((position, index) => (tar[position % tar.length] = mutation.values[index % mutation.values.length]!))
      return regzip(tar)
    case "rename": {
      const entry = pick(mutation.entry)
      setField(tar, entry.header, 100, mutation.name)
      fixChecksum(tar, entry.header)
      return regzip(tar)
    }
    case "type": {
      const entry = pick(mutation.entry)
      setField(tar, entry.header + 156, 1, mutation.flag)
      setField(tar, entry.header + 157, 100, mutation.link)
      fixChecksum(tar, entry.header)
      return regzip(tar)
    }
    case "size": {
      const entry = pick(mutation.entry)
      setField(tar, entry.header + 124, 12, mutation.size)
      fixChecksum(tar, entry.header)
      return regzip(tar)
    }
    case "duplicate": {
      const entry = pick(mutation.entry)
      const length = 512 + Math.ceil(entry.size / 512) * 512
      const copy = tar.subarray(entry.header, entry.header + length)
      return regzip(Buffer.concat([tar.subarray(0, entry.header + length), copy, tar.subarray(entry.header + length)]))
    }
    case "drop": {
      const entry = pick(mutation.entry)
      const length = 512 + Math.ceil(entry.size / 512) * 512
      return regzip(Buffer.concat([tar.subarray(0, entry.header), tar.subarray(entry.header + length)]))
    }
    case "content": {
      const withData = entries.filter((entry) => entry.size > 0)
      if (withData.length === 0) return regzip(tar)
      const entry = withData[mutation.entry % withData.length]!
      const at = entry.header + 512 + (mutation.byte % entry.size)
      tar[at] = (tar[at] ?? 0) ^ 0x01
      return regzip(tar)
    }
    case "trailing-zeros":
      return regzip(Buffer.concat([tar, Buffer.alloc(mutation.blocks * 512)]))
  }
}
