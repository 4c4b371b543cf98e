import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runHost, tempDir } from "../support/cli.js"
import {
  type BuiltArchive,
  entryFor,
  exportArchives,
  index,
  jsonBody,
  serveRegistry,
  silent,
  status,
  writeConfig,
  perTestRegistry,
  writeIndex
} from "./helpers.js"

/** What the CLI adds under a registry that could not be fetched. */
const fetchHint = "hint: the source could not be fetched; check registry_url and the network, then retry\n"

// registry:sync, registry:status and the index: file:// and HTTP registries, cache and TTL, search,
// and every way fetching the index fails.

const { serve, temp } = perTestRegistry()

let shared: { readonly path: string; readonly cleanup: () => void }
let archives: ReadonlyMap<string, BuiltArchive>
let registryUrl: string

beforeAll(async () => {
  shared = tempDir("host-registry-")
  archives = await exportArchives(shared.path, [{ fixture: "hello-world" }, { fixture: "full" }])
  registryUrl = writeIndex(shared.path, index([entryFor(archives, "acme/hello-world"), entryFor(archives, "acme/full")]))
})
afterAll(() => shared.cleanup())

const host = (root: string, env: Record<string, string>, ...args: Array<string>) => runHost([...args, "--root", root], { env })

const cachePath = (root: string) => join(root, "storage", "host", "registry-cache.json")

