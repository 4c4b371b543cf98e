import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { request, startServer, writePanelConfig } from "../http/helpers.js"
import { type BuiltArchive, entryFor, exportArchives, index, writeConfig, writeIndex } from "../registry/helpers.js"
import { runHost, tempDir, tempDirsPerTest } from "../support/cli.js"

// Registry version pinning is one rule (DESIGN.md §23 "One rule in one place", lifecycle/RegistryPin.ts):
// the same update asked through the CLI and through the admin API resolves in the same registry and pins
// the same version. Two registries list acme/hello-world, each with a different newest version; the
// extension was installed from the second, so an update resolves there (docs/registry.md "Several
// registries"). Before, the admin API's update resolved in the first registry that lists the id.

const temp = tempDirsPerTest()
let shared: { readonly path: string; readonly cleanup: () => void }
let archives: ReadonlyMap<string, BuiltArchive>

beforeAll(async () => {
  shared = tempDir("host-pinning-")
  archives = await exportArchives(shared.path, [
    { fixture: "hello-world" },
    { fixture: "hello-world", version: "1.1.0" },
    { fixture: "hello-world", version: "1.2.0" }
  ])
})
afterAll(() => shared.cleanup())

/** A registry folder listing hello-world at `versions`, the archives beside its index. */
const registryFolder = (versions: ReadonlyArray<string>) => {
  const dir = temp("host-reg-")
  mkdirSync(join(dir, "archives"), { recursive: true })
  for (const archive of archives.values()) writeFileSync(join(dir, "archives", archive.name), readFileSync(archive.file))
  return writeIndex(dir, index([entryFor(archives, "acme/hello-world", { versions })]))
}

const host = (root: string, ...args: Array<string>) => runHost([...args, "--root", root], { env: { HOST_REGISTRY_URL: undefined } })

/** A panel root with both registries configured and hello-world 1.0.0 installed from the second. */
const installedFromSecond = async (first: string, second: string) => {
  const root = temp("host-root-")
  writeConfig(root, `registries:\n  - { name: first, url: "${first}" }\n  - { name: second, url: "${second}" }\n`)
  writePanelConfig(root)
  const add = await host(root, "add", "acme/hello-world@1.0.0", "--registry", "second")
  expect(add.code, add.stderr).toBe(0)
  return root
}

const installedSource = async (root: string) => {
  const [listed] = JSON.parse((await host(root, "list", "--json")).stdout)
  return { version: listed.version, registry: listed.source.registry }
}

it("an update asked through the CLI and through the admin API pins the same version from the same registry", async () => {
  const first = registryFolder(["1.0.0", "1.1.0"])
  const second = registryFolder(["1.0.0", "1.2.0"])
  const viaCli = await installedFromSecond(first, second)
  const viaAdmin = await installedFromSecond(first, second)
  expect(await installedSource(viaCli)).toEqual({ version: "1.0.0", registry: "second" })

  const cli = await host(viaCli, "update", "acme/hello-world")
  expect(cli.code, cli.stderr).toBe(0)

  const server = await startServer(viaAdmin)
  try {
    const answer = await request(`${server.url}/admin/host/api/extensions/acme/hello-world/update`, { as: "admin", method: "POST", body: {} })
    expect(answer.status, answer.text).toBe(200)
    expect(answer.json).toMatchObject({ data: { action: "updated", fromVersion: "1.0.0", version: "1.2.0" } })
  } finally {
    await server.stop()
  }

  expect(await installedSource(viaCli)).toEqual({ version: "1.2.0", registry: "second" })
  expect(await installedSource(viaAdmin)).toEqual(await installedSource(viaCli))
})
