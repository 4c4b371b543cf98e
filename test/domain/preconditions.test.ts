import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  enablePreconditions,
  type InstallRequest,
  installPreconditions,
  withdrawPreconditions
} from "../../src/domain/Preconditions.js"
import type { InstalledState } from "../../src/domain/Rules.js"

// What the operations check before they change anything (docs/architecture.md "One install"), as pure
// functions: the lifecycle only turns their answer into OperationRefused.

const installed = (entries: Record<string, Partial<InstalledState>>): ReadonlyMap<string, InstalledState> =>
  new Map(Object.entries(entries).map(([id, state]) => [id, { version: "1.0.0", enabled: true, dependencies: {}, ...state }]))

const request = (patch: Partial<InstallRequest> = {}): InstallRequest => ({
  operation: "add",
  document: { id: "acme/a", version: "1.1.0" },
  source: "./a",
  existing: undefined,
  force: false,
  disabled: false,
  versions: { host: "1.2.3", panel: "1.11.0", php: "8.2.0", node: "20.0.0" },
  installed: installed({}),
  ...patch
})

const refusal = <A, E>(outcome: Either.Either<A, E>): E | undefined => (Either.isLeft(outcome) ? outcome.left : undefined)

describe("install preconditions", () => {
  it("passes a new extension enabled, or disabled when asked", () => {
    expect(installPreconditions(request())).toEqual(Either.right({ enabled: true, warnings: [] }))
    expect(installPreconditions(request({ disabled: true }))).toEqual(Either.right({ enabled: false, warnings: [] }))
  })

  it("refuses to add what is installed unless forced, and keeps its enabled state when forced", () => {
    const existing = { version: "1.0.0", enabled: false }
    expect(refusal(installPreconditions(request({ existing })))).toEqual({
      reason: "already-installed",
      detail: "already installed (v1.0.0); use host update or --force",
      hint: "use host update acme/a --source ./a or host add --force"
    })
    expect(installPreconditions(request({ existing, force: true }))).toEqual(Either.right({ enabled: false, warnings: [] }))
  })

  it("refuses to update what is not installed, or to a version that is not newer without force", () => {
    expect(refusal(installPreconditions(request({ operation: "update" })))).toMatchObject({ reason: "not-installed", hint: "use host add ./a" })
    const same = request({ operation: "update", existing: { version: "1.1.0", enabled: true } })
    expect(refusal(installPreconditions(same))).toEqual({ reason: "not-newer", detail: "already at v1.1.0; use --force to reinstall it" })
    const older = request({ operation: "update", existing: { version: "2.0.0", enabled: true } })
    expect(refusal(installPreconditions(older))?.detail).toBe("v1.1.0 is older than the installed v2.0.0; use --force to downgrade")
    expect(Either.isRight(installPreconditions({ ...older, force: true }))).toBe(true)
    expect(Either.isRight(installPreconditions(request({ operation: "update", existing: { version: "1.0.0", enabled: true } })))).toBe(true)
  })

  it("refuses unmet requires and warns about an unknown version", () => {
    const document = { id: "acme/a", version: "1.1.0", requires: { panel: "^2.0", php: ">=8.0" } }
    expect(refusal(installPreconditions(request({ document })))).toEqual({
      reason: "requirements",
      detail: `requires.panel "^2.0" is not met by panel 1.11.0`
    })
    const unknownPhp = request({ document: { ...document, requires: { php: ">=8.0" } }, versions: { host: "1.2.3", panel: undefined, php: undefined, node: "20.0.0" } })
    expect(installPreconditions(unknownPhp)).toEqual(Either.right({
      enabled: true,
      warnings: [`requires.php ">=8.0" cannot be checked: the php version is unknown`]
    }))
  })

  it("refuses dependencies that do not hold for an enabled result, and lets a disabled one through", () => {
    const document = { id: "acme/a", version: "1.1.0", dependencies: { "acme/b": "^2.0", "acme/c": "^1.0" } }
    const state = installed({ "acme/b": { version: "1.5.0" } })
    expect(refusal(installPreconditions(request({ document, installed: state })))).toEqual({
      reason: "dependencies",
      detail: "dependency acme/b is at 1.5.0, which does not satisfy ^2.0; dependency acme/c (^1.0) is not installed",
      hint: "install and enable its dependencies first, or add it with --disabled"
    })
    expect(Either.isRight(installPreconditions(request({ document, installed: state, disabled: true })))).toBe(true)
  })

  it("refuses a version enabled dependents cannot use unless forced, then warns", () => {
    const state = installed({ "acme/d": { dependencies: { "acme/a": "^1.0" } } })
    const major = request({ document: { id: "acme/a", version: "2.0.0" }, installed: state })
    expect(refusal(installPreconditions(major))).toEqual({
      reason: "dependents",
      detail: "enabled extensions need another version of it: acme/d",
      hint: "use --force to install it anyway"
    })
    expect(installPreconditions({ ...major, force: true })).toEqual(Either.right({
      enabled: true,
      warnings: ["dependents that need another version: acme/d"]
    }))
    expect(Either.isRight(installPreconditions(request({ installed: state })))).toBe(true)
  })
})

describe("enable, disable and remove preconditions", () => {
  it("enable needs a readable manifest whose dependencies hold", () => {
    const state = installed({ "acme/b": { enabled: false } })
    expect(refusal(enablePreconditions({ dependencies: { "acme/b": "^1.0" } }, undefined, state))).toEqual({
      reason: "dependencies",
      detail: "dependency acme/b is disabled"
    })
    expect(refusal(enablePreconditions(undefined, "its stored manifest does not decode (version: x); reinstall it", state))?.detail)
      .toBe("its stored manifest does not decode (version: x); reinstall it")
    expect(enablePreconditions({}, undefined, state)).toEqual(Either.right({ warnings: [] }))
  })

  it("disable and remove are refused while enabled extensions depend on it, and warn when forced", () => {
    const state = installed({ "acme/d": { dependencies: { "acme/a": "^1.0" } }, "acme/e": { enabled: false, dependencies: { "acme/a": "^1.0" } } })
    expect(refusal(withdrawPreconditions("disable", "acme/a", state, false))).toEqual({
      reason: "dependents",
      detail: "enabled extensions depend on it: acme/d",
      hint: "disable them first, or use --force"
    })
    expect(refusal(withdrawPreconditions("remove", "acme/a", state, false))?.hint).toBe("remove or disable them first, or use --force")
    expect(withdrawPreconditions("remove", "acme/a", state, true)).toEqual(Either.right({ warnings: ["enabled dependents will lose it: acme/d"] }))
    expect(withdrawPreconditions("disable", "acme/b", state, false)).toEqual(Either.right({ warnings: [] }))
  })
})
