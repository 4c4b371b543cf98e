import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { install, request, type RunningServer, startServer, writePanelConfig } from "../http/helpers.js"
import { fixture, runHost, tempDirsPerTest } from "../support/cli.js"
import { writeExtension } from "../support/extensions.js"

// host reconcile --adopt (docs/admin.md): the desired-state file rewritten to describe the panel as it is,
// comments and layout kept, ${VAR} templates kept, and the next plan empty.

const temp = tempDirsPerTest()
const host = (root: string, args: Array<string>, env: Record<string, string> = {}) => runHost([...args, "--root", root], { env })
let server: RunningServer | undefined

afterEach(async () => {
  await server?.stop()
  server = undefined
})

const desired = `# The panel's extensions, reviewed in pull requests.
host: "1.0"
extensions:
  # Greets people.
  acme/hello-world:
    source: { path: ${fixture("extensions", "hello-world")} } # local checkout
  acme/full:
    source: { path: ${fixture("extensions", "full")} }
    settings:
      api_key: "\${FULL_API_KEY}" # from the CI secret store
      refreshRate: 15
`
const env = { FULL_API_KEY: "top-secret-value" }

describe("host reconcile --adopt", () => {
  it("adopts a UI toggle, a UI settings change and a hand-added extension, keeping comments; the next plan is empty", async () => {
    const root = temp("host-adopt-")
    writePanelConfig(root)
    const file = join(root, "desired-state", "extensions.yaml")
    mkdirSync(join(root, "desired-state"), { recursive: true })
    writeFileSync(file, desired)
    expect((await host(root, ["reconcile"], env)).code).toBe(0)

    // Changes made outside the file: through the admin API, and a `host add` by hand.
    server = await startServer(root, { env })
    const api = (path: string) => `${server!.url}/admin/host/api${path}`
    expect((await request(api("/extensions/acme/hello-world/disable"), { as: "admin", method: "POST", body: {} })).status).toBe(409)
    expect((await request(api("/extensions/acme/full/disable"), { as: "admin", method: "POST", body: {} })).status).toBe(200)
    const saved = await request(api("/extensions/acme/full/settings"), {
      as: "admin",
      method: "PUT",
      body: { refreshRate: 60, mode: "detailed" }
    })
    expect(saved.status).toBe(200)
    await server.stop()
    server = undefined
    const extra = writeExtension(temp("host-adopt-src-"), { id: "acme/extra", version: "2.1.0" })
    await install(root, extra)

    const drift = await host(root, ["reconcile", "--dry-run"], env)
    expect(drift.stdout).toContain("~ enable acme/full")
    expect(drift.stdout).toContain("acme/extra is installed but not in the desired state")

    // --dry-run shows the diff and writes nothing.
    const preview = await host(root, ["reconcile", "--adopt", "--dry-run"], env)
    expect(preview.code).toBe(0)
    expect(preview.stdout).toContain(`--- ${file}`)
    expect(preview.stdout).toContain("+    enabled: false")
    expect(preview.stdout).toContain("Would write")
    expect(readFileSync(file, "utf8")).toBe(desired)

    const adopted = await host(root, ["reconcile", "--adopt"], env)
    expect(adopted.code).toBe(0)
    expect(adopted.stdout).toContain("-      refreshRate: 15")
    expect(adopted.stdout).toContain("+      refreshRate: 60")
    expect(adopted.stdout).toContain(`Adopted: wrote ${file}.`)
    // The secret typed in the UI is never written; the template stays.
    expect(adopted.stderr).toBe("")
    const text = readFileSync(file, "utf8")
    expect(text).not.toContain("typed-in-the-ui")
    expect(text).not.toContain("top-secret-value")
    expect(text).toContain(`api_key: "\${FULL_API_KEY}" # from the CI secret store`)
    for (const comment of ["# The panel's extensions, reviewed in pull requests.", "# Greets people.", "# local checkout"]) {
      expect(text).toContain(comment)
    }
    expect(text).toContain("enabled: false")
    expect(text).toContain("mode: detailed")
    expect(text).toMatch(/acme\/extra:\n\s+source:\n\s+path: \S+acme-extra-2\.1\.0/)

    const after = await host(root, ["reconcile", "--dry-run", "--detailed-exitcode"], env)
    expect(after.stdout).toBe("No changes. Panel matches desired state.\n")
    expect(after.code).toBe(0)

    // Adopting again changes nothing.
    const again = await host(root, ["reconcile", "--adopt", "--json"], env)
    expect(again.code).toBe(0)
    expect(JSON.parse(again.stdout)).toMatchObject({ changed: false, written: false, diff: "" })
  }, 90_000)

  it("marks an extension removed by hand absent, and names what it cannot describe", async () => {
    const root = temp("host-adopt-")
    const file = join(root, "desired-state", "extensions.yaml")
    mkdirSync(join(root, "desired-state"), { recursive: true })
    writeFileSync(file, `host: "1.0"\nextensions:\n  acme/hello-world:\n    source: { path: ${fixture("extensions", "hello-world")} } # keep me\n`)
    expect((await host(root, ["reconcile"])).code).toBe(0)
    expect((await host(root, ["remove", "acme/hello-world"])).code).toBe(0)
    const adopted = await host(root, ["reconcile", "--adopt"])
    expect(adopted.code).toBe(0)
    expect(readFileSync(file, "utf8")).toBe(`host: "1.0"\nextensions:\n  acme/hello-world: absent # keep me\n`)
    expect((await host(root, ["reconcile", "--dry-run"])).stdout).toBe("No changes. Panel matches desired state.\n")
  }, 60_000)

  it("refuses a desired-state file that does not decode, naming the problem, and writes nothing", async () => {
    const root = temp("host-adopt-")
    const file = join(root, "desired-state", "extensions.yaml")
    mkdirSync(join(root, "desired-state"), { recursive: true })
    writeFileSync(file, `host: "2.0"\nextensions: {}\n`)
    const adopted = await host(root, ["reconcile", "--adopt"])
    expect(adopted.code).toBe(1)
    expect(adopted.stderr).toContain("unsupported desired-state version")
    expect(readFileSync(file, "utf8")).toBe(`host: "2.0"\nextensions: {}\n`)
  }, 30_000)
})
