import * as ed from "@noble/ed25519"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, afterAll, describe, expect, it } from "vitest"
import { runHost, tempDir } from "../support/cli.js"
import { type BuiltArchive, entryFor, exportArchives, index, perTestRegistry, status, writeConfig, writeIndex } from "./helpers.js"

// Several registries and the signed index (docs/registry.md "Several registries", "Trust"): the config's
// refusals, the resolution order without mixing, --registry and `registry:` in the desired state, sync
// over two registries with one failing, each trust refusal leaving the cache as it was, and a keyed
// registry served over loopback HTTP with a redirect, a slow answer and a missing signature.

const { serve, temp } = perTestRegistry()

let shared: { readonly path: string; readonly cleanup: () => void }
let archives: ReadonlyMap<string, BuiltArchive>
let keys: { readonly public_key: string; readonly secret_key: string }

beforeAll(async () => {
  shared = tempDir("host-registries-")
  archives = await exportArchives(shared.path, [{ fixture: "hello-world" }, { fixture: "hello-world", version: "2.0.0" }])
  const keygen = await runHost(["keygen", "--json"])
  keys = JSON.parse(keygen.stdout)
})
afterAll(() => shared.cleanup())

const host = (root: string, ...args: Array<string>) => runHost([...args, "--root", root], { env: { HOST_REGISTRY_URL: undefined } })

/** A registry folder listing hello-world at `versions` (the archives copied beside the index). */
const registryFolder = (versions: ReadonlyArray<string>, extra: Record<string, unknown> = {}): string => {
  const dir = temp("host-reg-")
  mkdirSync(join(dir, "archives"), { recursive: true })
  for (const archive of archives.values()) writeFileSync(join(dir, "archives", archive.name), readFileSync(archive.file))
  writeIndex(dir, { ...index([entryFor(archives, "acme/hello-world", { versions })]), ...extra })
  return dir
}

const fileUrl = (dir: string) => `file://${dir}`

const seed = () => Uint8Array.from(Buffer.from(keys.secret_key.slice(0, 64), "hex"))

/** Writes registry.json (text as given) and its signature by the test key (or `signature` as given). */
const publish = async (dir: string, text: string, signature?: string) => {
  writeFileSync(join(dir, "registry.json"), text)
  const sig = signature ?? Buffer.from(await ed.signAsync(new TextEncoder().encode(text), seed())).toString("hex")
  writeFileSync(join(dir, "registry.json.sig"), `${sig}\n`)
}

const signedIndex = (serial: number, expiresAt: string, versions: ReadonlyArray<string> = ["1.0.0"]) =>
  `${JSON.stringify({ ...index([entryFor(archives, "acme/hello-world", { versions })]), serial, expires_at: expiresAt }, null, 2)}\n`

const future = () => new Date(Date.now() + 86_400_000).toISOString()

const cacheOf = (root: string, name: string) => join(root, "storage", "host", `registry-cache.${name}.json`)

describe("registries in config/host.yaml", () => {
  const refused = async (yaml: string, path: string, message: RegExp) => {
    const root = temp("host-root-")
    writeConfig(root, yaml)
    const run = await host(root, "registry:sync")
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(path)
    expect(run.stderr).toMatch(message)
    expect(existsSync(join(root, "storage"))).toBe(false)
  }

  it("refuses a duplicate name, a bad URL, a bad key, a missing name or url, and default twice, naming the entry and field", async () => {
    await refused("registries:\n  - {name: a, url: file:///x}\n  - {name: a, url: file:///y}\n", "registries[1].name", /"a" is used twice/)
    await refused("registries:\n  - {name: a, url: ftp://x}\n", "registries[0].url", /must be an http\(s\):\/\/ or file:\/\/ URL/)
    await refused("registries:\n  - {name: a, url: file:///x, public_key: abc}\n", "registries[0].public_key", /64 hex characters/)
    await refused("registries:\n  - {url: file:///x}\n", "registries[0].name", /missing/i)
    await refused("registries:\n  - {name: a}\n", "registries[0].url", /missing/i)
    await refused("registries:\n  - {name: Bad Name, url: file:///x}\n", "registries[0].name", /must be a registry name/)
    await refused("registry_url: file:///x\nregistries:\n  - {name: default, url: file:///y}\n", "registries[0].name", /"default" is the name of registry_url/)
  })
})

