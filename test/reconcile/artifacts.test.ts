import { createHash } from "node:crypto"
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "vitest"
import { entryFor, exportArchives, index, perTestRegistry, writeConfig, writeIndex } from "../registry/helpers.js"
import { fixture, runHost } from "../support/cli.js"
import { currentDatabase, describeDatabases } from "../support/databases.js"

// A reconcile downloads a registry source once per plan, keeps the verified bytes in the artifact store
// and installs exactly those (docs/operations.md "Artifacts"): a registry that serves other bytes between
// plan and apply is either ignored (the plan's bytes are kept) or makes the saved plan stale.

const { temp, serve } = perTestRegistry()

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

const archivePath = "/archives/acme-hello-world-1.0.0.host"

/** A registry over HTTP serving acme/hello-world 1.0.0, and a panel root configured to use it. */
const setup = async () => {
  const registryDir = temp("host-registry-")
  const archives = await exportArchives(registryDir, [{ fixture: "hello-world" }])
  writeIndex(registryDir, index([entryFor(archives, "acme/hello-world")]))
  const served = await serve(registryDir)
  const root = temp("host-root-")
  writeConfig(root, `registry_url: ${served.url}\nregistry_cache_ttl: 0\n`)
  mkdirSync(join(root, "desired-state"))
  writeFileSync(join(root, "desired-state", "extensions.yaml"), `host: "1.0"\nextensions:\n  acme/hello-world: "^1.0"\n`)
  const original = readFileSync(archives.get("acme/hello-world@1.0.0")!.file)
  return { registryDir, served, root, original, host: (...args: Array<string>) => runHost([...args, "--root", root]) }
}

/**
 * The registry now serves other bytes under the same version (rebuilt with a changed manifest comment),
 * with an index listing their sha256, so the download itself passes its checks.
 */
const republish = async (registryDir: string) => {
  const copy = join(temp("host-rebuilt-"), "hello-world")
  cpSync(fixture("extensions", "hello-world"), copy, { recursive: true })
  writeFileSync(join(copy, "extension.yaml"), `${readFileSync(join(copy, "extension.yaml"), "utf8")}# rebuilt\n`)
  const run = await runHost(["export", copy, "--output", join(registryDir, "archives", "acme-hello-world-1.0.0.host"), "--json"])
  expect(run.code).toBe(0)
  const bytes = readFileSync(join(registryDir, "archives", "acme-hello-world-1.0.0.host"))
  const archive = { id: "acme/hello-world", version: "1.0.0", name: "acme-hello-world-1.0.0.host", file: "", sha256: sha(bytes), bytes: bytes.length }
  writeIndex(registryDir, index([entryFor(new Map([["acme/hello-world@1.0.0", archive]]), "acme/hello-world")]))
  return bytes
}

const downloads = (requests: ReadonlyArray<string>) => requests.filter((path) => path === archivePath).length

const recordedSha = async (root: string) => {
  const rows = await currentDatabase().query<{ source: string }>(root, "SELECT source FROM host_extensions WHERE extension_id = 'acme/hello-world'")
  return rows.length === 0 ? undefined : (JSON.parse(rows[0]!.source) as { sha256: string }).sha256
}

const artifactsOf = (root: string) => {
  const folder = join(root, "storage", "host", "artifacts")
  return existsSync(folder) ? readdirSync(folder).filter((name) => name.endsWith(".host")).sort() : []
}

describeDatabases("reconcile installs the artifact its plan verified", () => {
  it("downloads once per plan, keeps the archive and records its sha256", async () => {
    const { served, root, original, host } = await setup()
    const run = await host("reconcile", "--json")
    expect(run.code).toBe(0)
    const plan = JSON.parse(run.stdout)
    expect(plan.actions[0].source).toEqual({
      type: "registry",
      id: "acme/hello-world",
      version: "1.0.0",
      sha256: sha(original),
      url: `${served.url}${archivePath}`
    })
    expect(downloads(served.requests)).toBe(1)
    expect(await recordedSha(root)).toBe(sha(original))
    expect(artifactsOf(root)).toEqual([`${sha(original)}.host`])
    expect(readFileSync(join(root, "storage", "host", "artifacts", `${sha(original)}.host`)).equals(original)).toBe(true)
    // In sync: nothing to download at all.
    expect((await host("reconcile", "--dry-run", "--detailed-exitcode")).code).toBe(0)
    expect(downloads(served.requests)).toBe(1)
  })

  it("a saved plan installs the bytes it verified even when the registry serves other bytes since", async () => {
    const { registryDir, served, root, original, host } = await setup()
    const planFile = join(root, "plan.json")
    expect((await host("reconcile", "--out", planFile)).code).toBe(0)
    expect(downloads(served.requests)).toBe(1)
    const rebuilt = await republish(registryDir)
    expect(sha(rebuilt)).not.toBe(sha(original))

    const applied = await host("reconcile", "--plan", planFile)
    expect(applied.code).toBe(0)
    expect(applied.stdout).toContain("Apply complete: 1 action(s) applied.")
    // No second download: the plan's artifact came from the store.
    expect(downloads(served.requests)).toBe(1)
    expect(await recordedSha(root)).toBe(sha(original))
    const installed = readFileSync(join(root, "host", "extensions", "acme", "hello-world", "extension.yaml"), "utf8")
    expect(installed).not.toContain("# rebuilt")
  })

  it("a saved plan whose artifact is gone is refused as stale when the registry's bytes changed; nothing is installed", async () => {
    const { registryDir, served, root, original, host } = await setup()
    const planFile = join(root, "plan.json")
    expect((await host("reconcile", "--out", planFile)).code).toBe(0)
    const rebuilt = await republish(registryDir)
    rmSync(join(root, "storage", "host", "artifacts", `${sha(original)}.host`))

    const refused = await host("reconcile", "--plan", planFile)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("is stale")
    // Whether the index was read again or not, the other bytes are named and refused.
    expect(refused.stderr).toContain(`source acme/hello-world: was archive sha256 ${sha(original)}, now `)
    expect(refused.stderr).toContain(sha(rebuilt))
    expect(downloads(served.requests)).toBe(2)
    expect(await recordedSha(root)).toBeUndefined()
    expect(existsSync(join(root, "host", "extensions", "acme", "hello-world"))).toBe(false)
  })

  it("an archive source is kept too, and its record names that artifact", async () => {
    const { root, host } = await setup()
    const exported = JSON.parse((await runHost(["export", fixture("extensions", "hello-world"), "--output", `${temp("host-out-")}/`, "--json"])).stdout) as {
      archive: string
      sha256: string
    }
    writeFileSync(join(root, "desired-state", "extensions.yaml"), `host: "1.0"\nextensions:\n  acme/hello-world: { source: { archive: ${exported.archive} } }\n`)
    const run = await host("reconcile", "--json")
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout).actions[0].source).toEqual({ type: "archive", path: exported.archive, sha256: exported.sha256 })
    expect(await recordedSha(root)).toBe(exported.sha256)
    expect(artifactsOf(root)).toEqual([`${exported.sha256}.host`])
    const [row] = await currentDatabase().query<{ source: string }>(root, "SELECT source FROM host_extensions")
    expect(JSON.parse(row!.source)).toEqual({ type: "archive", ref: exported.archive, sha256: exported.sha256 })
  })
})
