import Database from "better-sqlite3"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixture, runHost, tempDir } from "../support/cli.js"
import { inspectDatabase, writeExtension } from "../support/extensions.js"
import { unreachableRegistryUrl } from "../registry/helpers.js"
import { install, request, type RunningServer, startServer, writePanelConfig } from "./helpers.js"

// Each kind of operation failure over HTTP: its own status and code, never a 422 for everything
// (the CLI side is test/lifecycle/failures.test.ts).

const root = tempDir("host-failures-")
const work = tempDir("host-failures-work-")
let server: RunningServer
// The configured registry: an address where nothing listens.
let registry: string

const exportArchive = async (folder: string) => {
  const exported = await runHost(["--root", root.path, "export", folder, "--output", `${work.path}/`, "--json"])
  if (exported.code !== 0) throw new Error(exported.stderr)
  return (JSON.parse(exported.stdout) as { archive: string }).archive
}

const upload = (archive: string) => {
  const form = new FormData()
  form.append("archive", new Blob([readFileSync(archive)]), archive.split("/").pop()!)
  return request(`${server.url}/admin/host/api/extensions`, { as: "admin", method: "POST", body: form })
}

beforeAll(async () => {
  writePanelConfig(root.path)
  await install(root.path, fixture("extensions", "hello-world"))
  registry = await unreachableRegistryUrl()
  server = await startServer(root.path, { env: { HOST_REGISTRY_URL: registry } })
})

afterAll(async () => {
  await server?.stop()
  root.cleanup()
  work.cleanup()
})

const installedIds = () => inspectDatabase(root.path).extensions.map((row) => row.extension_id)

describe("operation failures over HTTP, by kind", () => {
  it("a migration that throws is 422 MigrationsFailed", async () => {
    const source = writeExtension(work.path, {
      id: "acme/bad-migration",
      version: "1.0.0",
      migrations: { "001_boom.js": "export const up = () => { throw new Error(\"boom in up\") }\nexport const down = () => {}\n" }
    })
    const answer = await upload(await exportArchive(source))
    expect(answer.status).toBe(422)
    expect(answer.json).toMatchObject({
      errors: [{ code: "MigrationsFailed", status: "422", detail: expect.stringMatching(/running migrations: .*boom in up; nothing was changed$/) }]
    })
    expect(installedIds()).toEqual(["acme/hello-world"])
  })

  it("a registry nothing answers at is 502 SourceUnreachable, and the search says why it has no results", async () => {
    const refused = `cannot fetch ${registry}/registry.json: connect ECONNREFUSED ${new URL(registry).host}`
    const answer = await request(`${server.url}/admin/host/api/registry/install`, { as: "admin", method: "POST", body: { id: "acme/full" } })
    expect(answer.status).toBe(502)
    expect(answer.json).toEqual({
      errors: [{
        code: "SourceUnreachable",
        status: "502",
        detail: `add acme/full failed while resolving acme/full in the registry: ${refused}; nothing was changed`
      }]
    })
    const search = await request(`${server.url}/admin/host/api/registry?q=full`, { as: "admin" })
    expect(search.status).toBe(502)
    expect(search.json).toEqual({ errors: [{ code: "RegistryFetchFailed", status: "502", detail: refused }] })
    expect(installedIds()).toEqual(["acme/hello-world"])
  })

  it("files that cannot be switched in are 500 FilesFailed, saying what failed", async () => {
    const source = writeExtension(work.path, { id: "blocked/thing", version: "1.0.0" })
    const archive = await exportArchive(source)
    mkdirSync(join(root.path, "host", "extensions"), { recursive: true })
    writeFileSync(join(root.path, "host", "extensions", "blocked"), "not a folder")
    const answer = await upload(archive)
    expect(answer.status).toBe(500)
    expect(answer.json).toMatchObject({
      errors: [{ code: "FilesFailed", status: "500", detail: expect.stringMatching(/switching files: .*EEXIST.*; nothing was changed$/) }]
    })
    expect(installedIds()).toEqual(["acme/hello-world"])
  })

  it("a database held by another writer is 503 StoreUnavailable, and the operation works once it is free", async () => {
    const db = new Database(join(root.path, "storage", "host", "host.db"))
    try {
      db.exec("BEGIN IMMEDIATE")
      const answer = await request(`${server.url}/admin/host/api/extensions/acme/hello-world/disable`, { as: "admin", method: "POST" })
      expect(answer.status).toBe(503)
      expect(answer.json).toMatchObject({ errors: [{ code: "StoreUnavailable", status: "503" }] })
    } finally {
      db.exec("ROLLBACK")
      db.close()
    }
    expect(inspectDatabase(root.path).extensions.map((row) => row.enabled)).toEqual([1])
    const again = await request(`${server.url}/admin/host/api/extensions/acme/hello-world/disable`, { as: "admin", method: "POST" })
    expect(again.status).toBe(200)
  })
})
