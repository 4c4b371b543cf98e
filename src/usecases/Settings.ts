import { Effect } from "effect"
import type { Actor } from "../domain/Installed.js"
import { manifestOf } from "../domain/Installed.js"
import { effectiveSettings } from "../domain/Settings.js"
import { Lifecycle } from "../lifecycle/Lifecycle.js"
import { SettingsRepo } from "../store/SettingsRepo.js"
import { findInstalled } from "./Extensions.js"
import { desiredEntries } from "./Facts.js"
import { adminLockTimeout } from "./Operations.js"
import type { SettingsForm, SettingValue } from "./Views.js"

// The settings screen (docs/admin.md): the form's data, and a save through the lifecycle's configure.

/** The settings form: secrets (password inputs) never echoed, and which keys the desired state sets. */
export const settingsForm = (id: string) =>
  Effect.gen(function*() {
    const record = yield* findInstalled(id)
    const manifest = manifestOf(record)
    const settingsSection = manifest?.document.admin?.settings
    const fields = manifest?.settings ?? []
    const stored = yield* Effect.flatMap(SettingsRepo, (settings) => settings.getAll(id))
    // Stored values were validated against these fields when they were written.
    const values = effectiveSettings(fields, stored) as Record<string, SettingValue>
    const secrets: Record<string, boolean> = {}
    for (const field of fields) {
      if (field.input !== "password") continue
      secrets[field.key] = field.key in stored
      values[field.key] = null
    }
    const desired = (yield* desiredEntries).get(id)
    return {
      title: settingsSection?.title ?? null,
      description: settingsSection?.description ?? null,
      fields,
      values,
      secrets,
      managed: desired?._tag === "Present" ? Object.keys(desired.settings ?? {}) : []
    } satisfies SettingsForm
  })

/** Saves settings of an installed extension (validated by the lifecycle) and answers the form as it now is. */
export const configureSettings = (id: string, values: Readonly<Record<string, unknown>>, actor: Actor) =>
  Effect.gen(function*() {
    yield* Effect.flatMap(Lifecycle, (lifecycle) => lifecycle.configure(id, values, { actor, lockTimeout: adminLockTimeout }))
    return yield* settingsForm(id)
  })
