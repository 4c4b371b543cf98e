import { InstalledManifest } from "./Installed.js"
import { decodeManifest } from "./Manifest.js"
import type { Problem } from "./Problems.js"

// Apart from domain/Installed.ts so that reading the store does not load the manifest's rules (semver
// ranges, cron, settings, slots): the store imports this module only when it has a row to decode, and a
// root with nothing installed never evaluates them
// (docs/decisions.md "The manifest's rules load with the first row").

/**
 * The manifest's fields only a registry reads (docs/registry.md "Publishing"). Before they were fields, a
 * manifest could hold anything under these keys (unknown keys were ignored, with a warning) and was stored
 * as it was: such a row decodes without them rather than reading as corrupt — the runtime never uses them.
 */
const registryOnlyFields = ["tags", "repository"] as const

const isRegistryOnly = (error: Problem) => registryOnlyFields.some((field) => error.path === field || error.path.startsWith(`${field}[`) || error.path.startsWith(`${field}.`))

const withoutRegistryOnlyFields = (stored: unknown): unknown => {
  if (typeof stored !== "object" || stored === null || Array.isArray(stored)) return stored
  const { repository: _repository, tags: _tags, ...rest } = stored as Record<string, unknown>
  return rest
}

/** Decodes a stored manifest document (host_extensions.manifest). */
export const decodeInstalledManifest = (stored: unknown): InstalledManifest => {
  const first = decodeManifest(stored)
  const decoded = first.manifest === undefined && first.errors.length > 0 && first.errors.every(isRegistryOnly)
    ? decodeManifest(withoutRegistryOnlyFields(stored))
    : first
  if (decoded.manifest !== undefined) return InstalledManifest.Decoded({ manifest: decoded.manifest })
  const error = decoded.errors[0]
  return InstalledManifest.Corrupt({ reason: error === undefined ? "unknown problem" : `${error.path}: ${error.message}` })
}