describe("registry:sync and registry:status", () => {
  it("reports a missing cache, syncs a file:// registry, keeps a fresh cache unless --force", async () => {
    const root = temp("host-root-")
    const env = { HOST_REGISTRY_URL: registryUrl }
    const before = await host(root, env, "registry:status", "--json")
    expect(before.code).toBe(0)
    expect(JSON.parse(before.stdout)).toEqual({
      path: cachePath(root),
      last_sync: null,
      age_seconds: null,
      ttl_seconds: 3600,
      status: "missing",
      extensions: 0,
      cache_size_bytes: 0,
      registries: [{ name: "default", url: registryUrl, status: "missing", serial: null, expires_at: null, signed: false }]
    })

    const sync = await host(root, env, "registry:sync")
    expect(sync.code).toBe(0)
    expect(sync.stdout).toBe(`Synced 2 extensions from ${registryUrl}.\n`)
    const cache = JSON.parse(readFileSync(cachePath(root), "utf8"))
    expect(Object.keys(cache).sort()).toEqual(["fetched_at", "registry", "registry_url"])
    expect(cache.registry.extensions.map((e: { id: string }) => e.id)).toEqual(["acme/hello-world", "acme/full"])
    const firstSync = cache.fetched_at

    const after = JSON.parse((await host(root, env, "registry:status", "--json")).stdout)
    expect(after).toMatchObject({ path: cachePath(root), last_sync: firstSync, ttl_seconds: 3600, status: "fresh", extensions: 2 })
    expect(after.age_seconds).toBeGreaterThanOrEqual(0)
    expect(after.age_seconds).toBeLessThan(60)
    expect(after.cache_size_bytes).toBe(statSync(cachePath(root)).size)

    const again = await host(root, env, "registry:sync", "--json")
    expect(again.code).toBe(0)
    expect(JSON.parse(again.stdout)).toMatchObject({ source: "cache", fetched_at: firstSync, extensions: 2 })
    expect(JSON.parse(readFileSync(cachePath(root), "utf8")).fetched_at).toBe(firstSync)

    const forced = JSON.parse((await host(root, env, "registry:sync", "--force", "--json")).stdout)
    expect(forced.source).toBe("network")
    expect(Date.parse(forced.fetched_at)).toBeGreaterThan(Date.parse(firstSync))
    // The cache a sync reports is the file it wrote, as registry:status reads it (docs/decisions.md
    // "registry:sync reads what it wrote once").
    const { registries: _registries, ...statusAfterForced } = JSON.parse((await host(root, env, "registry:status", "--json")).stdout)
    expect({ ...forced.cache, age_seconds: 0 }).toEqual({ ...statusAfterForced, age_seconds: 0 })
    expect(forced.cache).toMatchObject({ last_sync: forced.fetched_at, extensions: 2, cache_size_bytes: statSync(cachePath(root)).size })

    const text = await host(root, env, "registry:status")
    expect(text.stdout).toContain(`Registry:   ${registryUrl}`)
    expect(text.stdout).toContain("Status:     fresh")
  })

  it("refetches an expired cache, and a TTL of 0 never expires", async () => {
    const root = temp("host-root-")
    writeConfig(root, `registry_url: ${registryUrl}\nregistry_cache_ttl: 60\n`)
    expect((await host(root, {}, "registry:sync")).code).toBe(0)
    const cache = JSON.parse(readFileSync(cachePath(root), "utf8"))
    cache.fetched_at = "2020-01-01T00:00:00.000Z"
    writeFileSync(cachePath(root), JSON.stringify(cache))
    expect(JSON.parse((await host(root, {}, "registry:status", "--json")).stdout).status).toBe("expired")
    expect(JSON.parse((await host(root, {}, "registry:sync", "--json")).stdout).source).toBe("network")

    writeConfig(root, `registry_url: ${registryUrl}\nregistry_cache_ttl: 0\n`)
    writeFileSync(cachePath(root), JSON.stringify(cache))
    const status = JSON.parse((await host(root, {}, "registry:status", "--json")).stdout)
    expect(status).toMatchObject({ status: "no-expiry", ttl_seconds: 0, last_sync: "2020-01-01T00:00:00.000Z" })
    expect(JSON.parse((await host(root, {}, "registry:sync", "--json")).stdout).source).toBe("cache")
    // host status shows the same cache.
    const overall = JSON.parse((await host(root, {}, "status", "--json")).stdout)
    expect(overall.registry.cache).toMatchObject({ status: "no-expiry", extensions: 2 })
  })

  it("searches id, name, description and tags case-insensitively", async () => {
    const root = temp("host-root-")
    const env = { HOST_REGISTRY_URL: registryUrl }
    const byTag = await host(root, env, "registry:sync", "--search=REFERENCE", "--json")
    expect(byTag.code).toBe(0)
    const document = JSON.parse(byTag.stdout)
    expect(document.search).toBe("REFERENCE")
    expect(document.results.map((r: { id: string }) => r.id)).toEqual(["acme/full"])
    expect(document.results[0]).toMatchObject({ name: "Full Example", latest_version: "1.2.0", versions: ["1.2.0"] })
    const ids = async (query: string) =>
      JSON.parse((await host(root, env, "registry:sync", `--search=${query}`, "--json")).stdout).results.map((r: { id: string }) => r.id)
    expect(await ids("hello")).toEqual(["acme/hello-world"])
    expect(await ids("SAYS HELLO")).toEqual(["acme/hello-world"])
    expect(await ids("acme")).toEqual(["acme/hello-world", "acme/full"])
    expect(await ids("nothing-like-it")).toEqual([])
    const text = await host(root, env, "registry:sync", "--search", "greeting")
    expect(text.stdout).toContain("acme/hello-world  Hello World  1.0.0")
    expect(text.stdout).toContain(`1 match for "greeting".`)
    expect((await host(root, env, "registry:sync", "--search", "zzz")).stdout).toContain(`No extension matches "zzz".`)
  })

  it("syncs over HTTP from a loopback server", async () => {
    const root = temp("host-root-")
    const served = await serve(shared.path)
    const run = await host(root, { HOST_REGISTRY_URL: served.url }, "registry:sync", "--json")
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ registry_url: served.url, source: "network", extensions: 2 })
    expect(served.requests).toEqual(["/registry.json"])
  })

  it("follows redirects and says who it is", async () => {
    const root = temp("host-root-")
    let agent = ""
    const served = await serve(shared.path, {
      "/registry.json": (request, response) => {
        agent = request.headers["user-agent"] ?? ""
        response.writeHead(302, { location: "/mirror/registry.json" })
        response.end()
      },
      "/mirror/registry.json": jsonBody(JSON.parse(readFileSync(join(shared.path, "registry.json"), "utf8")))
    })
    const run = await host(root, { HOST_REGISTRY_URL: served.url }, "registry:sync", "--json")
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout).extensions).toBe(2)
    expect(served.requests).toEqual(["/registry.json", "/mirror/registry.json"])
    expect(agent).toBe("host/1.2.3")
  })

  it("says how to configure a registry when there is none", async () => {
    const root = temp("host-root-")
    const run = await host(root, {}, "registry:sync")
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(
      "error: registry:sync: no registry is configured: set registry_url in config/host.yaml or the HOST_REGISTRY_URL environment variable\n"
    )
    expect(JSON.parse((await host(root, {}, "registry:status", "--json")).stdout).status).toBe("missing")
  })
})

