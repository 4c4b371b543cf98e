import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { diffCapabilities, noCapabilities } from "../../src/domain/Plan.js"
import { type Plan, type PlanAction, summarize } from "../../src/domain/PlanFormat.js"
import { formatPlanMarkdown, type MarkdownInput } from "../../src/reconcile/PlanRender.js"
import { fixture, runHost, tempDirsPerTest } from "../support/cli.js"
import { currentDatabase, describeDatabases } from "../support/databases.js"

// Golden files for the markdown plan (docs/plan-format.md): one per action type, one with warnings, one
// with blocked items, and the apply outcomes. `UPDATE_GOLDEN=1 npx vitest run test/reconcile/markdown.test.ts`
// rewrites them; review the diff like any other change.

const golden = (name: string, actual: string) => {
  const file = join(import.meta.dirname, "golden", `${name}.md`)
  if (process.env.UPDATE_GOLDEN === "1" || !existsSync(file)) {
    if (process.env.UPDATE_GOLDEN !== "1") throw new Error(`missing golden file ${file}; run with UPDATE_GOLDEN=1 to write it`)
    writeFileSync(file, actual)
  }
  expect(actual).toBe(readFileSync(file, "utf8"))
}

const full = {
  permissions: ["full.manage", "full.view"],
  routes: ["admin src/routes/admin.ts", "api-client src/routes/api-client.ts", "web src/routes/web.ts"],
  slots: ["dashboard.widgets", "server.console.sidebar"],
  migrations: ["2024_01_01_000000_create_ext_full_visits"],
  schedules: ["poll (*/5 * * * *)"],
  settings: ["api_key: string", "refreshRate: number"]
}
const fullNext = {
  ...full,
  permissions: ["full.export", "full.manage", "full.view"],
  migrations: [...full.migrations, "2024_06_01_000000_add_ext_full_visits_source"],
  schedules: ["poll (*/10 * * * *)"]
}
const hello = { ...noCapabilities, slots: ["dashboard.widgets"] }

const plan = (actions: ReadonlyArray<PlanAction>, warnings: ReadonlyArray<string> = []): Plan => ({
  format: 1,
  id: "plan-0b7d1c52-5f0e-4c1e-9a57-2b1f3c0d9e11",
  created_at: "2026-11-22T12:00:00.000Z",
  fingerprint: "3f9a6c2e81d04b7fa1e5c9d2b6f3a8e4c7d1b0a9f2e5d8c1b4a7f0e3d6c9b2a5",
  actions,
  summary: summarize(actions),
  warnings,
  protected: [],
  basis: {}
})

const install: PlanAction = {
  type: "install",
  id: "acme/full",
  from: null,
  to: "1.2.0",
  reason: "not installed",
  capabilities: diffCapabilities(noCapabilities, full),
  source: { type: "path", path: "/srv/gitops/extensions/full" },
  enabled: true
}
const configure: PlanAction = {
  type: "configure",
  id: "acme/full",
  reason: "settings differ: api_key, refreshRate",
  capabilities: diffCapabilities(noCapabilities, noCapabilities),
  settings: [
    { key: "api_key", from: "(sensitive)", to: "${FULL_API_KEY}", sensitive: true },
    { key: "refreshRate", from: 15, to: 30, sensitive: false }
  ]
}

const cases: Record<string, MarkdownInput> = {
  install: { plan: plan([{ ...install, id: "acme/hello-world", to: "1.0.0", capabilities: diffCapabilities(noCapabilities, hello) }, install]) },
  update: {
    plan: plan([{
      type: "update",
      id: "acme/full",
      from: "1.2.0",
      to: "1.3.0",
      reason: "installed 1.2.0 does not satisfy ^1.3",
      capabilities: diffCapabilities(full, fullNext),
      source: { type: "registry", id: "acme/full", version: "1.3.0" }
    }])
  },
  enable: {
    plan: plan([{ type: "enable", id: "acme/full", reason: "disabled, desired enabled", capabilities: diffCapabilities(noCapabilities, full) }])
  },
  disable: {
    plan: plan([{ type: "disable", id: "acme/full", reason: "enabled, desired disabled", capabilities: diffCapabilities(full, noCapabilities) }])
  },
  configure: { plan: plan([configure]) },
  repair: {
    plan: plan([{
      type: "repair",
      id: "acme/hello-world",
      from: "1.0.0",
      to: "1.0.0",
      reason: "the installed files differ from checksums.json",
      capabilities: diffCapabilities(hello, hello),
      source: { type: "path", path: "/srv/gitops/extensions/hello-world" }
    }])
  },
  remove: {
    plan: plan([{
      type: "remove",
      id: "acme/full",
      from: "1.2.0",
      to: null,
      reason: "marked absent in the desired state",
      capabilities: diffCapabilities(full, noCapabilities)
    }])
  },
  "no-changes": { plan: plan([]) },
  warnings: {
    plan: plan([install, configure], [
      "acme/old is installed but not in the desired state (prune would remove it)",
      "acme/<script>alert(1)</script> | not *markdown* is installed but not in the desired state (prune would remove it)"
    ])
  },
  blocked: {
    plan: {
      ...plan([install]),
      blocked: [{ id: "acme/legacy", reason: "requires panel ^1.11 (the target is 2.0.0); no registry version passes" }]
    }
  },
  "apply-complete": { plan: plan([install, configure]), apply: { applied: [install, configure], failed: null, notApplied: [] } },
  "apply-stopped": {
    plan: plan([install, configure]),
    apply: { applied: [], failed: { action: install, error: "migration 2024_01_01_000000_create_ext_full_visits failed: table exists" }, notApplied: [configure] }
  }
}

