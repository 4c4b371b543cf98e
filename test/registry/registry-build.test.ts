import * as ed from "@noble/ed25519"
import { Schema } from "effect"
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { beforeAll, describe, expect, it } from "vitest"
import { RegistryIndex } from "../../src/domain/Registry.js"
import { fixture, runHost, tempDir, tempDirsPerTest } from "../support/cli.js"
import { writeConfig } from "./helpers.js"

// `host registry:build <dir>` (DESIGN §25, docs/registry.md "Publishing"): real archives made by
// `host export`, the real CLI building the index, its bytes checked field by field and its signature
// checked with @noble/ed25519.

const temp = tempDirsPerTest()

interface Exported {
  readonly id: string
  readonly version: string
  readonly archive: string
  readonly sha256: string
}

/** Exports a copy of a fixture with another version (and optionally another description) into `out`. */
const exportVersion = async (
  out: string,
  source: string,
  version: string,
  options: { readonly description?: string; readonly sign?: string; readonly extra?: string } = {}
): Promise<Exported> => {
  const copy = join(temp("host-rb-src-"), "extension")
  cpSync(fixture("extensions", source), copy, { recursive: true })
  const manifest = join(copy, "extension.yaml")
  let text = readFileSync(manifest, "utf8").replace(/^version: .*$/m, `version: ${version}`)
  if (options.description !== undefined) text = text.replace(/^description: .*$/m, `description: ${JSON.stringify(options.description)}`)
  if (options.extra !== undefined) text += options.extra
  writeFileSync(manifest, text)
  const run = await runHost(
    ["export", copy, "--output", `${out}/`, "--json", ...(options.sign === undefined ? [] : ["--sign"])],
    { env: options.sign === undefined ? {} : { HOST_SECRET_KEY: options.sign } }
  )
  if (run.code !== 0) throw new Error(`host export failed: ${run.stderr}`)
  return JSON.parse(run.stdout) as Exported
}

/** `host registry:build` with its own empty root (no config of the repository's demo). */
const build = async (args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}) => {
  const root = temp("host-rb-root-")
  return runHost(["registry:build", ...args, "--root", root], { env })
}

const readIndex = (dir: string) => JSON.parse(readFileSync(join(dir, "registry.json"), "utf8"))

const listing = (dir: string) => readdirSync(dir).sort()

let keys: { public_key: string; secret_key: string }
/** A folder with hello-world in four versions (one pre-release, one signed) and full 1.2.0, built once. */
let source: string
let exported: Map<string, Exported>

beforeAll(async () => {
  keys = JSON.parse((await runHost(["keygen", "--json"])).stdout) as typeof keys
  const dir = tempDir("host-rb-archives-")
  source = dir.path
  exported = new Map()
  const made = [
    await exportVersion(source, "hello-world", "1.0.0", { description: "old words" }),
    await exportVersion(source, "hello-world", "1.10.0", {
      description: "the newest release",
      extra: "tags: [greeting, dashboard]\nrepository: https://git.example/acme/hello-world\n"
    }),
    await exportVersion(source, "hello-world", "1.2.0", { sign: keys.secret_key }),
    await exportVersion(source, "hello-world", "2.0.0-beta.1", { description: "a pre-release" }),
    await exportVersion(source, "full", "1.2.0")
  ]
  for (const archive of made) exported.set(`${archive.id}@${archive.version}`, archive)
  return dir.cleanup
}, 120_000)

/** A fresh copy of the shared archives (each test writes its own registry.json). */
const copyOfArchives = (): string => {
  const dir = temp("host-rb-dir-")
  for (const name of readdirSync(source)) copyFileSync(join(source, name), join(dir, name))
  return dir
}