describe("fetching the index fails", () => {
  const failing = async (routes: Parameters<typeof serveRegistry>[1], env: Record<string, string> = {}) => {
    const root = temp("host-root-")
    const served = await serve(shared.path, routes)
    const started = Date.now()
    const run = await host(root, { HOST_REGISTRY_URL: served.url, ...env }, "registry:sync", "--json")
    return { run, root, served, seconds: (Date.now() - started) / 1000 }
  }

  it("404 names the URL and the status; nothing is cached", async () => {
    const { root, run, served } = await failing({ "/registry.json": status(404) })
    expect(run.code).toBe(1)
    expect(JSON.parse(run.stdout).error.message).toBe(`registry:sync: cannot fetch ${served.url}/registry.json: the server answered 404 (not found)`)
    expect(run.stderr).toBe(`error: registry:sync: cannot fetch ${served.url}/registry.json: the server answered 404 (not found)\n` + fetchHint)
    expect(existsSync(cachePath(root))).toBe(false)
  })

  it("500 names the URL and the status", async () => {
    const { run, served } = await failing({ "/registry.json": status(500) })
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(`error: registry:sync: cannot fetch ${served.url}/registry.json: the server answered 500\n` + fetchHint)
  })

  it("a server that never answers is bounded by the connect timeout", async () => {
    const { run, seconds, served } = await failing({ "/registry.json": silent }, { HOST_REGISTRY_CONNECT_TIMEOUT: "1" })
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(`error: registry:sync: cannot fetch ${served.url}/registry.json: the server did not answer within 1 s\n` + fetchHint)
    expect(seconds).toBeLessThan(8)
  })

  it("a body that never ends is bounded by the total timeout", async () => {
    const { run, seconds, served } = await failing({
      "/registry.json": (_request, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.write("{")
      }
    }, { HOST_REGISTRY_TIMEOUT: "1.5" })
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(`error: registry:sync: cannot fetch ${served.url}/registry.json: the transfer did not finish within 1.5 s\n` + fetchHint)
    expect(seconds).toBeLessThan(8)
  })

  it("a closed port is unreachable", async () => {
    const root = temp("host-root-")
    const served = await serveRegistry(shared.path)
    await served.close()
    const run = await host(root, { HOST_REGISTRY_URL: served.url }, "registry:sync")
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(`error: registry:sync: cannot fetch ${served.url}/registry.json: connect ECONNREFUSED ${new URL(served.url).host}\n` + fetchHint)
  })

  it("invalid JSON is named as such", async () => {
    const dir = temp("host-bad-")
    const url = writeIndex(dir, "{ this is not json")
    const run = await host(temp("host-root-"), { HOST_REGISTRY_URL: url }, "registry:sync")
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(new RegExp(`^error: registry:sync: ${url}/registry.json is not a valid registry index: \\(json\\): is not valid JSON: `))
  })

  it("a schema-invalid index names the missing key", async () => {
    const dir = temp("host-bad-")
    const url = writeIndex(dir, { version: "1.0", extensions: [{ id: "acme/hello-world", name: "Hello", versions: ["1.0.0"] }] })
    const run = await host(temp("host-root-"), { HOST_REGISTRY_URL: url }, "registry:sync")
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(
      `error: registry:sync: ${url}/registry.json is not a valid registry index: extensions[0].latest_version: is missing\n`
    )
  })

  it("a missing file:// registry is not found", async () => {
    const dir = temp("host-empty-")
    const run = await host(temp("host-root-"), { HOST_REGISTRY_URL: `file://${dir}` }, "registry:sync")
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(`error: registry:sync: cannot fetch file://${dir}/registry.json: ${dir}/registry.json does not exist\n` + fetchHint)
  })
})

