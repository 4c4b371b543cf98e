import { Either } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { DesiredExtension, DesiredState } from "../../src/domain/DesiredState.js"
import { type ActualExtension, type Candidate, noCapabilities, planActions, type PlanOptions } from "../../src/domain/Plan.js"
import { basisChanges, type Capabilities, type PlanAction, summarize } from "../../src/domain/PlanFormat.js"
import { formatPlan } from "../../src/reconcile/PlanRender.js"
import { normalizeSettings } from "../../src/domain/Settings.js"

const fields = normalizeSettings({
  api_key: { type: "string", input: "password" },
  limit: { type: "number", default: 5 },
  region: { options: ["eu", "us"] },
  webhook: { type: "string", input: "url" }
}).fields

const caps = (overrides: Partial<Capabilities> = {}): Capabilities => ({ ...noCapabilities, ...overrides })

const candidate = (id: string, version: string, overrides: Partial<Candidate> = {}): Candidate => ({
  id,
  version,
  dependencies: {},
  fields,
  capabilities: caps({ permissions: [`${id.split("/")[1]}.view`] }),
  digest: `digest-${id}-${version}`,
  source: { type: "path", path: `/src/${id}` },
  ...overrides
})

const installed = (id: string, version: string, overrides: Partial<ActualExtension> = {}): ActualExtension => ({
  id,
  version,
  enabled: true,
  dependencies: {},
  settings: {},
  fields,
  capabilities: caps({ permissions: [`${id.split("/")[1]}.view`] }),
  integrity: "intact",
  digest: `digest-${id}-${version}`,
  protected: false,
  sensitiveKeys: [],
  ...overrides
})

const present = (id: string, overrides: Partial<Extract<DesiredExtension, { _tag: "Present" }>> = {}): DesiredExtension => ({
  _tag: "Present",
  id,
  version: undefined,
  source: { _tag: "Path", path: `/src/${id}` },
  enabled: true,
  settings: undefined,
  protect: false,
  ...overrides
})

const options: PlanOptions = { prune: false, allowDestroy: false, env: { API_KEY: "s3cret" } }

const plan = (
  extensions: ReadonlyArray<DesiredExtension>,
  actual: ReadonlyArray<ActualExtension>,
  candidates: ReadonlyArray<Candidate>,
  overrides: Partial<PlanOptions> & { prune?: boolean } = {}
) =>
  planActions(
    { prune: overrides.prune ?? false, extensions },
    new Map(actual.map((a) => [a.id, a])),
    new Map(candidates.map((c) => [c.id, c])),
    { ...options, ...overrides }
  )

const actionsOf = (result: ReturnType<typeof plan>) => Either.getOrThrow(result).actions.map((a) => [a.type, a.id, a.from ?? null, a.to ?? null])