describe("markdown plans", () => {
  for (const [name, input] of Object.entries(cases)) {
    it(`renders ${name} as its golden file`, () => golden(name, formatPlanMarkdown(input)))
  }

  it("heads every plan with the summary line and gives each action one table row", () => {
    const markdown = formatPlanMarkdown(cases.warnings!)
    expect(markdown.split("\n")[0]).toBe(
      "## Plan: 1 to install, 0 to update, 0 to enable, 0 to disable, 1 to configure, 0 to repair, 0 to remove."
    )
    expect(markdown.split("\n").filter((line) => /^\| `[-+~!]` \|/.test(line))).toHaveLength(2)
    expect(markdown.match(/<details>/g)).toHaveLength(2)
    // Outside input cannot open HTML or break the table.
    expect(markdown).not.toContain("<script>")
    expect(markdown).toContain("&lt;script&gt;")
  })

  it("never holds a substituted secret: sensitive settings show their template", () => {
    const markdown = formatPlanMarkdown(cases.configure!)
    expect(markdown).toContain("+ api_key: \"${FULL_API_KEY}\" (sensitive")
    expect(markdown).toContain("- api_key: \"(sensitive)\"")
  })
})

describeDatabases("host reconcile --format markdown", () => {
  const temp = tempDirsPerTest()
  const env = { FULL_API_KEY: "top-secret-value" }
  const panel = () => {
    const root = temp("host-root-")
    mkdirSync(join(root, "desired-state"))
    writeFileSync(
      join(root, "desired-state", "extensions.yaml"),
      `host: "1.0"\nextensions:\n  acme/hello-world:\n    source: { path: ${fixture("extensions", "hello-world")} }\n  acme/full:\n    source: { path: ${fixture("extensions", "full")} }\n    settings:\n      api_key: "\${FULL_API_KEY}"\n`
    )
    return root
  }

  it("prints the plan as markdown with --dry-run, --out and --detailed-exitcode, then the applied outcome", async () => {
    const root = panel()
    const planFile = join(root, "plan.json")
    const dry = await runHost(["--root", root, "reconcile", "--dry-run", "--format", "markdown", "--detailed-exitcode", "--out", planFile], { env })
    expect(dry.code, dry.stderr).toBe(2)
    expect(dry.stdout.split("\n")[0]).toBe("## Plan: 2 to install, 0 to update, 0 to enable, 0 to disable, 1 to configure, 0 to repair, 0 to remove.")
    expect(dry.stdout).toContain("| `+` | install | `acme/full` | — → 1.2.0 | not installed |")
    expect(dry.stdout).toContain("<details><summary><code>+ install acme/full 1.2.0</code>")
    expect(dry.stdout).toContain("${FULL_API_KEY}")
    expect(dry.stdout + dry.stderr + readFileSync(planFile, "utf8")).not.toContain("top-secret-value")
    expect(dry.stderr).toContain(`apply it with: host reconcile --plan ${planFile}`)
    const saved = JSON.parse(readFileSync(planFile, "utf8")) as { id: string; fingerprint: string; created_at: string }
    expect(dry.stdout).toContain(`<code>${saved.id}</code>`)
    // The real planner's output, with what changes per run (id, fingerprint, time) replaced.
    golden(
      "cli-install-configure",
      dry.stdout.replace(saved.id, "plan-ID").replace(saved.fingerprint.slice(0, 12), "FINGERPRINT").replace(saved.created_at, "TIME")
    )
    expect((await currentDatabase().inspect(root)).extensions).toEqual([])

    const applied = await runHost(["--root", root, "reconcile", "--plan", planFile, "--format", "markdown"], { env })
    expect(applied.code, applied.stderr).toBe(0)
    expect(applied.stdout).toContain("### Apply complete: 3 action(s) applied")
    expect(applied.stdout).not.toContain("top-secret-value")
    const again = await runHost(["--root", root, "reconcile", "--format", "markdown"], { env })
    expect(again.stdout).toBe("## No changes. Panel matches desired state.\n\n### Applied: nothing to do\n\n" + again.stdout.split("\n\n")[2])
  })

  it("says why in markdown when no plan can be made, and nothing is applied", async () => {
    const root = panel()
    const run = await runHost(["--root", root, "reconcile", "--format", "markdown"], { env: {} })
    expect(run.code).toBe(1)
    expect(run.stdout).toBe([
      "## Reconcile failed",
      "",
      "> [!CAUTION]",
      "> **The desired state cannot be planned; nothing was applied.**",
      ">",
      "> - `extensions.acme/full.settings`: environment variable FULL_API_KEY not set",
      ""
    ].join("\n"))
    expect(run.stderr).toContain("error: reconcile: the desired state in")
    expect((await currentDatabase().inspect(root)).extensions).toEqual([])
  })

  it("--json is --format json and refuses another --format", async () => {
    const root = panel()
    const json = await runHost(["--root", root, "reconcile", "--dry-run", "--format", "json"], { env })
    expect(JSON.parse(json.stdout).summary.install).toBe(2)
    const mixed = await runHost(["--root", root, "reconcile", "--dry-run", "--json", "--format", "markdown"], { env })
    expect(mixed.code).toBe(2)
    expect(mixed.stderr).toContain("--json means --format json; it does not go with --format markdown")
    expect(mixed.stdout).toBe("")
  })
})
