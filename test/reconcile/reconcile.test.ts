import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "vitest"
import { fixture, runHost, tempDirsPerTest } from "../support/cli.js"
import { sqlMigration, writeExtension } from "../support/extensions.js"
import { currentDatabase, describeDatabases } from "../support/databases.js"
import { until } from "../support/wait.js"

const temp = tempDirsPerTest()
const host = (root: string, args: Array<string>, env: Record<string, string> = {}) => runHost([...args, "--root", root], { env })

/** A panel root with a desired-state file at the default place. */
const panel = (desired: string) => {
  const root = temp("host-root-")
  const file = join(root, "desired-state", "extensions.yaml")
  writeDesired(file, desired)
  return { root, file }
}
const writeDesired = (file: string, desired: string) => {
  mkdirSync(join(file, ".."), { recursive: true })
  writeFileSync(file, desired)
}

const demo = (extra = "") => `host: "1.0"
extensions:
  acme/hello-world:
    source: { path: ${fixture("extensions", "hello-world")} }
  acme/full:
    source: { path: ${fixture("extensions", "full")} }
    settings:
      api_key: "\${FULL_API_KEY}"
      refreshRate: 15
${extra}`

const env = { FULL_API_KEY: "top-secret-value" }

/** Resolves when `file` exists; rejects if `running` ends first (the process never got there). */
const waitForFile = async (file: string, running: Promise<{ code: number; stderr: string }>) => {
  let ended: { code: number; stderr: string } | undefined
  void running.then((result) => {
    ended = result
  })
  await until(() => {
    if (ended !== undefined) throw new Error(`the process ended (${ended.code}) before ${file} appeared: ${ended.stderr}`)
    return existsSync(file)
  }, `${file} to appear`)
}

