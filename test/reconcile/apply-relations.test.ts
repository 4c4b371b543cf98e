import { Either } from "effect"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import type { DesiredExtension } from "../../src/domain/DesiredState.js"
import { type ActualExtension, type Candidate, noCapabilities, planActions } from "../../src/domain/Plan.js"
import type { PlanAction } from "../../src/domain/PlanFormat.js"
import { executionOrder } from "../../src/reconcile/Applier.js"
import { fixture, runHost, tempDirsPerTest } from "../support/cli.js"
import { inspectDatabase, writeExtension } from "../support/extensions.js"

// What a plan tells its apply beyond the order of its actions (docs/plan-format.md): the extensions each
// step depends on (its health gate waits for theirs, and the apply runs them first) and `force` on exactly
// the steps that pass through a state the lifecycle refuses. Before, every step ran with force and a gate
// ran when the next action named another extension.

const temp = tempDirsPerTest()

const candidate = (id: string, version: string, dependencies: Record<string, string> = {}): Candidate => ({
  id,
  version,
  dependencies,
  fields: [],
  capabilities: noCapabilities,
  digest: `digest-${id}-${version}`,
  source: { type: "path", path: `/src/${id}/${version}` }
})

const installed = (id: string, version: string, dependencies: Record<string, string> = {}, overrides: Partial<ActualExtension> = {}): ActualExtension => ({
  id,
  version,
  enabled: true,
  dependencies,
  settings: {},
  fields: [],
  capabilities: noCapabilities,
  integrity: "intact",
  digest: `digest-${id}-${version}`,
  protected: false,
  sensitiveKeys: [],
  ...overrides
})

const present = (id: string, enabled = true): DesiredExtension => ({
  _tag: "Present",
  id,
  version: undefined,
  source: { _tag: "Path", path: `/src/${id}` },
  enabled,
  settings: undefined,
  protect: false
})

const planned = (extensions: ReadonlyArray<DesiredExtension>, actual: ReadonlyArray<ActualExtension>, candidates: ReadonlyArray<Candidate>) =>
  Either.getOrThrow(planActions(
    { prune: false, extensions },
    new Map(actual.map((a) => [a.id, a])),
    new Map(candidates.map((c) => [c.id, c])),
    { prune: false, allowDestroy: false, env: {} }
  )).actions.map((action) => ({ type: action.type, id: action.id, depends_on: action.depends_on, force: action.force }))

