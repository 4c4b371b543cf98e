import { DateTime, Effect, Option } from "effect"
import { addFrontendError, type FrontendErrorEntry, type FrontendErrorReport } from "../domain/FrontendErrors.js"
import { CoreKeys, CoreRows, member } from "../store/CoreRows.js"

// Where frontend render errors are kept (docs/decisions.md "Frontend errors live in `host/core` settings rows"): one
// `host/core` row per extension (store/CoreRows.ts, `frontend_errors:<vendor>/<name>`), holding the
// newest entries. No fifth table, and `host status` (another process) and the admin API read the same
// rows the server writes. Rows of extensions no longer installed are ignored by readers.

const rowOf = (extensionId: string) => member(CoreKeys.frontendErrors, extensionId)

/** Every extension's recent frontend errors (newest first), by extension id. */
export const readFrontendErrors = Effect.flatMap(CoreRows, (rows) => rows.list(CoreKeys.frontendErrors)).pipe(
  Effect.map((entries): ReadonlyMap<string, ReadonlyArray<FrontendErrorEntry>> => new Map(entries.filter(([, list]) => list.length > 0)))
)

/** Adds one report to its extension's row (read, merge, write). */
export const recordFrontendError = (report: FrontendErrorReport, context: { readonly version: string; readonly user: string }) =>
  Effect.gen(function*() {
    const rows = yield* CoreRows
    const current = Option.getOrElse(yield* rows.get(rowOf(report.extensionId)), () => [])
    yield* rows.put(rowOf(report.extensionId), addFrontendError(current, report, { ...context, at: DateTime.formatIso(yield* DateTime.now) }))
  })

/** Forgets an extension's recorded errors. */
export const clearFrontendErrors = (extensionId: string) => Effect.flatMap(CoreRows, (rows) => rows.remove(rowOf(extensionId)))
