import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "vitest"
import { entryFor, exportArchives, index, writeIndex } from "../registry/helpers.js"
import { runHost, tempDirsPerTest } from "../support/cli.js"
import { currentDatabase, describeDatabases } from "../support/databases.js"

const temp = tempDirsPerTest()

describeDatabases("reconcile with registry sources", () => {
  it("installs the latest version in range, keeps it while in range (also for a disable or a repair), and moves when the range moves", async () => {
    const registryDir = temp("host-registry-")
    const archives = await exportArchives(registryDir, [{ fixture: "hello-world" }, { fixture: "hello-world", version: "1.1.0" }])
    const url = writeIndex(registryDir, index([entryFor(archives, "acme/hello-world")]))
    const root = temp("host-root-")
    mkdirSync(join(root, "config"))
    writeFileSync(join(root, "config", "host.yaml"), `registry_url: ${url}\n`)
    mkdirSync(join(root, "desired-state"))
    const desired = (range: string) =>
      writeFileSync(join(root, "desired-state", "extensions.yaml"), `host: "1.0"\nextensions:\n  acme/hello-world: "${range}"\n`)
    const host = (...args: Array<string>) => runHost([...args, "--root", root])

    desired("^1.0")
    const first = await host("reconcile", "--json")
    expect(first.code).toBe(0)
    const plan = JSON.parse(first.stdout)
    expect(plan.actions[0]).toMatchObject({ type: "install", to: "1.1.0", source: { type: "registry", id: "acme/hello-world", version: "1.1.0" } })
    expect((await currentDatabase().inspect(root)).extensions).toEqual([{ extension_id: "acme/hello-world", version: "1.1.0", enabled: 1 }])
    expect((await host("reconcile", "--dry-run", "--detailed-exitcode")).code).toBe(0)

    desired("~1.0.0")
    const planFile = join(root, "plan.json")
    const saved = await host("reconcile", "--out", planFile)
    expect(saved.stdout).toContain("~ update acme/hello-world 1.1.0 → 1.0.0: installed 1.1.0 does not satisfy ~1.0.0")
    expect((await host("reconcile", "--plan", planFile)).code).toBe(0)
    expect((await currentDatabase().inspect(root)).extensions).toEqual([{ extension_id: "acme/hello-world", version: "1.0.0", enabled: 1 }])

    // In range, the installed 1.0.0 stays: a settings change or a repair does not move it to 1.1.0.
    writeFileSync(join(root, "desired-state", "extensions.yaml"), `host: "1.0"\nextensions:\n  acme/hello-world:\n    version: "^1.0"\n    enabled: false\n`)
    const toggled = JSON.parse((await host("reconcile", "--json")).stdout)
    expect(toggled.actions.map((action: { type: string }) => action.type)).toEqual(["disable"])
    writeFileSync(join(root, "host", "extensions", "acme", "hello-world", "extension.yaml"), "tampered: true\n")
    const repaired = JSON.parse((await host("reconcile", "--json")).stdout)
    expect(repaired.actions).toMatchObject([{ type: "repair", from: "1.0.0", to: "1.0.0", source: { version: "1.0.0" } }])
    expect((await currentDatabase().inspect(root)).extensions).toEqual([{ extension_id: "acme/hello-world", version: "1.0.0", enabled: 0 }])

    desired("^3.0")
    const none = await host("reconcile", "--dry-run")
    expect(none.code).toBe(1)
    expect(none.stderr).toContain("extensions.acme/hello-world.source")
  })
})