describe("host registry:build", () => {
  it("writes one entry per id: versions in semver order, the highest release as latest, its manifest's fields, every sha256", async () => {
    const dir = copyOfArchives()
    const before = Date.now()
    const run = await build([dir])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain(`Index:`)
    const index = readIndex(dir)
    expect(index.version).toBe("1.0")
    expect(index.serial).toBe(1)
    const updated = Date.parse(index.updated_at)
    expect(updated).toBeGreaterThanOrEqual(before - 1000)
    expect(Date.parse(index.expires_at) - updated).toBe(30 * 24 * 60 * 60 * 1000)
    expect(index.extensions.map((entry: { id: string }) => entry.id)).toEqual(["acme/full", "acme/hello-world"])
    const hello = index.extensions[1]
    expect(hello).toEqual({
      id: "acme/hello-world",
      name: "Hello World",
      description: "the newest release",
      repository: "https://git.example/acme/hello-world",
      latest_version: "1.10.0",
      versions: ["1.0.0", "1.2.0", "1.10.0", "2.0.0-beta.1"],
      license: "MIT",
      authors: [],
      tags: ["greeting", "dashboard"],
      requires: {},
      dependencies: {},
      archive_url: "{archive}",
      signature_url: "{archive}.sig",
      sha256: Object.fromEntries(
        ["1.0.0", "1.2.0", "1.10.0", "2.0.0-beta.1"].map((version) => [version, exported.get(`acme/hello-world@${version}`)!.sha256])
      )
    })
    const full = index.extensions[0]
    expect(full).toMatchObject({
      id: "acme/full",
      name: "Full Example",
      latest_version: "1.2.0",
      versions: ["1.2.0"],
      authors: [{ name: "Acme Developers", email: "dev@acme.test" }],
      dependencies: { "acme/hello-world": "^1.0" },
      archive_url: "{archive}",
      sha256: { "1.2.0": exported.get("acme/full@1.2.0")!.sha256 }
    })
    // No archive of acme/full has a .sig, so its entry names none.
    expect(full).not.toHaveProperty("signature_url")
    expect(full.requires).toMatchObject({ host: "^1.2" })
    // The reading side decodes it, serial and expires_at included.
    const decoded = Schema.decodeUnknownSync(RegistryIndex)(index)
    expect(decoded.serial).toBe(1)
    expect(decoded.expires_at).toBe(index.expires_at)
    expect(existsSync(join(dir, "registry.json.sig"))).toBe(false)
  })

  it("is a registry a panel installs from: relative archive URLs resolve beside the index", async () => {
    const dir = copyOfArchives()
    expect((await build([dir])).code).toBe(0)
    const root = temp("host-rb-panel-")
    writeConfig(root, `registry_url: ${pathToFileURL(dir).href}\n`)
    const add = await runHost(["add", "acme/hello-world@1.2.0", "--root", root])
    expect(add.code, add.stderr).toBe(0)
    expect(add.stdout).toContain("acme/hello-world v1.2.0")
  })

  it("puts archives under --url, increments the serial, and gives the same entries for the same archives", async () => {
    const dir = copyOfArchives()
    const first = await build([dir, "--url", "https://cdn.example/host/", "--json"])
    expect(first.code, first.stderr).toBe(0)
    const firstIndex = readIndex(dir)
    expect(JSON.parse(first.stdout)).toEqual({
      path: join(dir, "registry.json"),
      serial: 1,
      expires_at: firstIndex.expires_at,
      extensions: 2,
      versions: 5,
      signed: false
    })
    expect(firstIndex.extensions[1].archive_url).toBe("https://cdn.example/host/{archive}")
    expect(firstIndex.extensions[1].signature_url).toBe("https://cdn.example/host/{archive}.sig")

    const second = await build([dir, "--url", "https://cdn.example/host", "--expires-days", "7", "--json"])
    expect(second.code, second.stderr).toBe(0)
    const secondIndex = readIndex(dir)
    expect(JSON.parse(second.stdout)).toMatchObject({ serial: 2, extensions: 2, versions: 5, signed: false })
    expect(secondIndex.serial).toBe(2)
    expect(Date.parse(secondIndex.expires_at) - Date.parse(secondIndex.updated_at)).toBe(7 * 24 * 60 * 60 * 1000)
    expect(secondIndex.extensions).toEqual(firstIndex.extensions)

    // A hand-written index without a serial counts as 0.
    writeFileSync(join(dir, "registry.json"), JSON.stringify({ version: "1.0", extensions: [] }))
    expect((await build([dir])).code).toBe(0)
    expect(readIndex(dir).serial).toBe(1)
    expect(readIndex(dir).extensions[0].archive_url).toBe("{archive}")
  })

  it("--sign writes registry.json.sig, the Ed25519 signature of registry.json's exact bytes", async () => {
    const dir = copyOfArchives()
    const run = await build([dir, "--sign", "--json"], { HOST_SECRET_KEY: keys.secret_key })
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ serial: 1, signed: true })
    const bytes = readFileSync(join(dir, "registry.json"))
    const signature = readFileSync(join(dir, "registry.json.sig"), "utf8").trim()
    expect(signature).toMatch(/^[0-9a-f]{128}$/)
    expect(await ed.verifyAsync(Buffer.from(signature, "hex"), bytes, Buffer.from(keys.public_key, "hex"))).toBe(true)
    // Not a signature of anything else: one byte more and it fails.
    expect(await ed.verifyAsync(Buffer.from(signature, "hex"), Buffer.concat([bytes, Buffer.from(" ")]), Buffer.from(keys.public_key, "hex")))
      .toBe(false)

    // An unsigned rebuild does not leave the old signature beside a new index.
    expect((await build([dir])).code).toBe(0)
    expect(existsSync(join(dir, "registry.json.sig"))).toBe(false)
  })

  it("--sign without a usable key refuses before reading anything, and writes nothing", async () => {
    const dir = copyOfArchives()
    const before = listing(dir)
    const missing = await build([dir, "--sign"])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("HOST_SECRET_KEY is not set")
    const bad = await build([dir, "--sign"], { HOST_SECRET_KEY: "abc" })
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain("HOST_SECRET_KEY is not a valid Ed25519 key")
    expect(listing(dir)).toEqual(before)
  })

  it("refuses an archive that fails verification, naming the file, and leaves the folder as it was", async () => {
    const dir = copyOfArchives()
    expect((await build([dir])).code).toBe(0)
    const previous = readFileSync(join(dir, "registry.json"))
    // A detached signature that does not match the archive: `host verify` says invalid.
    const signed = exported.get("acme/hello-world@1.2.0")!
    const name = signed.archive.split("/").pop()!
    writeFileSync(join(dir, `${name}.sig`), `${"ab".repeat(64)}\n`)
    const invalid = await build([dir])
    expect(invalid.code).toBe(1)
    expect(invalid.stderr).toMatch(new RegExp(`^error: registry:build: ${join(dir, name).replaceAll(".", "\\.")}: fails verification \\(invalid`, "m"))
    expect(readFileSync(join(dir, "registry.json"))).toEqual(previous)

    // A truncated archive: refused as unreadable, by name.
    copyFileSync(join(source, `${name}.sig`), join(dir, `${name}.sig`))
    const other = join(dir, "acme-hello-world-1.0.0.host")
    writeFileSync(other, readFileSync(other).subarray(0, 200))
    const truncated = await build([dir, "--json"])
    expect(truncated.code).toBe(1)
    expect(truncated.stderr).toContain(`error: registry:build: ${other}: acme-hello-world-1.0.0.host is refused`)
    expect(JSON.parse(truncated.stdout)).toMatchObject({ error: { code: "RegistryBuildRefused" } })
    expect(readFileSync(join(dir, "registry.json"))).toEqual(previous)
    expect(listing(dir).filter((entry) => entry.endsWith(".tmp"))).toEqual([])
  })

  it("refuses two archives of one id and version with different bytes, naming both, and writes nothing", async () => {
    const dir = copyOfArchives()
    const elsewhere = temp("host-rb-other-")
    const twin = await exportVersion(elsewhere, "hello-world", "1.0.0", { description: "rebuilt with other words" })
    const copy = join(dir, "acme-hello-world-1.0.0-rebuilt.host")
    copyFileSync(twin.archive, copy)
    const run = await build([dir])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(join(dir, "acme-hello-world-1.0.0.host"))
    expect(run.stderr).toContain(copy)
    expect(run.stderr).toContain("are both acme/hello-world 1.0.0 but their bytes differ")
    expect(existsSync(join(dir, "registry.json"))).toBe(false)

    // A byte-identical copy under another name is no conflict (the canonical name is listed).
    copyFileSync(join(dir, "acme-hello-world-1.0.0.host"), copy)
    const same = await build([dir, "--json"])
    expect(same.code, same.stderr).toBe(0)
    expect(JSON.parse(same.stdout)).toMatchObject({ versions: 5 })
  })

  it("refuses a folder that cannot be read, a folder without archives, and a bad --url or --expires-days", async () => {
    const missing = join(temp("host-rb-none-"), "nothing-here")
    const gone = await build([missing])
    expect(gone.code).toBe(1)
    expect(gone.stderr).toContain(`error: registry:build: ${missing}: does not exist`)

    const file = join(temp("host-rb-file-"), "a-file")
    writeFileSync(file, "x")
    const notFolder = await build([file])
    expect(notFolder.code).toBe(1)
    expect(notFolder.stderr).toContain(`error: registry:build: ${file}: cannot be read as a folder`)

    const empty = temp("host-rb-empty-")
    mkdirSync(join(empty, "archives"))
    const none = await build([empty])
    expect(none.code).toBe(1)
    expect(none.stderr).toContain(`error: registry:build: ${empty}: has no .host archives`)
    expect(listing(empty)).toEqual(["archives"])

    const dir = copyOfArchives()
    const before = listing(dir)
    const url = await build([dir, "--url", "ftp://files.example/host"])
    expect(url.code).toBe(1)
    expect(url.stderr).toContain("--url \"ftp://files.example/host\" must be an http(s) or file:// URL")
    const days = await build([dir, "--expires-days", "0"])
    expect(days.code).toBe(1)
    expect(days.stderr).toContain("--expires-days: 0 is not a whole number of days")
    writeFileSync(join(dir, "registry.json"), "{ not json")
    const broken = await build([dir])
    expect(broken.code).toBe(1)
    expect(broken.stderr).toContain(`${join(dir, "registry.json")}: is not valid JSON`)
    expect(readFileSync(join(dir, "registry.json"), "utf8")).toBe("{ not json")
    expect(listing(dir)).toEqual([...before, "registry.json"].sort())
  })

  it("takes tags and repository from the decoded manifest: validate accepts them, and refuses a bad one by its field", async () => {
    const copy = join(temp("host-rb-src-"), "extension")
    cpSync(fixture("extensions", "hello-world"), copy, { recursive: true })
    const manifest = join(copy, "extension.yaml")
    const text = readFileSync(manifest, "utf8")
    writeFileSync(manifest, `${text}tags: [greeting, dashboard]\nrepository: https://git.example/acme/hello-world\n`)
    const valid = await runHost(["validate", copy, "--json"])
    expect(JSON.parse(valid.stdout)).toEqual({ valid: true, errors: [], warnings: [] })

    writeFileSync(manifest, `${text}tags: [greeting, ""]\nrepository: git@git.example:acme/hello-world.git\n`)
    const invalid = await runHost(["validate", copy, "--json"])
    expect(invalid.code).toBe(1)
    expect(JSON.parse(invalid.stdout).errors).toEqual([
      { path: "tags[1]", message: "a tag must not be empty" },
      { path: "repository", message: `"git@git.example:acme/hello-world.git" is not a URL (like https://github.com/acme/hello-world)` }
    ])
    const refused = await runHost(["export", copy, "--output", `${temp("host-rb-out-")}/`])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("tags[1]")
  })

  it("names an archive whose file name is not <vendor>-<name>-<version>.host, which the index could not point at", async () => {
    const dir = temp("host-rb-renamed-")
    const made = await exportVersion(dir, "hello-world", "1.0.0")
    const renamed = join(dir, "hello.host")
    renameSync(made.archive, renamed)
    const run = await build([dir])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(`error: registry:build: ${renamed}: holds acme/hello-world 1.0.0 but is not named acme-hello-world-1.0.0.host`)
    expect(existsSync(join(dir, "registry.json"))).toBe(false)
  })
})