describe("planActions", () => {
  it.each<[string, ReadonlyArray<DesiredExtension>, ReadonlyArray<ActualExtension>, ReadonlyArray<Candidate>, Array<Array<unknown>>]>([
    ["install", [present("acme/a")], [], [candidate("acme/a", "1.0.0")], [["install", "acme/a", null, "1.0.0"]]],
    ["in sync", [present("acme/a")], [installed("acme/a", "1.0.0")], [candidate("acme/a", "1.0.0")], []],
    ["update", [present("acme/a")], [installed("acme/a", "1.0.0")], [candidate("acme/a", "1.1.0")], [["update", "acme/a", "1.0.0", "1.1.0"]]],
    [
      "same version, other files",
      [present("acme/a")],
      [installed("acme/a", "1.0.0")],
      [candidate("acme/a", "1.0.0", { digest: "changed" })],
      [["update", "acme/a", "1.0.0", "1.0.0"]]
    ],
    ["repair modified files", [present("acme/a")], [installed("acme/a", "1.0.0", { integrity: "modified" })], [candidate("acme/a", "1.0.0")], [["repair", "acme/a", "1.0.0", "1.0.0"]]],
    ["repair missing files", [present("acme/a")], [installed("acme/a", "1.0.0", { integrity: "missing" })], [candidate("acme/a", "1.0.0")], [["repair", "acme/a", "1.0.0", "1.0.0"]]],
    ["enable", [present("acme/a")], [installed("acme/a", "1.0.0", { enabled: false })], [candidate("acme/a", "1.0.0")], [["enable", "acme/a", null, null]]],
    ["disable", [present("acme/a", { enabled: false })], [installed("acme/a", "1.0.0")], [candidate("acme/a", "1.0.0")], [["disable", "acme/a", null, null]]],
    ["remove absent", [{ _tag: "Absent", id: "acme/a" }], [installed("acme/a", "1.0.0")], [], [["remove", "acme/a", "1.0.0", null]]],
    ["absent and not installed", [{ _tag: "Absent", id: "acme/a" }], [], [], []],
    [
      "registry range still satisfied: no update",
      [present("acme/a", { version: "^1.0", source: { _tag: "Registry" } })],
      [installed("acme/a", "1.0.0")],
      [candidate("acme/a", "1.4.0", { digest: null, source: { type: "registry", id: "acme/a", version: "1.4.0" } })],
      []
    ],
    [
      "registry range no longer satisfied: update",
      [present("acme/a", { version: "^2.0", source: { _tag: "Registry" } })],
      [installed("acme/a", "1.0.0")],
      [candidate("acme/a", "2.1.0", { digest: null, source: { type: "registry", id: "acme/a", version: "2.1.0" } })],
      [["update", "acme/a", "1.0.0", "2.1.0"]]
    ]
  ])("%s", (_, desired, actual, candidates, expected) => {
    expect(actionsOf(plan(desired, actual, candidates))).toEqual(expected)
  })

  it("installs disabled when desired so, and configures after installing", () => {
    const result = Either.getOrThrow(plan([present("acme/a", { enabled: false, settings: { limit: 9 } })], [], [candidate("acme/a", "1.0.0")]))
    expect(result.actions.map((a) => [a.type, a.enabled ?? null])).toEqual([["install", false], ["configure", null]])
    expect(result.actions[1]!.settings).toEqual([{ key: "limit", from: null, to: 9, sensitive: false }])
  })

  it("carries the capability diff of an update", () => {
    const result = Either.getOrThrow(plan(
      [present("acme/a")],
      [installed("acme/a", "1.0.0", { capabilities: caps({ permissions: ["a.view"], routes: ["web src/routes/web.ts"] }) })],
      [candidate("acme/a", "2.0.0", { capabilities: caps({ permissions: ["a.view", "a.manage"], migrations: ["002_x"], settings: ["limit: number"] }) })]
    ))
    expect(result.actions[0]!.capabilities).toEqual({
      permissions: { added: ["a.manage"], removed: [] },
      routes: { added: [], removed: ["web src/routes/web.ts"] },
      slots: { added: [], removed: [] },
      migrations: { added: ["002_x"], removed: [] },
      schedules: { added: [], removed: [] },
      settings: { added: ["limit: number"], removed: [] }
    })
  })

  it("configures only changed keys and never shows secrets", () => {
    const result = Either.getOrThrow(plan(
      [present("acme/a", { settings: { api_key: "${API_KEY}", limit: 5, region: "us" } })],
      [installed("acme/a", "1.0.0", { settings: { api_key: "old-secret", limit: 5, region: "eu" } })],
      [candidate("acme/a", "1.0.0")]
    ))
    expect(result.actions).toHaveLength(1)
    expect(result.actions[0]!.settings).toEqual([
      { key: "api_key", from: "(sensitive)", to: "${API_KEY}", sensitive: true },
      { key: "region", from: "eu", to: "us", sensitive: false }
    ])
    expect(JSON.stringify(result)).not.toContain("s3cret")
    expect(JSON.stringify(result)).not.toContain("old-secret")
  })

  it("keeps a stored ${ENV} value hidden when the desired value becomes a literal", () => {
    const result = Either.getOrThrow(plan(
      [present("acme/a", { settings: { region: "us" } })],
      [installed("acme/a", "1.0.0", { settings: { region: "sk-live-SUPERSECRET" }, sensitiveKeys: ["region"] })],
      [candidate("acme/a", "1.0.0")]
    ))
    expect(result.actions[0]!.settings).toEqual([{ key: "region", from: "(sensitive)", to: "us", sensitive: false }])
    expect(JSON.stringify(result)).not.toContain("SUPERSECRET")
  })

  it("never quotes a substituted ${ENV} value in a validation problem", () => {
    const problems = Either.getOrThrow(Either.flip(plan(
      [present("acme/a", { settings: { webhook: "${WEBHOOK}" } })],
      [],
      [candidate("acme/a", "1.0.0")],
      { env: { WEBHOOK: "hunter2-token-abc" } }
    )))
    expect(problems).toEqual([{ path: "extensions.acme/a.settings.webhook", message: expect.stringContaining("${WEBHOOK}") }])
    expect(JSON.stringify(problems)).not.toContain("hunter2")
  })

  it.each<[string, ReadonlyArray<DesiredExtension>, ReadonlyArray<ActualExtension>, ReadonlyArray<Candidate>, Partial<PlanOptions>, string, string]>([
    ["an invalid setting", [present("acme/a", { settings: { limit: "lots" } })], [], [candidate("acme/a", "1.0.0")], {}, "extensions.acme/a.settings.limit", "must be a number"],
    ["an unknown setting", [present("acme/a", { settings: { colour: "red" } })], [], [candidate("acme/a", "1.0.0")], {}, "extensions.acme/a.settings.colour", "unknown setting"],
    ["a missing variable", [present("acme/a", { settings: { api_key: "${NOPE}" } })], [], [candidate("acme/a", "1.0.0")], {}, "extensions.acme/a.settings", "NOPE not set"],
    ["a source outside the range", [present("acme/a", { version: "^2.0" })], [], [candidate("acme/a", "1.0.0")], {}, "extensions.acme/a.version", "does not satisfy ^2.0"],
    ["a desired entry without a readable source", [present("acme/a")], [], [], {}, "extensions.acme/a", "no source could be read"],
    ["removing a protected extension", [{ _tag: "Absent", id: "acme/a" }], [installed("acme/a", "1.0.0", { protected: true })], [], {}, "extensions.acme/a", "needs --allow-destroy"],
    ["pruning a protected extension", [], [installed("acme/a", "1.0.0", { protected: true })], [], { prune: true }, "extensions.acme/a", "needs --allow-destroy"],
    [
      "a dependency cycle",
      [present("acme/a"), present("acme/b")],
      [],
      [candidate("acme/a", "1.0.0", { dependencies: { "acme/b": "^1" } }), candidate("acme/b", "1.0.0", { dependencies: { "acme/a": "^1" } })],
      {},
      "extensions",
      "dependency cycle between acme/a, acme/b"
    ]
  ])("refuses %s", (_, desired, actual, candidates, overrides, path, message) => {
    const result = plan(desired, actual, candidates, overrides)
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(result.left).toEqual(expect.arrayContaining([expect.objectContaining({ path, message: expect.stringContaining(message) })]))
    }
  })

  it("refuses a source that holds another extension", () => {
    const result = planActions(
      { prune: false, extensions: [present("acme/a")] },
      new Map(),
      new Map([["acme/a", candidate("acme/b", "1.0.0")]]),
      options
    )
    expect(result).toEqual(Either.left([{ path: "extensions.acme/a.source", message: "the source holds acme/b, not acme/a" }]))
  })

  it("removes a protected extension with --allow-destroy", () => {
    expect(actionsOf(plan([{ _tag: "Absent", id: "acme/a" }], [installed("acme/a", "1.0.0", { protected: true })], [], { allowDestroy: true })))
      .toEqual([["remove", "acme/a", "1.0.0", null]])
  })

  it("warns about unlisted extensions, and prunes them when asked", () => {
    const lenient = Either.getOrThrow(plan([], [installed("acme/a", "1.0.0")], []))
    expect(lenient.actions).toEqual([])
    expect(lenient.warnings).toEqual(["acme/a is installed but not in the desired state (prune would remove it)"])
    expect(actionsOf(plan([], [installed("acme/a", "1.0.0")], [], { prune: true }))).toEqual([["remove", "acme/a", "1.0.0", null]])
  })

  it("orders dependencies first when adding and dependents first when taking away", () => {
    const added = plan(
      [present("acme/app"), present("acme/lib"), present("acme/base")],
      [],
      [
        candidate("acme/app", "1.0.0", { dependencies: { "acme/lib": "^1" } }),
        candidate("acme/lib", "1.0.0", { dependencies: { "acme/base": "^1" } }),
        candidate("acme/base", "1.0.0")
      ]
    )
    expect(actionsOf(added).map(([, id]) => id)).toEqual(["acme/base", "acme/lib", "acme/app"])
    const removed = plan(
      [{ _tag: "Absent", id: "acme/base" }, { _tag: "Absent", id: "acme/lib" }, { _tag: "Absent", id: "acme/app" }],
      [
        installed("acme/app", "1.0.0", { dependencies: { "acme/lib": "^1" } }),
        installed("acme/lib", "1.0.0", { dependencies: { "acme/base": "^1" } }),
        installed("acme/base", "1.0.0")
      ],
      []
    )
    expect(actionsOf(removed).map(([, id]) => id)).toEqual(["acme/app", "acme/lib", "acme/base"])
  })
})

