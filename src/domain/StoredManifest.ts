import { InstalledManifest } from "./Installed.js"
import { decodeManifest } from "./Manifest.js"

// Apart from domain/Installed.ts so that reading the store does not load the manifest's rules (semver
// ranges, cron, settings, slots): the store imports this module only when it has a row to decode, and a
// root with nothing installed never evaluates them
// (docs/decisions.md "The manifest's rules load with the first row").

/** Decodes a stored manifest document (host_extensions.manifest). */
export const decodeInstalledManifest = (stored: unknown): InstalledManifest => {
  const decoded = decodeManifest(stored)
  if (decoded.manifest !== undefined) return InstalledManifest.Decoded({ manifest: decoded.manifest })
  const first = decoded.errors[0]
  return InstalledManifest.Corrupt({ reason: first === undefined ? "unknown problem" : `${first.path}: ${first.message}` })
}