describe("resolution over several registries", () => {
  it("takes an id from the first registry listing it, never mixes versions, and --registry picks one", async () => {
    const first = registryFolder(["1.0.0"])
    const second = registryFolder(["1.0.0", "2.0.0"])
    const root = temp("host-root-")
    writeConfig(root, `registries:\n  - {name: first, url: ${fileUrl(first)}}\n  - {name: second, url: ${fileUrl(second)}}\n`)

    // 2.0.0 exists only in the second registry, but the first lists the id: no mixing.
    const mixed = await host(root, "add", "acme/hello-world@2.0.0")
    expect(mixed.code).toBe(1)
    expect(mixed.stderr).toContain("version 2.0.0 of acme/hello-world is not in the registry (available: 1.0.0)")

    const unknown = await host(root, "add", "acme/hello-world", "--registry", "third")
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain(`there is no registry named "third" (configured: first, second)`)

    // Installed from the second at 1.0.0; `update` without --registry stays with it and finds 2.0.0.
    const added = await host(root, "add", "acme/hello-world@1.0.0", "--registry", "second", "--json")
    expect(added.code).toBe(0)
    const check = await host(root, "update", "--check", "--json")
    expect(JSON.parse(check.stdout)).toEqual([{ id: "acme/hello-world", current: "1.0.0", available: "2.0.0" }])
    const updated = await host(root, "update", "acme/hello-world", "--json")
    expect(updated.code).toBe(0)
    expect(JSON.parse(updated.stdout)).toMatchObject({ action: "updated", version: "2.0.0" })

    // --registry on update: back to what the first registry offers.
    const back = await host(root, "update", "acme/hello-world@1.0.0", "--registry", "first", "--json")
    expect(back.code).toBe(0)
    expect(JSON.parse(back.stdout)).toMatchObject({ version: "1.0.0" })

    const search = await host(root, "registry:sync", "--search", "hello", "--json")
    expect(JSON.parse(search.stdout).results.map((hit: { id: string; registry: string }) => `${hit.registry} ${hit.id}`)).toEqual([
      "first acme/hello-world",
      "second acme/hello-world"
    ])
  })

  it("carries registry: NAME of the desired state into the plan", async () => {
    const first = registryFolder(["1.0.0"])
    const second = registryFolder(["1.0.0", "2.0.0"])
    const root = temp("host-root-")
    writeConfig(root, `registries:\n  - {name: first, url: ${fileUrl(first)}}\n  - {name: official, url: ${fileUrl(second)}}\n`)
    const desired = join(root, "desired.yaml")
    writeFileSync(desired, `host: "1.0"\nextensions:\n  acme/hello-world:\n    version: "^2.0"\n    registry: official\n`)
    const plan = await host(root, "reconcile", "--file", desired, "--dry-run", "--json")
    expect(plan.code).toBe(0)
    const [action] = JSON.parse(plan.stdout).actions
    expect(action).toMatchObject({ type: "install", id: "acme/hello-world", to: "2.0.0", source: { type: "registry", registry: "official", version: "2.0.0" } })
    const markdown = await host(root, "reconcile", "--file", desired, "--dry-run", "--format", "markdown")
    expect(markdown.stdout).toContain("`registry:official acme/hello-world@2.0.0`")

    writeFileSync(desired, `host: "1.0"\nextensions:\n  acme/hello-world:\n    source: { path: ./x }\n    registry: official\n`)
    const wrong = await host(root, "reconcile", "--file", desired, "--dry-run", "--json")
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toContain("extensions.acme/hello-world.registry")
  })
})