describe("text and staleness", () => {
  it("prints one line per action and the summary", () => {
    const actions: ReadonlyArray<PlanAction> = Either.getOrThrow(plan(
      [present("acme/a"), present("acme/b", { enabled: false }), { _tag: "Absent", id: "acme/c" }],
      [installed("acme/b", "1.0.0"), installed("acme/c", "3.0.0")],
      [candidate("acme/a", "1.0.0"), candidate("acme/b", "1.0.0")]
    )).actions
    expect(formatPlan({ actions, summary: summarize(actions), warnings: [] })).toBe([
      "~ disable acme/b: enabled, desired disabled",
      "- remove acme/c 3.0.0: marked absent in the desired state",
      "+ install acme/a 1.0.0: not installed",
      "",
      "Plan: 1 to install, 0 to update, 0 to enable, 1 to disable, 0 to configure, 0 to repair, 1 to remove."
    ].join("\n"))
    expect(formatPlan({ actions: [], summary: summarize([]), warnings: [] })).toBe("No changes. Panel matches desired state.")
  })

  it("names what changed in a basis", () => {
    expect(basisChanges({ "installed acme/a": "1.0.0, enabled", "source acme/b": "x" }, { "installed acme/a": "1.0.0, disabled", "installed acme/c": "2.0.0" }))
      .toEqual([
        "installed acme/a: was 1.0.0, enabled, now 1.0.0, disabled",
        "installed acme/c: now 2.0.0",
        "source acme/b: was x, now gone"
      ])
  })
})