describe("a stale cache stands in for an unreachable registry", () => {
  it("with a warning, over HTTP (server gone) and file:// (index gone); without a cache it fails", async () => {
    const root = temp("host-root-")
    const served = await serveRegistry(shared.path)
    writeConfig(root, `registry_url: ${served.url}\nregistry_cache_ttl: 1\n`)
    expect((await host(root, {}, "registry:sync")).code).toBe(0)
    await served.close()
    const cache = JSON.parse(readFileSync(cachePath(root), "utf8"))
    cache.fetched_at = "2026-01-01T00:00:00.000Z"
    writeFileSync(cachePath(root), JSON.stringify(cache))

    const run = await host(root, {}, "registry:sync", "--json")
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ source: "stale-cache", fetched_at: "2026-01-01T00:00:00.000Z", extensions: 2 })
    expect(run.stderr).toMatch(
      new RegExp(`^warning: cannot fetch ${served.url}/registry.json: .*ECONNREFUSED.*; using the cached index from 2026-01-01T00:00:00.000Z \\(.* old\\)\\n$`)
    )
    // The stale cache is kept as it was.
    expect(JSON.parse(readFileSync(cachePath(root), "utf8")).fetched_at).toBe("2026-01-01T00:00:00.000Z")

    const fresh = temp("host-root-")
    const noCache = await host(fresh, { HOST_REGISTRY_URL: served.url }, "registry:sync")
    expect(noCache.code).toBe(1)
    expect(noCache.stderr).toMatch(/^error: registry:sync: cannot fetch .*ECONNREFUSED/)
  })

  it("an index that became invalid also falls back to the cache", async () => {
    const dir = temp("host-reg-")
    const url = writeIndex(dir, index([entryFor(archives, "acme/hello-world", { archive_url: `file://${shared.path}/archives/{archive}` })]))
    const root = temp("host-root-")
    writeConfig(root, `registry_url: ${url}\nregistry_cache_ttl: 1\n`)
    expect((await host(root, {}, "registry:sync")).code).toBe(0)
    writeFileSync(join(dir, "registry.json"), "[]")
    const run = await host(root, {}, "registry:sync", "--force", "--json")
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout).source).toBe("stale-cache")
    expect(run.stderr).toContain(`warning: ${url}/registry.json is not a valid registry index`)
    renameSync(join(dir, "registry.json"), join(dir, "moved.json"))
    const gone = await host(root, {}, "registry:sync", "--force")
    expect(gone.code).toBe(0)
    expect(gone.stderr).toContain(`warning: cannot fetch ${url}/registry.json: ${dir}/registry.json does not exist; using the cached index`)
  })

  it("an unreadable cache is ignored with a warning", async () => {
    const root = temp("host-root-")
    writeConfig(root, `registry_url: ${registryUrl}\n`)
    const dir = join(root, "storage", "host")
    expect((await host(root, {}, "registry:sync")).code).toBe(0)
    writeFileSync(join(dir, "registry-cache.json"), "{\"fetched_at\": \"yesterday\"}")
    const run = await host(root, {}, "registry:sync", "--json")
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout).source).toBe("network")
    expect(run.stderr).toContain(`warning: the registry cache ${join(dir, "registry-cache.json")} is unreadable and is ignored`)
  })

  it("a fresh cache whose index is broken is ignored with a warning naming the entry, and fetched again", async () => {
    // The cache's index is decoded only when it is used (docs/decisions.md "A registry index is decoded once,
    // quickly"); used, a broken entry is named as before.
    const root = temp("host-root-")
    writeConfig(root, `registry_url: ${registryUrl}\n`)
    expect((await host(root, {}, "registry:sync")).code).toBe(0)
    const cache = JSON.parse(readFileSync(cachePath(root), "utf8"))
    delete cache.registry.extensions[1].latest_version
    writeFileSync(cachePath(root), JSON.stringify(cache))
    const run = await host(root, {}, "registry:sync", "--json")
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ source: "network", extensions: 2 })
    expect(run.stderr).toBe(
      `warning: the registry cache ${cachePath(root)} is unreadable and is ignored: registry.extensions[1].latest_version: is missing\n`
    )
    expect(JSON.parse(readFileSync(cachePath(root), "utf8")).registry.extensions[1].latest_version).toBe("1.2.0")
  })
})
