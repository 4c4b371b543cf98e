import { Effect, Option, Schema } from "effect"
import { coreExtensionId } from "../domain/Installed.js"
import { SettingsRepo } from "../store/SettingsRepo.js"

// The running server records which enabled extensions its current generation quarantined, so `host
// list` / `host status` (other processes) can show them: a `host/core` row in host_settings, key
// `quarantine`, `{<id>: {reason, version, generation, since}}`, rewritten whenever it changes.

export const quarantineSettingKey = "quarantine"

export const QuarantineRecord = Schema.Struct({
  reason: Schema.String,
  version: Schema.String,
  generation: Schema.Number,
  since: Schema.String
})
export type QuarantineRecord = typeof QuarantineRecord.Type

export const QuarantineMap = Schema.Record({ key: Schema.String, value: QuarantineRecord })
export type QuarantineMap = typeof QuarantineMap.Type

/** The recorded quarantine (empty when no server wrote one, or the row does not decode). */
export const readQuarantine = Effect.flatMap(SettingsRepo, (settings) => settings.get(coreExtensionId, quarantineSettingKey)).pipe(
  Effect.map(Option.flatMap((value) => Schema.decodeUnknownOption(QuarantineMap)(value))),
  Effect.map(Option.getOrElse((): QuarantineMap => ({})))
)

export const writeQuarantine = (map: QuarantineMap) =>
  Effect.flatMap(SettingsRepo, (settings) => settings.put(coreExtensionId, quarantineSettingKey, map))

/** The reason an installed extension is quarantined, if it is enabled and the record is about this version. */
export const quarantineReason = (
  map: QuarantineMap,
  extension: { readonly extensionId: string; readonly version: string; readonly enabled: boolean }
): string | undefined => {
  const record = map[extension.extensionId]
  return record !== undefined && extension.enabled && record.version === extension.version ? record.reason : undefined
}