// ---- property: applying a plan converges -----------------------------------------------------------

/** The lifecycle's effect on the planner's view of the panel. */
const simulate = (
  actual: ReadonlyMap<string, ActualExtension>,
  actions: ReadonlyArray<PlanAction>,
  candidates: ReadonlyMap<string, Candidate>,
  env: PlanOptions["env"]
): ReadonlyMap<string, ActualExtension> => {
  const next = new Map(actual)
  for (const action of actions) {
    const current = next.get(action.id)
    const source = candidates.get(action.id)
    switch (action.type) {
      case "install":
      case "update":
      case "repair":
        next.set(action.id, {
          ...installed(action.id, source!.version),
          enabled: action.type === "install" ? action.enabled !== false : current!.enabled,
          settings: current?.settings ?? {},
          digest: source!.digest,
          dependencies: source!.dependencies
        })
        break
      case "enable":
      case "disable":
        next.set(action.id, { ...current!, enabled: action.type === "enable" })
        break
      case "configure": {
        const values = Object.fromEntries((action.settings ?? []).map((change) => [
          change.key,
          typeof change.to === "string" ? change.to.replace(/\$\{(\w+)\}/g, (_, name: string) => env[name]!) : change.to
        ]))
        next.set(action.id, { ...current!, settings: { ...current!.settings, ...values } })
        break
      }
      case "remove":
        next.delete(action.id)
    }
  }
  return next
}

const ids = ["acme/a", "acme/b", "acme/c", "acme/d"]
const versions = ["1.0.0", "1.1.0", "2.0.0"]

const arbitraryWorld = fc.record({
  desired: fc.array(
    fc.record({
      id: fc.constantFrom(...ids),
      absent: fc.boolean(),
      enabled: fc.boolean(),
      version: fc.constantFrom(...versions),
      limit: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
      secret: fc.boolean()
    }),
    { maxLength: 4 }
  ),
  actual: fc.array(
    fc.record({
      id: fc.constantFrom(...ids),
      version: fc.constantFrom(...versions),
      enabled: fc.boolean(),
      integrity: fc.constantFrom("intact", "modified", "missing") as fc.Arbitrary<ActualExtension["integrity"]>,
      limit: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined })
    }),
    { maxLength: 4 }
  ),
  prune: fc.boolean()
})

describe("convergence (property)", () => {
  it("after applying a plan, a new plan is empty; applying twice equals applying once", () => {
    fc.assert(
      fc.property(arbitraryWorld, (world) => {
        const desiredById = new Map(world.desired.map((entry) => [entry.id, entry]))
        const state: DesiredState = {
          prune: world.prune,
          extensions: [...desiredById.values()].map((entry): DesiredExtension =>
            entry.absent
              ? { _tag: "Absent", id: entry.id }
              : present(entry.id, {
                enabled: entry.enabled,
                settings: entry.limit === undefined ? (entry.secret ? { api_key: "${API_KEY}" } : undefined) : { limit: entry.limit }
              })
          )
        }
        const actual = new Map(world.actual.map((entry) => [entry.id, installed(entry.id, entry.version, {
          enabled: entry.enabled,
          integrity: entry.integrity,
          settings: entry.limit === undefined ? {} : { limit: entry.limit }
        })]))
        const candidates = new Map([...desiredById.values()].filter((e) => !e.absent).map((e) => [e.id, candidate(e.id, e.version)]))
        const first = planActions(state, actual, candidates, { ...options, prune: world.prune })
        if (Either.isLeft(first)) return true
        const after = simulate(actual, first.right.actions, candidates, options.env)
        const second = Either.getOrThrow(planActions(state, after, candidates, { ...options, prune: world.prune }))
        expect(second.actions).toEqual([])
        expect(simulate(after, second.actions, candidates, options.env)).toEqual(after)
        return true
      }),
      { numRuns: 500 }
    )
  })
})
