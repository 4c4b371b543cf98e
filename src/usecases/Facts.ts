import { FileSystem } from "@effect/platform"
import { Effect, Either } from "effect"
import { frameworkVersion, HostConfig } from "../config/HostConfig.js"
import type { DesiredExtension } from "../domain/DesiredState.js"
import type { InstalledExtension } from "../domain/Installed.js"
import { newerVersion, type RegistryIndex } from "../domain/Registry.js"
import { readDesiredFile } from "../reconcile/Inputs.js"
import { Registry } from "../registry/Registry.js"
import { extensionStatus } from "./ExtensionView.js"
import { LiveRuntime } from "../runtime/LiveState.js"
import { quarantineReason, readQuarantine } from "../runtime/Quarantine.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { runtimeVersions } from "../system/RuntimeVersions.js"

// Facts several read models share, each read one way: what is installed, how each extension stands,
// what the desired-state file says about it, and what the registry offers.

export const installedList = Effect.flatMap(ExtensionsRepo, (repo) => repo.list)

/**
 * How each installed extension stands: the running generation's quarantine when the server has one,
 * else the quarantine recorded by the last server that ran.
 */
export const statusReader = Effect.gen(function*() {
  const live = yield* (yield* LiveRuntime).current
  // A serving generation knows its own quarantine: the record (a database read) is read only without one.
  if (live !== undefined) {
    const quarantined = live.generation.quarantined
    return (extension: InstalledExtension) => extensionStatus(extension, quarantined.get(extension.extensionId))
  }
  const recorded = yield* readQuarantine
  return (extension: InstalledExtension) => extensionStatus(extension, quarantineReason(recorded, extension))
})

/** What the desired-state file says about each extension, when it exists and decodes. */
export const desiredEntries = Effect.gen(function*() {
  const { paths } = yield* HostConfig
  const fs = yield* FileSystem.FileSystem
  if (!(yield* fs.exists(paths.desiredState).pipe(Effect.orElseSucceed(() => false)))) return new Map<string, DesiredExtension>()
  const desired = yield* Effect.either(readDesiredFile(paths.desiredState))
  return Either.isLeft(desired) ? new Map<string, DesiredExtension>() : new Map(desired.right.state.extensions.map((entry) => [entry.id, entry]))
})

/** The registry index when one is configured and answers quickly (a cached index answers at once). */
export const registryIndexQuietly = Effect.gen(function*() {
  const registry = yield* Registry
  if (registry.url === "") return undefined
  return yield* registry.index.pipe(
    Effect.timeout("3 seconds"),
    Effect.map((result) => result.index),
    Effect.orElseSucceed(() => undefined)
  )
})

/** The newer registry version of an installed extension, if the registry lists one. */
export const newerInRegistry = (
  index: RegistryIndex | undefined,
  record: { readonly extensionId: string; readonly version: string; readonly source: { readonly type: string } }
): string | null => {
  if (index === undefined || record.source.type !== "registry") return null
  const entry = index.extensions.find((candidate) => candidate.id === record.extensionId)
  return entry === undefined ? null : newerVersion(entry, record.version) ?? null
}

/** The versions `requires` is checked against, as the server's current runtime generation knows them. */
export const currentVersions = Effect.flatMap(LiveRuntime, (runtime) => Effect.map(runtime.current, (live) => runtimeVersions(frameworkVersion, live?.panelInfo)))