describe("registry:sync over several registries", () => {
  it("syncs them all; one failing fails the command naming it, after saying which were synced, and keeps its cache as it was", async () => {
    const good = registryFolder(["1.0.0"])
    const bad = registryFolder(["1.0.0"])
    const root = temp("host-root-")
    writeConfig(root, `registries:\n  - {name: good, url: ${fileUrl(good)}}\n  - {name: bad, url: ${fileUrl(bad)}}\n`)
    expect((await host(root, "registry:sync")).code).toBe(0)
    const badCache = readFileSync(cacheOf(root, "bad"), "utf8")

    writeIndex(good, index([entryFor(archives, "acme/hello-world", { versions: ["1.0.0", "2.0.0"] })]))
    writeFileSync(join(bad, "registry.json"), "{ not json")
    const sync = await host(root, "registry:sync", "--force")
    expect(sync.code).toBe(1)
    expect(sync.stderr).toContain(`registry "bad": ${fileUrl(bad)}/registry.json is not a valid registry index`)
    // The registry that was synced is said, as when all are: its cache was written.
    expect(sync.stdout).toContain(`good: Synced 1 extension from ${fileUrl(good)}`)
    expect(sync.stdout).not.toContain("bad:")
    // --json is the failure's document alone.
    const syncJson = await host(root, "registry:sync", "--force", "--json")
    expect(syncJson.code).toBe(1)
    expect(JSON.parse(syncJson.stdout).error.code).toBe("RegistryIndexInvalid")
    expect(readFileSync(cacheOf(root, "bad"), "utf8")).toBe(badCache)
    expect(JSON.parse(readFileSync(cacheOf(root, "good"), "utf8")).registry.extensions[0].versions).toEqual(["1.0.0", "2.0.0"])

    const statusJson = JSON.parse((await host(root, "registry:status", "--json")).stdout)
    expect(statusJson.path).toBe(cacheOf(root, "good"))
    expect(statusJson.registries.map((entry: { name: string; status: string }) => `${entry.name}:${entry.status}`)).toEqual(["good:fresh", "bad:fresh"])
    // In text, a row per registry (the first registry's block alone read as the whole status).
    const statusText = (await host(root, "registry:status")).stdout
    expect(statusText).not.toContain("Cache:")
    expect(statusText).toMatch(/^Registry\s+URL\s+Status\s+Last sync\s+Extensions\s+Serial\s+Expires\s+Signed$/m)
    expect(statusText).toMatch(new RegExp(`^good\\s+${fileUrl(good)}\\s+fresh\\s+\\S+\\s+1\\s`, "m"))
    expect(statusText).toMatch(new RegExp(`^bad\\s+${fileUrl(bad)}\\s+fresh\\s+\\S+\\s+1\\s`, "m"))
    // host status shows the first registry.
    const hostStatus = JSON.parse((await host(root, "status", "--json")).stdout)
    expect(hostStatus.registry).toMatchObject({ url: fileUrl(good), cache: { path: cacheOf(root, "good"), status: "fresh" } })
  })
})

