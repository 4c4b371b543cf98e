import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { diffCapabilities, noCapabilities } from "../../src/domain/Plan.js"
import { ApplyReport, type PlanAction } from "../../src/domain/PlanFormat.js"
import { MigrationsFailed } from "../../src/lifecycle/Errors.js"
import { SourceUnavailable } from "../../src/reconcile/Inputs.js"
import { formatPlanMarkdown } from "../../src/reconcile/PlanRender.js"
import {
  applyReport,
  type ApplyResult,
  HealthGateFailed,
  PlanFileInvalid,
  PlanInvalid,
  SettingsUnavailable,
  StalePlan
} from "../../src/reconcile/Reconciler.js"
import { sensitiveKeysAfter } from "../../src/reconcile/SensitiveKeys.js"

// The apply result keeps each failure's type; what `--json` and the admin API write of it is the report
// of domain/PlanFormat.ts, where a failure is its message (docs/plan-format.md).

const action = (type: PlanAction["type"], id: string, settings?: PlanAction["settings"]): PlanAction => ({
  type,
  id,
  reason: `${type} ${id}`,
  capabilities: diffCapabilities(noCapabilities, noCapabilities),
  ...(settings === undefined ? {} : { settings })
})

const install = action("install", "acme/gated")
const configure = action("configure", "acme/gated")

describe("the apply result", () => {
  it("keeps the typed failure, and its report carries the failure's message in the order the JSON always had", () => {
    const error = new MigrationsFailed({
      operation: "add",
      extensionId: "acme/gated",
      step: "running migrations",
      reason: "MigrationFailed",
      detail: "table exists"
    })
    const result: ApplyResult = { applied: [], failed: { action: install, error }, notApplied: [configure] }
    expect(result.failed?.error._tag).toBe("MigrationsFailed")
    const report = applyReport(result)
    expect(JSON.stringify(report)).toBe(JSON.stringify({
      applied: [],
      failed: { action: install, error: "add acme/gated failed while running migrations: table exists; nothing was changed" },
      not_applied: [configure]
    }))
    // The report is exactly its wire schema: encoding it changes nothing.
    expect(Schema.encodeSync(ApplyReport)(report)).toEqual(report)
    expect(applyReport({ applied: [install], failed: null, notApplied: [] })).toEqual({ applied: [install], failed: null, not_applied: [] })
  })

  it("a markdown outcome shows the typed failure by its message, as it shows a report's", () => {
    const error = new HealthGateFailed({ extensionId: "acme/gated", failures: ["critical check db (Database) is error"], outcome: "it was removed" })
    const plan = { id: "plan-1", created_at: "2026-01-01T00:00:00.000Z", fingerprint: "f".repeat(64), actions: [install], summary: { install: 1, update: 0, enable: 0, disable: 0, configure: 0, repair: 0, remove: 0 }, warnings: [] }
    const typed = formatPlanMarkdown({ plan, apply: { applied: [], failed: { action: install, error }, notApplied: [] } })
    const wire = formatPlanMarkdown({ plan, apply: { applied: [], failed: { action: install, error: error.message }, notApplied: [] } })
    expect(typed).toBe(wire)
    expect(typed).toContain("health gate failed: critical check db (Database) is error; it was removed")
  })
})

describe("reconcile failures", () => {
  it("say what they always said, and round-trip through their schemas", () => {
    const cases = [
      [
        new PlanInvalid({ file: "/x/extensions.yaml", problems: [{ path: "extensions.acme/a.source", message: "missing" }] }),
        "the desired state in /x/extensions.yaml cannot be planned: extensions.acme/a.source: missing"
      ],
      [new StalePlan({ planId: "plan-1", changes: ["installed acme/a: was 1.0.0, now 1.1.0"] }), "plan plan-1 is stale, the panel changed since it was made: installed acme/a: was 1.0.0, now 1.1.0; make a new plan"],
      [new PlanFileInvalid({ file: "plan.json", detail: "Expected 1" }), "plan.json is not a plan file: Expected 1"],
      [new SourceUnavailable({ id: "acme/a", detail: "the plan names no source to install from" }), "the source of acme/a cannot be used: the plan names no source to install from"],
      [new SettingsUnavailable({ extensionId: "acme/a", detail: "acme/a setting api_key: API_KEY is not set" }), "acme/a setting api_key: API_KEY is not set"],
      [
        new HealthGateFailed({ extensionId: "acme/a", failures: ["one", "two"], outcome: "it was rolled back to 1.0.0" }),
        "health gate failed: one; two; it was rolled back to 1.0.0"
      ]
    ] as const
    for (const [error, message] of cases) {
      expect(error.message).toBe(message)
      const schema = error.constructor as unknown as Schema.Schema<typeof error, unknown>
      const decoded = Schema.decodeUnknownEither(schema)(Schema.encodeSync(schema)(error))
      expect(Either.isRight(decoded) && decoded.right.message).toBe(message)
    }
  })
})

describe("sensitive keys around a configure", () => {
  const change = (key: string, sensitive: boolean) => ({ key, from: null, to: sensitive ? "${SECRET}" : "plain", sensitive })
  const configureKeys = action("configure", "acme/a", [change("api_key", true), change("title", false)])

  it("marks the secret keys before the write and drops keys now set in plain text after it", () => {
    expect(sensitiveKeysAfter(["title"], configureKeys, "mark")).toEqual(["title", "api_key"])
    expect(sensitiveKeysAfter(["title", "api_key"], configureKeys, "settle")).toEqual(["api_key"])
    expect(sensitiveKeysAfter([], action("configure", "acme/a"), "settle")).toEqual([])
  })
})
