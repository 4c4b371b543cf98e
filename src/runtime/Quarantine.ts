import { Effect, Option } from "effect"
import { CoreKeys, CoreRows, type QuarantineMap } from "../store/CoreRows.js"
import type { Generation } from "./Runtime.js"

// Every process that boots the extensions (the server, and a CLI running extension commands, listeners
// or health checks) records which enabled extensions it quarantined, so `host list` / `host status` can
// show them: a `host/core` row (store/CoreRows.ts, `quarantine`), `{<id>: {reason, version, generation,
// since}}`, rewritten whenever it changes.

export type { QuarantineMap } from "../store/CoreRows.js"

/** The recorded quarantine (empty when no process wrote one). */
export const readQuarantine = Effect.flatMap(CoreRows, (rows) => rows.get(CoreKeys.quarantine)).pipe(
  Effect.map(Option.getOrElse((): QuarantineMap => ({})))
)

export const writeQuarantine = (map: QuarantineMap) => Effect.flatMap(CoreRows, (rows) => rows.put(CoreKeys.quarantine, map))

/** The reason an installed extension is quarantined, if it is enabled and the record is about this version. */
export const quarantineReason = (
  map: QuarantineMap,
  extension: { readonly extensionId: string; readonly version: string; readonly enabled: boolean }
): string | undefined => {
  const record = map[extension.extensionId]
  return record !== undefined && extension.enabled && record.version === extension.version ? record.reason : undefined
}

/**
 * Records the quarantine a generation found (kept as it was for an unchanged reason and version, so
 * `since` stays the first time it was seen); `versions` names installed versions of ids the generation
 * did not load. Written only when it changed.
 */
export const recordQuarantine = (generation: Generation, versions: ReadonlyMap<string, string>) =>
  Effect.gen(function*() {
    const recorded = yield* readQuarantine
    const next: Record<string, QuarantineMap[string]> = {}
    for (const [id, reason] of generation.quarantined) {
      const version = generation.extensions.get(id)?.record.version ?? versions.get(id) ?? "?"
      const previous = recorded[id]
      next[id] = previous !== undefined && previous.reason === reason && previous.version === version
        ? previous
        : { reason, version, generation: generation.number, since: generation.bootedAt }
    }
    if (JSON.stringify(next) !== JSON.stringify(recorded)) yield* writeQuarantine(next)
  }).pipe(Effect.catchAll((error) => Effect.logWarning(`could not record quarantined extensions: ${error.message}`)))