describe("the planner says what each step needs", () => {
  it("force only on the step a major bump of both sides passes through; each step names what it depends on", () => {
    expect(planned(
      [present("acme/base"), present("acme/app")],
      [installed("acme/base", "1.0.0"), installed("acme/app", "1.0.0", { "acme/base": "^1" })],
      [candidate("acme/base", "2.0.0"), candidate("acme/app", "3.0.0", { "acme/base": "^2" })]
    )).toEqual([
      // base 2 leaves the enabled app 1 out of range until app 3 follows it.
      { type: "update", id: "acme/base", depends_on: undefined, force: true },
      { type: "update", id: "acme/app", depends_on: ["acme/base"], force: undefined }
    ])
  })

  it("no force for a plain install, update or ordered removal; force for a reinstall of the same version, a repair and a downgrade", () => {
    expect(planned(
      [present("acme/lib"), present("acme/app"), present("acme/same"), present("acme/fixed"), present("acme/older"), { _tag: "Absent", id: "acme/old" }],
      [
        installed("acme/lib", "1.0.0"),
        installed("acme/same", "1.0.0"),
        installed("acme/fixed", "1.0.0", {}, { integrity: "modified" }),
        installed("acme/older", "2.0.0"),
        installed("acme/old", "1.0.0")
      ],
      [
        candidate("acme/lib", "1.1.0"),
        candidate("acme/app", "1.0.0", { "acme/lib": "^1" }),
        { ...candidate("acme/same", "1.0.0"), digest: "other files" },
        candidate("acme/fixed", "1.0.0"),
        candidate("acme/older", "1.0.0")
      ]
    )).toEqual([
      { type: "remove", id: "acme/old", depends_on: undefined, force: undefined },
      { type: "update", id: "acme/lib", depends_on: undefined, force: undefined },
      { type: "install", id: "acme/app", depends_on: ["acme/lib"], force: undefined },
      { type: "repair", id: "acme/fixed", depends_on: undefined, force: true },
      { type: "update", id: "acme/older", depends_on: undefined, force: true },
      { type: "update", id: "acme/same", depends_on: undefined, force: true }
    ])
  })

  it("force on a removal the plan makes while a dependent that stops needing it is still enabled", () => {
    expect(planned(
      [present("acme/app"), { _tag: "Absent", id: "acme/base" }],
      [installed("acme/base", "1.0.0"), installed("acme/app", "1.0.0", { "acme/base": "^1" })],
      [candidate("acme/app", "2.0.0")]
    )).toEqual([
      { type: "remove", id: "acme/base", depends_on: undefined, force: true },
      { type: "update", id: "acme/app", depends_on: undefined, force: undefined }
    ])
  })

  it("depends_on reaches through an extension the plan leaves alone only to the ones it changes", () => {
    expect(planned(
      [present("acme/base"), present("acme/mid"), present("acme/top")],
      [installed("acme/base", "1.0.0"), installed("acme/mid", "1.0.0", { "acme/base": "^1" })],
      [candidate("acme/base", "1.1.0"), candidate("acme/mid", "1.0.0", { "acme/base": "^1" }), candidate("acme/top", "1.0.0", { "acme/mid": "^1" })]
    )).toEqual([
      { type: "update", id: "acme/base", depends_on: undefined, force: undefined },
      { type: "install", id: "acme/top", depends_on: ["acme/base"], force: undefined }
    ])
  })
})

const action = (type: PlanAction["type"], id: string, depends_on?: ReadonlyArray<string>): PlanAction => ({
  type,
  id,
  reason: "test",
  capabilities: { permissions: { added: [], removed: [] }, routes: { added: [], removed: [] }, slots: { added: [], removed: [] }, migrations: { added: [], removed: [] }, schedules: { added: [], removed: [] }, settings: { added: [], removed: [] } },
  ...(depends_on === undefined ? {} : { depends_on })
})

describe("the apply's order", () => {
  it("keeps the plan's order where the relation allows it, and runs a dependent after every step of what it depends on", () => {
    const steps = [
      action("install", "acme/lib"),
      action("install", "acme/other"),
      action("install", "acme/app", ["acme/lib"]),
      action("configure", "acme/lib"),
      action("enable", "acme/app", ["acme/lib"])
    ]
    expect(executionOrder(steps).map((step) => `${step.type} ${step.id}`)).toEqual([
      "install acme/lib",
      "install acme/other",
      "configure acme/lib",
      "install acme/app",
      "enable acme/app"
    ])
    const inOrder = [action("remove", "acme/gone"), action("install", "acme/lib"), action("install", "acme/app", ["acme/lib"])]
    expect(executionOrder(inOrder)).toEqual(inOrder)
  })
})

