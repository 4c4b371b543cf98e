import { Effect, Option, Schema } from "effect"
import { addFrontendError, type FrontendErrorEntry, FrontendErrorList, type FrontendErrorReport } from "../domain/FrontendErrors.js"
import { coreExtensionId } from "../domain/Installed.js"
import { SettingsRepo } from "../store/SettingsRepo.js"

// Where frontend render errors are kept (docs/decisions.md "Frontend errors in host_settings"): one
// `host/core` row per extension in host_settings, key `frontend_errors:<vendor>/<name>`, holding the
// newest entries. No fifth table, and `host status` (another process) and the admin API read the same
// rows the server writes. Rows of extensions no longer installed are ignored by readers.

export const frontendErrorsPrefix = "frontend_errors:"

const keyOf = (extensionId: string) => `${frontendErrorsPrefix}${extensionId}`

const decodeList = (value: unknown) => Option.getOrElse(Schema.decodeUnknownOption(FrontendErrorList)(value), () => [])

/** Every extension's recent frontend errors (newest first), by extension id. */
export const readFrontendErrors = Effect.gen(function*() {
  const settings = yield* SettingsRepo
  const rows = yield* settings.getAll(coreExtensionId)
  const errors = new Map<string, ReadonlyArray<FrontendErrorEntry>>()
  for (const [key, value] of Object.entries(rows)) {
    if (!key.startsWith(frontendErrorsPrefix)) continue
    const list = decodeList(value)
    if (list.length > 0) errors.set(key.slice(frontendErrorsPrefix.length), list)
  }
  return errors as ReadonlyMap<string, ReadonlyArray<FrontendErrorEntry>>
})

/** Adds one report to its extension's row (read, merge, write). */
export const recordFrontendError = (report: FrontendErrorReport, context: { readonly version: string; readonly user: string }) =>
  Effect.gen(function*() {
    const settings = yield* SettingsRepo
    const current = decodeList(Option.getOrUndefined(yield* settings.get(coreExtensionId, keyOf(report.extensionId))))
    const next = addFrontendError(current, report, { ...context, at: new Date().toISOString() })
    yield* settings.put(coreExtensionId, keyOf(report.extensionId), next)
  })

/** Forgets an extension's recorded errors. */
export const clearFrontendErrors = (extensionId: string) =>
  Effect.flatMap(SettingsRepo, (settings) => settings.remove(coreExtensionId, keyOf(extensionId)))
