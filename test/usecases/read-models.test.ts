import { describe, expect, it } from "vitest"
import { unlistedWarning } from "../../src/domain/DesiredState.js"
import { dependentsOf, installedStates, InstalledManifest } from "../../src/domain/Installed.js"
import { checkRequires } from "../../src/domain/Rules.js"
import { requiresReport } from "../../src/usecases/Requires.js"
import { runtimeVersions } from "../../src/system/RuntimeVersions.js"

// The read models give structured facts; the sentences they carry are the ones operations report.

describe("requires as data", () => {
  const versions = runtimeVersions("1.4.0", { version: undefined, php: "8.2.1" })

  it("reports each range with its outcome, and the same sentences checkRequires gives", () => {
    const requires = { host: "^1.2", php: ">=8.3", panel: "^1.11" }
    const report = requiresReport(requires, versions)
    const outcome = checkRequires({ requires }, versions)
    expect(report.unmet).toEqual(outcome.unmet)
    expect(report.warnings).toEqual(outcome.warnings)
    expect(report.ok).toBe(false)
    expect(report.ranges).toEqual([
      { key: "host", range: "^1.2", actual: "1.4.0", ok: true, detail: null },
      { key: "php", range: ">=8.3", actual: "8.2.1", ok: false, detail: `requires.php ">=8.3" is not met by php 8.2.1` },
      { key: "panel", range: "^1.11", actual: null, ok: true, detail: `requires.panel "^1.11" cannot be checked: the panel version is unknown` }
    ])
  })

  it("is met with no requirements", () => {
    expect(requiresReport(undefined, versions)).toEqual({ ok: true, unmet: [], warnings: [], ranges: [] })
  })
})

describe("installed facts", () => {
  const record = (extensionId: string, dependencies: Record<string, string>, enabled = true) => ({
    extensionId,
    version: "1.0.0",
    enabled,
    manifest: InstalledManifest.Decoded({
      manifest: { document: { id: extensionId, version: "1.0.0", dependencies } } as never
    })
  })

  it("builds the installed-state map and finds who depends on an id, enabled or not", () => {
    const records = [record("acme/base", {}), record("acme/a", { "acme/base": "^1" }), record("acme/b", { "acme/base": "^1" }, false)]
    expect(installedStates(records).get("acme/a")).toEqual({ version: "1.0.0", enabled: true, dependencies: { "acme/base": "^1" } })
    expect(dependentsOf("acme/base", records).map((other) => other.extensionId)).toEqual(["acme/a", "acme/b"])
    expect(dependentsOf("acme/a", records)).toEqual([])
  })

  it("words an unlisted extension as the plan's warning does", () => {
    expect(unlistedWarning("acme/a")).toBe("acme/a is installed but not in the desired state (prune would remove it)")
  })
})
