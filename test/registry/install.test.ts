import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixture, runHost, tempDir } from "../support/cli.js"
import { inspectDatabase } from "../support/extensions.js"
import { formatBytes } from "../../src/domain/Bytes.js"
import {
  type BuiltArchive,
  chunked,
  entryFor,
  type EntryOptions,
  exportArchives,
  index,
  jsonBody,
  perTestRegistry,
  writeConfig,
  writeIndex
} from "./helpers.js"

// Installing and updating from the registry: downloads checked by size, sha256, id and version, then the
// archive's own checks and the lifecycle engine; pinning; update --check; update of all.

const { serve, temp } = perTestRegistry()

let shared: { readonly path: string; readonly cleanup: () => void }
let archives: ReadonlyMap<string, BuiltArchive>
/** The shared archives as file:// URLs, for registries written elsewhere. */
let archiveTemplate: string

beforeAll(async () => {
  shared = tempDir("host-registry-")
  archives = await exportArchives(shared.path, [
    { fixture: "hello-world" },
    { fixture: "hello-world", version: "1.1.0" },
    { fixture: "hello-world", version: "1.2.3" },
    { fixture: "hello-world", version: "1.2.5" },
    { fixture: "hello-world", version: "2.0.0" },
    { fixture: "full" },
    { fixture: "full", version: "1.3.0" }
  ])
  archiveTemplate = `file://${shared.path}/archives/{archive}`
})
afterAll(() => shared.cleanup())

const host = (root: string, env: Record<string, string>, ...args: Array<string>) => runHost([...args, "--root", root], { env })

/** A file:// registry listing the given entries (archives from the shared folder unless an entry says otherwise). */
const fileRegistry = (entries: ReadonlyArray<readonly [id: string, options?: EntryOptions]>) => {
  const dir = temp("host-reg-")
  return {
    dir,
    url: writeIndex(dir, index(entries.map(([id, options]) => entryFor(archives, id, { archive_url: archiveTemplate, ...options }))))
  }
}

const staging = (root: string) => {
  const dir = join(root, "storage", "host", "staging")
  return existsSync(dir) ? readdirSync(dir) : []
}

const installed = (root: string) => inspectDatabase(root).extensions.map((e) => `${e.extension_id}@${e.version}`)

