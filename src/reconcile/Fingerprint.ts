import { sha256Hex } from "../system/Hash.js"
import type { ActualExtension } from "../domain/Plan.js"
import type { PlanBasis } from "../domain/PlanFormat.js"

// What a plan was made against (docs/plan-format.md), and its fingerprint: hashing is done
// here, outside the pure domain, with the sha256 the archives use.

const shortHash = (value: unknown) => sha256Hex(JSON.stringify(value ?? null)).slice(0, 16)

/**
 * The basis of a plan: every installed extension's version, state, file integrity and settings, the
 * digest (or registry version) of every source the plan installs from, and a hash of every configured
 * value after `${ENV}` substitution (a hash: the plan holds no secret).
 */
export const planBasis = (
  actual: ReadonlyMap<string, ActualExtension>,
  sourceStamps: ReadonlyMap<string, string>,
  settingValues: ReadonlyMap<string, unknown>
): PlanBasis => {
  const basis: Record<string, string> = {}
  for (const [id, extension] of actual) {
    basis[`installed ${id}`] =
      `${extension.version}, ${extension.enabled ? "enabled" : "disabled"}, files ${extension.integrity}, settings ${shortHash(extension.settings)}`
  }
  for (const [id, stamp] of sourceStamps) basis[`source ${id}`] = stamp
  for (const [id, values] of settingValues) basis[`settings of ${id}`] = shortHash(values)
  return basis
}

export const fingerprintOf = (basis: PlanBasis): string =>
  sha256Hex(JSON.stringify(Object.keys(basis).sort().map((key) => [key, basis[key]])))