describeDatabases("host reconcile", () => {
  it("plans, applies in dependency order, then has nothing to do", async () => {
    const { root } = panel(demo())
    const dry = await host(root, ["reconcile", "--dry-run", "--detailed-exitcode"], env)
    expect(dry.code).toBe(2)
    expect(dry.stdout).toBe([
      "+ install acme/hello-world 1.0.0: not installed",
      "+ install acme/full 1.2.0: not installed",
      "~ configure acme/full (api_key, refreshRate): settings differ: api_key, refreshRate",
      "",
      "Plan: 2 to install, 0 to update, 0 to enable, 0 to disable, 1 to configure, 0 to repair, 0 to remove.",
      ""
    ].join("\n"))
    expect((await currentDatabase().inspect(root)).extensions).toEqual([])

    const applied = await host(root, ["reconcile"], env)
    expect(applied.code).toBe(0)
    expect(applied.stdout).toContain("Apply complete: 3 action(s) applied.")
    const db = (await currentDatabase().inspect(root))
    expect(db.extensions.map((e) => e.extension_id)).toEqual(["acme/full", "acme/hello-world"])
    expect(db.settings.map((s) => [s.extension_id, s.key, JSON.parse(s.value)])).toEqual(
      expect.arrayContaining([["acme/full", "api_key", "top-secret-value"], ["acme/full", "refreshRate", 15]])
    )
    const contexts = db.activity.map((a) => JSON.parse(a.context) as { actor: unknown; plan: string })
    expect(contexts.every((c) => JSON.stringify(c.actor) === `{"type":"reconcile"}` && c.plan.startsWith("plan-"))).toBe(true)
    expect(new Set(contexts.map((c) => c.plan)).size).toBe(1)

    const again = await host(root, ["reconcile", "--dry-run", "--detailed-exitcode"], env)
    expect(again.code).toBe(0)
    expect(again.stdout).toBe("No changes. Panel matches desired state.\n")
    const rerun = await host(root, ["reconcile"], env)
    expect(rerun.code).toBe(0)
    expect(rerun.stdout).toBe("No changes. Panel matches desired state.\n")
    expect((await currentDatabase().inspect(root)).activity).toHaveLength(db.activity.length)
  })

  it("a setting once taken from ${ENV} stays hidden in plans after it becomes a literal", async () => {
    const { file, root } = panel(demo("      support_email: \"${SUPPORT_EMAIL}\"\n"))
    const secretEnv = { ...env, SUPPORT_EMAIL: "ops-private@example.com" }
    expect((await host(root, ["reconcile"], secretEnv)).code).toBe(0)
    writeDesired(file, demo("      support_email: help@example.com\n"))
    const planFile = join(root, "rotate.json")
    const planned = await host(root, ["reconcile", "--out", planFile, "--json"], secretEnv)
    expect(planned.code).toBe(0)
    expect(planned.stdout).not.toContain("ops-private")
    expect(readFileSync(planFile, "utf8")).not.toContain("ops-private")
    expect(JSON.parse(planned.stdout).actions[0].settings).toEqual([
      { key: "support_email", from: "(sensitive)", to: "help@example.com", sensitive: false }
    ])
    // Once the literal is applied, it is shown like any other value.
    expect((await host(root, ["reconcile", "--plan", planFile], secretEnv)).code).toBe(0)
    writeDesired(file, demo("      support_email: desk@example.com\n"))
    const next = JSON.parse((await host(root, ["reconcile", "--dry-run", "--json"], secretEnv)).stdout)
    expect(next.actions[0].settings).toEqual([{ key: "support_email", from: "help@example.com", to: "desk@example.com", sensitive: false }])
  })

  it("--json prints exactly the plan object, without secrets", async () => {
    const { root } = panel(demo())
    const run = await host(root, ["reconcile", "--dry-run", "--json"], env)
    expect(run.code).toBe(0)
    const plan = JSON.parse(run.stdout)
    expect(Object.keys(plan)).toEqual(["format", "id", "created_at", "fingerprint", "actions", "summary", "warnings", "protected", "basis"])
    expect(plan.format).toBe(1)
    expect(plan.summary).toEqual({ install: 2, update: 0, enable: 0, disable: 0, configure: 1, repair: 0, remove: 0 })
    expect(plan.actions[1]).toMatchObject({
      type: "install",
      id: "acme/full",
      from: null,
      to: "1.2.0",
      capabilities: { permissions: { added: ["full.manage", "full.view"], removed: [] } }
    })
    expect(plan.actions[1].capabilities.routes.added).toEqual([
      "admin src/routes/admin.ts",
      "api-client src/routes/api-client.ts",
      "web src/routes/web.ts"
    ])
    expect(plan.actions[1].capabilities.slots.added).toEqual(["dashboard.serverrow.limits", "dashboard.widgets", "server.console.sidebar"])
    expect(run.stdout).not.toContain("top-secret-value")
    expect(run.stdout).toContain("${FULL_API_KEY}")
  })

  it("fails the plan before applying anything when a setting is invalid or a variable is missing", async () => {
    const { root } = panel(demo().replace("refreshRate: 15", "refreshRate: soon"))
    const run = await host(root, ["reconcile"], env)
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("extensions.acme/full.settings.refreshRate: must be a number")
    expect((await currentDatabase().inspect(root)).extensions).toEqual([])
    const missing = await host(panel(demo()).root, ["reconcile", "--dry-run"])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("environment variable FULL_API_KEY not set")
  })

  it("saves a plan with --out, applies it with --plan, and refuses it when stale", async () => {
    const { root } = panel(demo())
    const planFile = join(root, "plans", "next.json")
    const saved = await host(root, ["reconcile", "--out", planFile], env)
    expect(saved.code).toBe(0)
    expect(saved.stdout).toContain(`apply it with: host reconcile --plan ${planFile}`)
    expect(readFileSync(planFile, "utf8")).not.toContain("top-secret-value")
    expect((await currentDatabase().inspect(root)).extensions).toEqual([])

    expect((await host(root, ["add", fixture("extensions", "hello-world")])).code).toBe(0)
    for (const extra of ["--dry-run", "--watch"]) {
      const mixed = await host(root, ["reconcile", "--plan", planFile, extra], env)
      expect(mixed.code).toBe(2)
      expect(mixed.stderr).toContain("error: reconcile: --plan applies a saved plan; it does not go with --dry-run, --out or --watch")
    }
    const stale = await host(root, ["reconcile", "--plan", planFile], env)
    expect(stale.code).toBe(1)
    expect(stale.stderr).toContain("is stale, the panel changed since it was made: installed acme/hello-world: now 1.0.0, enabled")

    expect((await host(root, ["remove", "acme/hello-world"])).code).toBe(0)
    const secretChanged = await host(root, ["reconcile", "--plan", planFile], { FULL_API_KEY: "another" })
    expect(secretChanged.code).toBe(1)
    expect(secretChanged.stderr).toContain("settings of acme/full: was ")

    const applied = await host(root, ["reconcile", "--plan", planFile], env)
    expect(applied.code).toBe(0)
    expect((await currentDatabase().inspect(root)).extensions).toHaveLength(2)
  })

  it("repairs modified files, toggles state, removes absent ones and prunes with protection", async () => {
    const { root, file } = panel(demo())
    await host(root, ["reconcile"], env)
    appendFileSync(join(root, "host", "extensions", "acme", "hello-world", "extension.yaml"), "# tampered\n")
    const repair = await host(root, ["reconcile"], env)
    expect(repair.stdout).toContain("! repair acme/hello-world 1.0.0: the installed files differ from checksums.json")
    expect(JSON.parse((await host(root, ["status", "--json"])).stdout).drift.modified).toEqual([])

    writeDesired(file, demo().replace("refreshRate: 15", "refreshRate: 15\n    enabled: false\n    protect: true"))
    // Through a saved plan: protection is remembered when the plan file is applied, too.
    const planFile = join(root, "protect.json")
    const disable = await host(root, ["reconcile", "--out", planFile], env)
    expect(disable.stdout).toContain("~ disable acme/full: enabled, desired disabled")
    expect(JSON.parse(readFileSync(planFile, "utf8")).protected).toEqual(["acme/full"])
    expect((await host(root, ["reconcile", "--plan", planFile], env)).code).toBe(0)
    expect((await currentDatabase().inspect(root)).extensions.find((e) => e.extension_id === "acme/full")?.enabled).toBe(0)

    writeDesired(file, `host: "1.0"\nextensions:\n  acme/hello-world:\n    source: { path: ${fixture("extensions", "hello-world")} }\n`)
    const warned = await host(root, ["reconcile", "--dry-run"], env)
    expect(warned.stdout).toContain("warning: acme/full is installed but not in the desired state (prune would remove it)")
    const protectedPrune = await host(root, ["reconcile", "--prune"], env)
    expect(protectedPrune.code).toBe(1)
    expect(protectedPrune.stderr).toContain("acme/full is protected; pruning it needs --allow-destroy")
    const pruned = await host(root, ["reconcile", "--prune", "--allow-destroy"], env)
    expect(pruned.code).toBe(0)
    expect(pruned.stdout).toContain("- remove acme/full 1.2.0: not in the desired state (prune)")

    writeDesired(file, `host: "1.0"\nextensions:\n  acme/hello-world: absent\n`)
    expect((await host(root, ["reconcile"], env)).stdout).toContain("- remove acme/hello-world 1.0.0: marked absent in the desired state")
    expect((await currentDatabase().inspect(root)).extensions).toEqual([])
  })

  it("converges when dependencies change with their dependents, and refuses an end state that breaks one", async () => {
    const src = temp("host-src-")
    const base = (version: string) => writeExtension(src, { id: "acme/base", version })
    const app = (version: string, dependencies?: Record<string, string>) =>
      writeExtension(src, { id: "acme/app", version, ...(dependencies === undefined ? {} : { dependencies }) })
    const both = (baseSource: string | null, appSource: string) =>
      `host: "1.0"\nextensions:\n  acme/base: ${baseSource === null ? "absent" : `{ source: { path: ${baseSource} } }`}\n  acme/app:\n    source: { path: ${appSource} }\n`
    const { file, root } = panel(both(base("1.0.0"), app("1.0.0", { "acme/base": "^1" })))
    expect((await host(root, ["reconcile"])).code).toBe(0)

    // Both sides of a major bump at once: base 2 breaks app 1, app 3 needs base 2.
    writeDesired(file, both(base("2.0.0"), app("3.0.0", { "acme/base": "^2" })))
    const bumped = await host(root, ["reconcile"])
    expect(bumped.stderr).not.toContain("error")
    expect(bumped.code).toBe(0)
    expect((await currentDatabase().inspect(root)).extensions.map((e) => [e.extension_id, e.version])).toEqual([["acme/app", "3.0.0"], ["acme/base", "2.0.0"]])
    expect((await host(root, ["reconcile", "--dry-run", "--detailed-exitcode"])).code).toBe(0)

    // app stops needing base, and base goes.
    writeDesired(file, both(null, app("4.0.0")))
    expect((await host(root, ["reconcile"])).code).toBe(0)
    expect((await currentDatabase().inspect(root)).extensions.map((e) => [e.extension_id, e.version])).toEqual([["acme/app", "4.0.0"]])

    // An end state where an enabled extension lacks its dependency fails the plan, before anything runs.
    writeDesired(file, both(null, app("5.0.0", { "acme/base": "^2" })))
    const broken = await host(root, ["reconcile"])
    expect(broken.code).toBe(1)
    expect(broken.stderr).toContain("acme/app depends on acme/base ^2, which the desired state does not keep installed")
    expect((await currentDatabase().inspect(root)).extensions.map((e) => [e.extension_id, e.version])).toEqual([["acme/app", "4.0.0"]])
  })

  it("stops at a failing action, reports what was and was not applied, and converges once fixed", async () => {
    const src = temp("host-src-")
    const broken = writeExtension(src, {
      id: "acme/middle",
      version: "1.0.0",
      migrations: { "001_fail.sql": sqlMigration("INSERT INTO nowhere VALUES (1);", "SELECT 1;") }
    })
    const desired = `host: "1.0"
extensions:
  acme/hello-world:
    source: { path: ${fixture("extensions", "hello-world")} }
  acme/middle:
    source: { path: ${broken} }
  acme/zeta:
    source: { path: ${writeExtension(src, { id: "acme/zeta", version: "1.0.0" })} }
`
    const { root } = panel(desired)
    const run = await host(root, ["reconcile"])
    expect(run.code).toBe(1)
    expect(run.stdout).toContain("Apply stopped: install acme/middle failed: add acme/middle failed while running migrations")
    expect(run.stderr).toContain("error: reconcile: install acme/middle failed: add acme/middle failed while running migrations")
    expect(run.stdout).toContain("Applied (1):\n  + install acme/hello-world 1.0.0: not installed")
    expect(run.stdout).toContain("Not applied (2):\n  + install acme/middle 1.0.0: not installed\n  + install acme/zeta 1.0.0: not installed")
    expect((await currentDatabase().inspect(root)).extensions.map((e) => e.extension_id)).toEqual(["acme/hello-world"])

    writeFileSync(join(broken, "database", "migrations", "001_fail.sql"), sqlMigration("CREATE TABLE ext_middle (id INTEGER);", "DROP TABLE ext_middle;"))
    const fixed = await host(root, ["reconcile", "--json"])
    expect(fixed.code).toBe(0)
    const result = JSON.parse(fixed.stdout)
    expect(result.apply.applied.map((a: { id: string }) => a.id)).toEqual(["acme/middle", "acme/zeta"])
    expect(result.apply.failed).toBeNull()
    expect((await host(root, ["reconcile", "--dry-run", "--detailed-exitcode"])).code).toBe(0)
  })

  it("holds one lock for the whole run: an add during a reconcile is refused", async () => {
    const src = temp("host-src-")
    const gate = temp("host-gate-")
    // The migration says when it is running (inside) and waits until the test lets it finish (release),
    // so the add below runs while the reconcile surely holds the lock, however slow the machine.
    const slow = writeExtension(src, {
      id: "acme/slow",
      version: "1.0.0",
      migrations: {
        "001_wait.js": `import { existsSync, writeFileSync } from "node:fs"
export const up = async () => {
  writeFileSync(${JSON.stringify(join(gate, "inside"))}, "")
  while (!existsSync(${JSON.stringify(join(gate, "release"))})) await new Promise((resolve) => setTimeout(resolve, 20))
}
export const down = () => {}
`
      }
    })
    const { root } = panel(`host: "1.0"\nextensions:\n  acme/slow:\n    source: { path: ${slow} }\n`)
    await host(root, ["list"])
    const reconcile = host(root, ["reconcile"])
    await waitForFile(join(gate, "inside"), reconcile)
    const add = await host(root, ["add", fixture("extensions", "hello-world")])
    writeFileSync(join(gate, "release"), "")
    expect(add.code).toBe(1)
    expect(add.stderr).toContain("another operation holds the lock: reconcile by reconcile")
    expect((await reconcile).code).toBe(0)
  })

  it("relative source paths are relative to the desired-state file", async () => {
    const { root, file } = panel("")
    const src = join(root, "desired-state", "exts")
    writeExtension(src, { id: "acme/local", version: "1.0.0" })
    writeDesired(file, `host: "1.0"\nextensions:\n  acme/local:\n    source: { path: ./exts/acme-local-1.0.0 }\n`)
    const run = await host(root, ["reconcile"])
    expect(run.code).toBe(0)
    expect((await currentDatabase().inspect(root)).extensions.map((e) => e.extension_id)).toEqual(["acme/local"])
  })

  it("--file with a bad desired state names the problem", async () => {
    const { root } = panel(`host: "1.0"\nextensions:\n  NotAnId: "^1"\n`)
    const run = await host(root, ["reconcile", "--dry-run"])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("extensions.NotAnId")
  })
  it("refuses an id listed twice, naming where, and a key given twice inside one entry", async () => {
    const twice = panel(`host: "1.0"\nextensions:\n  acme/one: "^1"\n  acme/two: "^1"\n  acme/one: absent\n`)
    const run = await host(twice.root, ["reconcile", "--dry-run"])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(`(yaml line 5, column 3): Map keys must be unique: "acme/one" appears more than once`)
    expect(run.stdout).toBe("")
    const inner = panel(`host: "1.0"\nextensions:\n  acme/one:\n    version: "^1"\n    version: "^2"\n`)
    const again = await host(inner.root, ["reconcile", "--dry-run"])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain(`(yaml line 5, column 5): Map keys must be unique: "version" appears more than once`)
  })
})