describe("a registry with public_key", () => {
  const keyedRoot = (url: string, extra = "") => {
    const root = temp("host-root-")
    writeConfig(root, `registries:\n  - {name: signed, url: ${url}, public_key: ${keys.public_key}}\n${extra}`)
    return root
  }

  it("accepts a signed index, then refuses each bad one by its code and leaves the cache as it was", async () => {
    const dir = registryFolder(["1.0.0"])
    await publish(dir, signedIndex(2, future()))
    const root = keyedRoot(fileUrl(dir))
    const ok = await host(root, "registry:sync", "--json")
    expect(ok.code).toBe(0)
    expect(JSON.parse(ok.stdout).registries[0]).toMatchObject({ name: "signed", serial: 2, signed: true })
    expect(JSON.parse((await host(root, "registry:status", "--json")).stdout).registries[0]).toMatchObject({ serial: 2, signed: true })
    const cache = readFileSync(cacheOf(root, "signed"), "utf8")

    const refusedWith = async (code: string, detail: string) => {
      const run = await host(root, "registry:sync", "--force")
      expect(run.code).toBe(1)
      expect(run.stderr).toContain(`registry "signed": `)
      expect(run.stderr).toContain(code)
      expect(run.stderr).toContain(detail)
      expect(readFileSync(cacheOf(root, "signed"), "utf8")).toBe(cache)
    }

    rmSync(join(dir, "registry.json.sig"))
    await refusedWith("RegistryIndexUnsigned", "has no signature")
    await publish(dir, signedIndex(3, future()), "ab".repeat(64))
    await refusedWith("RegistryIndexSignatureInvalid", "is not a signature of registry.json by the registry's public_key")
    // Signed, then altered after signing.
    await publish(dir, signedIndex(3, future()))
    writeFileSync(join(dir, "registry.json"), signedIndex(4, future()))
    await refusedWith("RegistryIndexSignatureInvalid", "is not a signature of registry.json")
    await publish(dir, signedIndex(1, future()))
    await refusedWith("RegistryIndexRolledBack", "its serial 1 is lower than 2")
    await publish(dir, signedIndex(5, "2020-01-01T00:00:00.000Z"))
    await refusedWith("RegistryIndexExpired", "it expired at 2020-01-01T00:00:00.000Z")
    await publish(dir, "{ signed but not json")
    await refusedWith("registry.json is not a valid registry index", "is not valid JSON")

    // An on-demand fetch (add) refuses the same way; the cache of serial 2 is expired by TTL here.
    const stale = JSON.parse(cache)
    writeFileSync(cacheOf(root, "signed"), JSON.stringify({ ...stale, fetched_at: "2020-01-01T00:00:00.000Z" }))
    await publish(dir, signedIndex(1, future()))
    const add = await host(root, "add", "acme/hello-world")
    expect(add.code).toBe(1)
    expect(add.stderr).toContain("RegistryIndexRolledBack")
  })

  it("refuses an older serial after a higher one was accepted, and accepts the next one", async () => {
    const dir = registryFolder(["1.0.0"])
    await publish(dir, signedIndex(1, future()))
    const root = keyedRoot(fileUrl(dir))
    expect((await host(root, "registry:sync")).code).toBe(0)
    await publish(dir, signedIndex(3, future()))
    expect((await host(root, "registry:sync", "--force")).code).toBe(0)
    await publish(dir, signedIndex(2, future()))
    const rolled = await host(root, "registry:sync", "--force")
    expect(rolled.code).toBe(1)
    expect(rolled.stderr).toContain("its serial 2 is lower than 3")
    // A cache written before it recorded its index's sha256 is read whole, and its serial counts the same.
    const cache = readFileSync(cacheOf(root, "signed"), "utf8")
    const older = cache.replace(/\n {2}"registry_sha256": "[0-9a-f]{64}",/, "")
    expect(older).not.toBe(cache)
    writeFileSync(cacheOf(root, "signed"), older)
    const rolledOlder = await host(root, "registry:sync", "--force")
    expect(rolledOlder.code).toBe(1)
    expect(rolledOlder.stderr).toContain("its serial 2 is lower than 3")
    await publish(dir, signedIndex(4, future(), ["1.0.0", "2.0.0"]))
    const next = await host(root, "registry:sync", "--force", "--json")
    expect(next.code).toBe(0)
    expect(JSON.parse(next.stdout).registries[0].serial).toBe(4)
  })

  it("over loopback HTTP: follows a redirect, names the registry of a slow server, and refuses a 404 signature", async () => {
    const dir = registryFolder(["1.0.0"])
    await publish(dir, signedIndex(1, future()))
    const moved = await serve(dir, {
      "/old/registry.json": (_request, response) => {
        response.writeHead(301, { location: "/registry.json" })
        response.end()
      },
      "/old/registry.json.sig": (_request, response) => {
        response.writeHead(302, { location: "/registry.json.sig" })
        response.end()
      }
    })
    const redirected = await host(keyedRoot(`${moved.url}/old`), "registry:sync", "--json")
    expect(redirected.code).toBe(0)
    expect(JSON.parse(redirected.stdout).registries[0]).toMatchObject({ signed: true, serial: 1 })
    expect(moved.requests).toEqual(expect.arrayContaining(["/old/registry.json", "/registry.json", "/old/registry.json.sig", "/registry.json.sig"]))

    // Answers after 5 s; the connect timeout is 1 s.
    const timers: Array<NodeJS.Timeout> = []
    const slow = await serve(dir, {
      "/registry.json": (_request, response) => {
        timers.push(setTimeout(() => response.writeHead(200).end("{}"), 5000))
      }
    })
    const slowRoot = keyedRoot(slow.url)
    const timedOut = await runHost(["registry:sync", "--root", slowRoot], { env: { HOST_REGISTRY_CONNECT_TIMEOUT: "1", HOST_REGISTRY_URL: undefined } })
    timers.forEach(clearTimeout)
    expect(timedOut.code).toBe(1)
    expect(timedOut.stderr).toContain(`registry "signed": cannot fetch ${slow.url}/registry.json: the server did not answer within 1 s`)

    const noSig = await serve(dir, { "/registry.json.sig": status(404) })
    const keyed = await host(keyedRoot(noSig.url), "registry:sync")
    expect(keyed.code).toBe(1)
    expect(keyed.stderr).toContain(`registry "signed": the index is refused (RegistryIndexUnsigned): ${noSig.url}/registry.json has no signature`)
    const unkeyedRoot = temp("host-root-")
    writeConfig(unkeyedRoot, `registries:\n  - {name: plain, url: ${noSig.url}}\n`)
    const unkeyed = await host(unkeyedRoot, "registry:sync", "--json")
    expect(unkeyed.code).toBe(0)
    expect(JSON.parse(unkeyed.stdout).registries[0]).toMatchObject({ name: "plain", signed: false, serial: 1 })
  })
})
