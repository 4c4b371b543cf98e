import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "vitest"
import { fixture, runHost, tempDirsPerTest } from "../support/cli.js"
import { currentDatabase, describeDatabases } from "../support/databases.js"
import { writeExtension } from "../support/extensions.js"

// Every install and update keeps the archive it installed in the artifact store, named by the sha256
// its record carries; remove and update drop an artifact no record references any more
// (docs/operations.md "Artifacts").

const temp = tempDirsPerTest()

const host = (root: string, ...args: Array<string>) => runHost([...args, "--root", root])

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

const artifactsFolder = (root: string) => join(root, "storage", "host", "artifacts")

const artifacts = (root: string) =>
  existsSync(artifactsFolder(root)) ? readdirSync(artifactsFolder(root)).filter((name) => name.endsWith(".host")).sort() : []

const recorded = async (root: string) =>
  new Map(
    (await currentDatabase().query<{ extension_id: string; source: string }>(root, "SELECT extension_id, source FROM host_extensions"))
      .map((row) => [row.extension_id, (JSON.parse(row.source) as { sha256: string }).sha256])
  )

/** Each recorded sha256 names a stored artifact whose bytes hash to it. */
const expectRecordsNameTheirArtifacts = async (root: string) => {
  for (const digest of (await recorded(root)).values()) {
    expect(sha(readFileSync(join(artifactsFolder(root), `${digest}.host`)))).toBe(digest)
  }
}

describeDatabases("artifacts of installs", () => {
  it("add, update and remove keep exactly the artifacts the records name", async () => {
    const root = temp("host-root-")
    const src = temp("host-src-")
    expect((await host(root, "add", fixture("extensions", "hello-world"))).code).toBe(0)
    const v1 = writeExtension(src, { id: "acme/notes", version: "1.0.0" })
    const v2 = writeExtension(src, { id: "acme/notes", version: "1.1.0" })
    expect((await host(root, "add", v1)).code).toBe(0)
    await expectRecordsNameTheirArtifacts(root)
    const first = await recorded(root)
    expect(artifacts(root)).toEqual([...first.values()].map((digest) => `${digest}.host`).sort())

    expect((await host(root, "update", "acme/notes", "--source", v2)).code).toBe(0)
    await expectRecordsNameTheirArtifacts(root)
    const second = await recorded(root)
    expect(second.get("acme/notes")).not.toBe(first.get("acme/notes"))
    // The 1.0.0 archive is no longer referenced: gone.
    expect(artifacts(root)).toEqual([...second.values()].map((digest) => `${digest}.host`).sort())

    expect((await host(root, "remove", "acme/notes")).code).toBe(0)
    expect(artifacts(root)).toEqual([`${second.get("acme/hello-world")}.host`])
    expect((await host(root, "remove", "acme/hello-world")).code).toBe(0)
    expect(artifacts(root)).toEqual([])
  })

  it("an archive is kept byte for byte, under the sha256 host export printed, and status counts it", async () => {
    const root = temp("host-root-")
    const out = temp("host-out-")
    const exported = JSON.parse((await runHost(["export", fixture("extensions", "hello-world"), "--output", `${out}/`, "--json"])).stdout) as {
      archive: string
      sha256: string
    }
    expect((await host(root, "add", exported.archive)).code).toBe(0)
    expect((await recorded(root)).get("acme/hello-world")).toBe(exported.sha256)
    expect(readFileSync(join(artifactsFolder(root), `${exported.sha256}.host`)).equals(readFileSync(exported.archive))).toBe(true)
    const status = await host(root, "status", "--json")
    expect(JSON.parse(status.stdout).artifacts).toEqual({ path: artifactsFolder(root), count: 1, bytes: readFileSync(exported.archive).length })
  })

  it("remove keeps an artifact another record still references", async () => {
    const root = temp("host-root-")
    const src = temp("host-src-")
    expect((await host(root, "add", writeExtension(src, { id: "acme/one", version: "1.0.0" }))).code).toBe(0)
    expect((await host(root, "add", writeExtension(src, { id: "acme/two", version: "1.0.0" }))).code).toBe(0)
    const shared = (await recorded(root)).get("acme/one")!
    // Two records naming one artifact (as a rollback to a kept copy can): made here by hand.
    const [row] = await currentDatabase().query<{ source: string }>(root, "SELECT source FROM host_extensions WHERE extension_id = 'acme/two'")
    const source = JSON.stringify({ ...JSON.parse(row!.source), sha256: shared })
    await currentDatabase().query(root, `UPDATE host_extensions SET source = '${source}' WHERE extension_id = 'acme/two'`)

    expect((await host(root, "remove", "acme/one")).code).toBe(0)
    expect(artifacts(root)).toContain(`${shared}.host`)
    expect((await host(root, "remove", "acme/two")).code).toBe(0)
    expect(artifacts(root)).not.toContain(`${shared}.host`)
  })

  it("artifacts:prune drops what no record references (a plan never applied) and keeps the installed ones", async () => {
    const root = temp("host-root-")
    const src = temp("host-src-")
    expect((await host(root, "add", writeExtension(src, { id: "acme/kept", version: "1.0.0" }))).code).toBe(0)
    const kept = (await recorded(root)).get("acme/kept")!
    // An artifact nothing references (what a saved plan that was never applied leaves) and an
    // interrupted put's temporary file, an hour and a half old.
    const orphan = Buffer.from("an archive a plan kept and nobody installed")
    writeFileSync(join(artifactsFolder(root), `${sha(orphan)}.host`), orphan)
    const interrupted = join(artifactsFolder(root), ".put-interrupted")
    writeFileSync(interrupted, "half")
    const old = new Date(Date.now() - 90 * 60 * 1000)
    utimesSync(interrupted, old, old)

    const run = await host(root, "artifacts:prune", "--json")
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({ removed: [{ sha256: sha(orphan), bytes: orphan.length }], bytes: orphan.length, kept: 1, temporary: 1 })
    expect(readdirSync(artifactsFolder(root))).toEqual([`${kept}.host`])
    const again = await host(root, "artifacts:prune")
    expect(again.stdout).toBe("Removed 0 unreferenced artifact(s) (0 bytes); kept 1.\n")
  })
})