describe("host add vendor/name", () => {
  it("installs the latest version from a file:// registry, recorded as a registry source", async () => {
    const registry = fileRegistry([["acme/hello-world", { versions: ["1.0.0", "1.1.0"] }]])
    const root = temp("host-root-")
    const run = await host(root, { HOST_REGISTRY_URL: registry.url }, "add", "acme/hello-world")
    expect(run.code).toBe(0)
    expect(run.stdout).toBe("Installed acme/hello-world v1.1.0 (enabled).\n")
    const archive = archives.get("acme/hello-world@1.1.0")!
    expect(run.stderr).toContain(`  - downloading acme/hello-world 1.1.0 from file://${archive.file}\n`)
    expect(run.stderr).toContain(`  - downloaded ${formatBytes(archive.bytes)}, sha256 matches the registry\n`)
    const list = JSON.parse((await host(root, {}, "list", "--json")).stdout)
    expect(list).toEqual([expect.objectContaining({
      id: "acme/hello-world",
      version: "1.1.0",
      signature: "unsigned",
      source: { type: "registry", ref: `file://${archive.file}`, sha256: archive.sha256, registry: "default" }
    })])
    expect(staging(root)).toEqual([])
    // The cache was written on the way.
    expect(JSON.parse((await host(root, { HOST_REGISTRY_URL: registry.url }, "registry:status", "--json")).stdout).status).toBe("fresh")
  })

  it("pins @1.2.3 and @^1.2 over HTTP, and names what is available when nothing matches", async () => {
    const served = await serve(shared.path, { "/registry.json": jsonBody(index([entryFor(archives, "acme/hello-world")])) })
    const env = { HOST_REGISTRY_URL: served.url }
    const exact = temp("host-root-")
    const pinned = await host(exact, env, "add", "acme/hello-world@1.2.3", "--json")
    expect(pinned.code).toBe(0)
    expect(JSON.parse(pinned.stdout)).toMatchObject({ action: "installed", id: "acme/hello-world", version: "1.2.3" })
    expect(served.requests).toContain("/archives/acme-hello-world-1.2.3.host")

    const ranged = temp("host-root-")
    const caret = await host(ranged, env, "add", "acme/hello-world@^1.2")
    expect(caret.code).toBe(0)
    expect(caret.stdout).toBe("Installed acme/hello-world v1.2.5 (enabled).\n")
    expect(installed(ranged)).toEqual(["acme/hello-world@1.2.5"])

    const latest = temp("host-root-")
    expect((await host(latest, env, "add", "acme/hello-world")).stdout).toBe("Installed acme/hello-world v2.0.0 (enabled).\n")

    const none = await host(temp("host-root-"), env, "add", "acme/hello-world@^3")
    expect(none.code).toBe(1)
    expect(none.stderr).toBe(
      "error: add: acme/hello-world@^3: no version of acme/hello-world satisfies ^3 (available: 2.0.0, 1.2.5, 1.2.3, 1.1.0, 1.0.0)\n"
    )
    const missing = await host(temp("host-root-"), env, "add", "acme/hello-world@1.9.9")
    expect(missing.stderr).toContain("version 1.9.9 of acme/hello-world is not in the registry")
    const unknown = await host(temp("host-root-"), env, "add", "acme/nothing")
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toBe(`error: add: acme/nothing: the registry ${served.url} has no such extension\n`)
    const bad = await host(temp("host-root-"), env, "add", "acme/hello-world@banana")
    expect(bad.stderr).toBe(`error: add: acme/hello-world@banana: "banana" is neither a version (like 1.2.3) nor a version range (like ^1.2)\n`)
  })

  it("refuses a download whose sha256 differs from the index; nothing changes", async () => {
    const registry = fileRegistry([["acme/hello-world", { versions: ["1.0.0"], sha256: { "1.0.0": "0".repeat(64) } }]])
    const root = temp("host-root-")
    const run = await host(root, { HOST_REGISTRY_URL: registry.url }, "add", "acme/hello-world")
    expect(run.code).toBe(1)
    const archive = archives.get("acme/hello-world@1.0.0")!
    expect(run.stderr).toContain(
      `error: add acme/hello-world failed while verifying and staging acme/hello-world@1.0.0: file://${archive.file} is refused (sha256-mismatch): the registry lists sha256 ${"0".repeat(64)}, the download has ${archive.sha256}; nothing was changed\n`
    )
    expect(installed(root)).toEqual([])
    expect(staging(root)).toEqual([])
  })

  it("refuses an archive holding another id or another version than the registry resolved", async () => {
    const wrong = `file://${shared.path}/archives/acme-hello-world-1.0.0.host`
    const registry = fileRegistry([
      ["acme/hello-world", { versions: ["1.0.0", "1.1.0"], archive_url: wrong, sha256: null }],
      ["acme/full", { archive_url: wrong, sha256: null }]
    ])
    const env = { HOST_REGISTRY_URL: registry.url }
    const root = temp("host-root-")
    const version = await host(root, env, "add", "acme/hello-world@1.1.0")
    expect(version.code).toBe(1)
    expect(version.stderr).toContain(
      `${wrong} is refused (version-mismatch): the registry resolved acme/hello-world@1.1.0, the archive holds acme/hello-world@1.0.0; nothing was changed`
    )
    const id = await host(root, env, "add", "acme/full")
    expect(id.code).toBe(1)
    expect(id.stderr).toContain(
      `${wrong} is refused (id-mismatch): the registry resolved acme/full@1.3.0, the archive holds acme/hello-world@1.0.0; nothing was changed`
    )
    expect(installed(root)).toEqual([])
    expect(staging(root)).toEqual([])
  })

  it("refuses an oversized download from file://, with Content-Length, and streamed without it", async () => {
    const limit = "limits:\n  archive_bytes: 300\n"
    const registry = fileRegistry([["acme/hello-world", { versions: ["1.0.0"] }]])
    const root = temp("host-root-")
    writeConfig(root, `registry_url: ${registry.url}\n${limit}`)
    const archive = archives.get("acme/hello-world@1.0.0")!
    const local = await host(root, {}, "add", "acme/hello-world")
    expect(local.code).toBe(1)
    expect(local.stderr).toContain(`cannot fetch file://${archive.file}: it is ${formatBytes(archive.bytes)}; the limit is 300 bytes; nothing was changed`)

    const served = await serve(shared.path, {
      "/registry.json": jsonBody(index([entryFor(archives, "acme/hello-world", { versions: ["1.0.0", "1.1.0"] })])),
      "/archives/acme-hello-world-1.1.0.host": chunked(readFileSync(archives.get("acme/hello-world@1.1.0")!.file))
    })
    const http = temp("host-root-")
    writeConfig(http, `registry_url: ${served.url}\n${limit}`)
    const declared = await host(http, {}, "add", "acme/hello-world@1.0.0")
    expect(declared.code).toBe(1)
    expect(declared.stderr).toContain(`cannot fetch ${served.url}/archives/acme-hello-world-1.0.0.host: it is ${formatBytes(archive.bytes)} (Content-Length); the limit is 300 bytes`)
    const streamed = await host(http, {}, "add", "acme/hello-world@1.1.0")
    expect(streamed.code).toBe(1)
    expect(streamed.stderr).toContain(`cannot fetch ${served.url}/archives/acme-hello-world-1.1.0.host: it is more than 300 bytes; the limit is 300 bytes`)
    expect(installed(http)).toEqual([])
    expect(staging(http)).toEqual([])
  })

  it("installs from a stale cache when the registry is unreachable, and fails without one", async () => {
    const registry = fileRegistry([["acme/hello-world", { versions: ["1.0.0"] }]])
    const root = temp("host-root-")
    writeConfig(root, `registry_url: ${registry.url}\nregistry_cache_ttl: 1\n`)
    expect((await host(root, {}, "registry:sync")).code).toBe(0)
    renameSync(join(registry.dir, "registry.json"), join(registry.dir, "gone.json"))
    const cacheFile = join(root, "storage", "host", "registry-cache.json")
    writeFileSync(cacheFile, readFileSync(cacheFile, "utf8").replace(/"fetched_at": "[^"]+"/, `"fetched_at": "2026-01-01T00:00:00.000Z"`))
    const run = await host(root, {}, "add", "acme/hello-world")
    expect(run.code).toBe(0)
    expect(run.stdout).toBe("Installed acme/hello-world v1.0.0 (enabled).\n")
    expect(run.stderr).toContain(
      `warning: cannot fetch ${registry.url}/registry.json: ${registry.dir}/registry.json does not exist; using the cached index from 2026-01-01T00:00:00.000Z`
    )

    const fresh = temp("host-root-")
    const failed = await host(fresh, { HOST_REGISTRY_URL: registry.url }, "add", "acme/hello-world")
    expect(failed.code).toBe(1)
    expect(failed.stderr).toBe(
      `error: add: cannot fetch ${registry.url}/registry.json: ${registry.dir}/registry.json does not exist\n` +
        "hint: the source could not be fetched; check registry_url and the network, then retry\n"
    )
    expect(installed(fresh)).toEqual([])
  })

  it("downloads the detached signature when signatures are required", async () => {
    const keys = JSON.parse((await runHost(["keygen", "--json"])).stdout) as { public_key: string; secret_key: string }
    const signedDir = temp("host-signed-")
    await exportArchives(signedDir, [{ fixture: "hello-world" }], { HOST_SECRET_KEY: keys.secret_key }, true)
    const signed = await serve(signedDir, { "/registry.json": jsonBody(index([entryFor(archives, "acme/hello-world", { versions: ["1.0.0"], sha256: null })])) })
    const root = temp("host-root-")
    writeConfig(root, `registry_url: ${signed.url}\nrequire_signatures: true\npublic_key: ${keys.public_key}\n`)
    const run = await host(root, {}, "add", "acme/hello-world")
    expect(run.code).toBe(0)
    expect(signed.requests).toEqual(["/registry.json", "/archives/acme-hello-world-1.0.0.host", "/archives/acme-hello-world-1.0.0.host.sig"])
    expect(run.stderr).toContain("the registry lists no sha256 for this version")
    expect(JSON.parse((await host(root, {}, "list", "--json")).stdout)[0].signature).toBe("signed")

    const unsigned = await serve(shared.path, { "/registry.json": jsonBody(index([entryFor(archives, "acme/hello-world", { versions: ["1.0.0"] })])) })
    const strict = temp("host-root-")
    writeConfig(strict, `registry_url: ${unsigned.url}\nrequire_signatures: true\npublic_key: ${keys.public_key}\n`)
    const refused = await host(strict, {}, "add", "acme/hello-world")
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("acme-hello-world-1.0.0.host is refused (signature unsigned)")
    expect(unsigned.requests).toContain("/archives/acme-hello-world-1.0.0.host.sig")
    expect(installed(strict)).toEqual([])
  })
})

describe("host update from the registry", () => {
  it("--check reports [{id, current, available}] and exits 0; update of all goes on past a failure and exits 1", async () => {
    const badSha = "f".repeat(64)
    const full130 = archives.get("acme/full@1.3.0")!
    const broken = fileRegistry([
      ["acme/hello-world", { versions: ["1.0.0", "1.2.5"] }],
      ["acme/full", { sha256: { "1.2.0": archives.get("acme/full@1.2.0")!.sha256, "1.3.0": badSha } }]
    ])
    const root = temp("host-root-")
    writeConfig(root, `registry_url: ${broken.url}\n`)
    expect((await host(root, {}, "add", "acme/hello-world@1.0.0")).code).toBe(0)
    expect((await host(root, {}, "add", "acme/full@1.2.0")).code).toBe(0)
    // Installed from a folder: not a registry extension, so `update` without an id leaves it alone.
    expect((await host(root, {}, "add", join(shared.path, "sources", "hello-world-1.1.0"), "--force")).code).toBe(0)
    expect((await host(root, {}, "add", "acme/hello-world@1.0.0", "--force")).code).toBe(0)

    const check = await host(root, {}, "update", "--check", "--json")
    expect(check.code).toBe(0)
    expect(JSON.parse(check.stdout)).toEqual([
      { id: "acme/full", current: "1.2.0", available: "1.3.0" },
      { id: "acme/hello-world", current: "1.0.0", available: "1.2.5" }
    ])
    const checkText = await host(root, {}, "update", "--check")
    expect(checkText.stdout).toBe("ID                Current  Available\nacme/full         1.2.0    1.3.0\nacme/hello-world  1.0.0    1.2.5\n")
    const checkOne = await host(root, {}, "update", "acme/hello-world", "--check", "--json")
    expect(JSON.parse(checkOne.stdout)).toEqual([{ id: "acme/hello-world", current: "1.0.0", available: "1.2.5" }])
    expect(installed(root)).toEqual(["acme/full@1.2.0", "acme/hello-world@1.0.0"])

    const all = await host(root, {}, "update")
    expect(all.code).toBe(1)
    expect(all.stderr).toContain(
      `error: update acme/full failed while verifying and staging acme/full@1.3.0: file://${full130.file} is refused (sha256-mismatch)`
    )
    expect(all.stdout).toBe("Updated acme/hello-world 1.0.0 → 1.2.5.\n1 of 2 extensions updated or up to date, 1 failed.\n")
    expect(installed(root)).toEqual(["acme/full@1.2.0", "acme/hello-world@1.2.5"])
    expect(staging(root)).toEqual([])

    const json = await host(root, {}, "update", "--json")
    expect(json.code).toBe(1)
    const outcomes = JSON.parse(json.stdout)
    expect(outcomes).toEqual([
      { id: "acme/full", action: "failed", error: expect.stringContaining("sha256-mismatch") },
      expect.objectContaining({ id: "acme/hello-world", action: "unchanged", version: "1.2.5" })
    ])

    // The registry is fixed: the one left over updates, and then everything is up to date.
    writeIndex(broken.dir, index([
      entryFor(archives, "acme/hello-world", { versions: ["1.0.0", "1.2.5"], archive_url: archiveTemplate }),
      entryFor(archives, "acme/full", { archive_url: archiveTemplate })
    ]))
    // The cache is fresh and still lists the bad digest until the next sync.
    expect((await host(root, {}, "update", "acme/full")).code).toBe(1)
    expect((await host(root, {}, "registry:sync", "--force")).code).toBe(0)
    const fixed = await host(root, {}, "update", "acme/full")
    expect(fixed.code).toBe(0)
    expect(fixed.stdout).toBe("Updated acme/full 1.2.0 → 1.3.0.\n")
    const none = await host(root, {}, "update", "--check")
    expect(none.code).toBe(0)
    expect(none.stdout).toBe("All 2 extensions from the registry are up to date.\n")
    expect(JSON.parse((await host(root, {}, "update", "--check", "--json")).stdout)).toEqual([])
    const again = await host(root, {}, "update", "acme/hello-world")
    expect(again.stdout).toBe("acme/hello-world is up to date (v1.2.5).\n")
    const activity = inspectDatabase(root).activity.map((a) => `${a.extension_id} ${a.summary}`)
    expect(activity).toContain("acme/hello-world Updated 1.0.0 → 1.2.5")
    expect(activity).toContain("acme/full Updated 1.2.0 → 1.3.0")
  })

  it("update <id>@<version> moves to that version; update of something not installed is an error", async () => {
    const registry = fileRegistry([["acme/hello-world"]])
    const root = temp("host-root-")
    writeConfig(root, `registry_url: ${registry.url}\n`)
    expect((await host(root, {}, "add", "acme/hello-world@1.1.0", "--disabled")).code).toBe(0)
    const pinned = await host(root, {}, "update", "acme/hello-world@~1.2", "--json")
    expect(pinned.code).toBe(0)
    expect(JSON.parse(pinned.stdout)).toMatchObject({ action: "updated", fromVersion: "1.1.0", version: "1.2.5", enabled: false })
    const back = await host(root, {}, "update", "acme/hello-world@1.0.0")
    expect(back.stdout).toBe("Updated acme/hello-world 1.2.5 → 1.0.0.\n")
    const latest = await host(root, {}, "update", "acme/hello-world")
    expect(latest.stdout).toBe("Updated acme/hello-world 1.0.0 → 2.0.0.\n")
    const missing = await host(root, {}, "update", "acme/full")
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe("error: update: extension acme/full is not installed\n")
    const noId = await host(root, {}, "update", "--source", fixture("extensions", "hello-world"))
    expect(noId.code).toBe(1)
    expect(noId.stderr).toContain("--source needs the id of the extension to update")
  })

  it("an extension the registry no longer lists is a warning for --check of all, an error when named", async () => {
    const registry = fileRegistry([["acme/hello-world", { versions: ["1.0.0"] }]])
    const root = temp("host-root-")
    writeConfig(root, `registry_url: ${registry.url}\n`)
    expect((await host(root, {}, "add", "acme/hello-world")).code).toBe(0)
    writeIndex(registry.dir, index([]))
    expect((await host(root, {}, "registry:sync", "--force")).code).toBe(0)
    const all = await host(root, {}, "update", "--check", "--json")
    expect(all.code).toBe(0)
    expect(JSON.parse(all.stdout)).toEqual([])
    expect(all.stderr).toBe(`warning: acme/hello-world: the registry ${registry.url} has no such extension\n`)
    const named = await host(root, {}, "update", "acme/hello-world", "--check")
    expect(named.code).toBe(1)
    expect(named.stderr).toBe(`error: update: acme/hello-world: the registry ${registry.url} has no such extension\n`)
  })

  it("says so when nothing is installed from the registry", async () => {
    const registry = fileRegistry([["acme/hello-world"]])
    const root = temp("host-root-")
    writeConfig(root, `registry_url: ${registry.url}\n`)
    expect((await host(root, {}, "add", fixture("extensions", "hello-world"))).code).toBe(0)
    expect((await host(root, {}, "update")).stdout).toBe("No extensions are installed from the registry.\n")
    expect((await host(root, {}, "update", "--check")).stdout).toBe("No extensions are installed from the registry.\n")
    expect(JSON.parse((await host(root, {}, "update", "--json")).stdout)).toEqual([])
  })
})