describe("applying a saved plan", () => {
  const panel = (desired: string) => {
    const root = temp("host-root-")
    mkdirSync(join(root, "desired-state"))
    const desire = (text: string) => writeFileSync(join(root, "desired-state", "extensions.yaml"), text)
    desire(desired)
    const host = (...args: Array<string>) => runHost([...args, "--root", root])
    return { root, desire, host, planFile: join(root, "plan.json") }
  }

  it("runs a disable without force: a hand-edited plan that disables a dependency of an enabled extension is refused", async () => {
    const src = temp("host-src-")
    const base = writeExtension(src, { id: "acme/base", version: "1.0.0" })
    const app = writeExtension(src, { id: "acme/app", version: "1.0.0", dependencies: { "acme/base": "^1" } })
    const entries = (enabled: boolean) =>
      `host: "1.0"\nextensions:\n  acme/base:\n    source: { path: ${base} }\n    enabled: ${enabled}\n  acme/app:\n    source: { path: ${app} }\n    enabled: ${enabled}\n`
    const { desire, host, planFile, root } = panel(entries(true))
    expect((await host("reconcile")).code).toBe(0)

    desire(entries(false))
    expect((await host("reconcile", "--out", planFile)).code).toBe(0)
    const saved = JSON.parse(readFileSync(planFile, "utf8"))
    expect(saved.actions.map((a: PlanAction) => [a.type, a.id, a.force])).toEqual([["disable", "acme/app", undefined], ["disable", "acme/base", undefined]])
    // The dependent's disable taken out: disabling base now would leave app enabled without it.
    writeFileSync(planFile, JSON.stringify({ ...saved, actions: saved.actions.slice(1) }))
    const run = await host("reconcile", "--plan", planFile, "--json")
    expect(run.code).toBe(1)
    expect(JSON.parse(run.stdout).apply.failed.error).toContain("enabled extensions depend on it: acme/app")
    expect(inspectDatabase(root).extensions).toEqual([
      { extension_id: "acme/app", version: "1.0.0", enabled: 1 },
      { extension_id: "acme/base", version: "1.0.0", enabled: 1 }
    ])
  })

  it("gates an extension once its last step is done and before what depends on it, wherever the plan put them", async () => {
    const gated = fixture("health-gate", "v2")
    const { host, planFile, root } = panel(`host: "1.0"
extensions:
  acme/gated:
    source: { path: ${gated} }
    enabled: false
  acme/after:
    source: { path: ${fixture("health-gate", "after")} }
    enabled: false
  acme/hello-world:
    source: { path: ${fixture("extensions", "hello-world")} }
`)
    expect((await host("reconcile", "--out", planFile)).code).toBe(0)
    const saved = JSON.parse(readFileSync(planFile, "utf8"))
    const [installGated, installAfter, installHello] = saved.actions as Array<PlanAction>
    expect([installGated, installAfter, installHello].map((a) => [a!.type, a!.id, a!.depends_on])).toEqual([
      ["install", "acme/gated", undefined],
      ["install", "acme/after", ["acme/gated"]],
      ["install", "acme/hello-world", undefined]
    ])
    // Edited by hand: acme/gated (whose 2.0.0 fails its critical check) is enabled only after an unrelated
    // install and after its dependent's install. Its gate belongs after its enable, before acme/after's steps.
    const enable = (of: PlanAction, dependsOn?: ReadonlyArray<string>) => ({
      type: "enable",
      id: of.id,
      reason: "enabled by hand",
      capabilities: of.capabilities,
      ...(dependsOn === undefined ? {} : { depends_on: dependsOn })
    })
    writeFileSync(
      planFile,
      JSON.stringify({ ...saved, actions: [installGated, installHello, installAfter, enable(installGated!), enable(installAfter!, ["acme/gated"])] })
    )
    const run = await host("reconcile", "--plan", planFile, "--json")
    expect(run.code).toBe(1)
    const { apply } = JSON.parse(run.stdout)
    expect(apply.failed.action).toMatchObject({ type: "install", id: "acme/gated" })
    expect(apply.failed.error).toBe(
      "health gate failed: critical check storage (Storage reachable) is error: storage driver v2 cannot open the bucket; it was removed"
    )
    expect(apply.applied.map((a: PlanAction) => `${a.type} ${a.id}`)).toEqual(["install acme/hello-world"])
    expect(apply.not_applied.map((a: PlanAction) => `${a.type} ${a.id}`)).toEqual(["enable acme/gated", "install acme/after", "enable acme/after"])
    expect(inspectDatabase(root).extensions).toEqual([{ extension_id: "acme/hello-world", version: "1.0.0", enabled: 1 }])
  })
})
