import { Schema } from "effect"

// Frontend render errors of extension components (docs/frontend.md "Diagnostics"), as the bridge
// reports them and as they are kept: the newest few per extension, an identical message counted
// instead of repeated, so a component failing in every row of a list fills one entry, not the list.

/** The body of POST /api/client/host/diagnostics. */
export const FrontendErrorReport = Schema.Struct({
  extensionId: Schema.String.pipe(Schema.pattern(/^[a-z0-9]+(-[a-z0-9]+)*\/[a-z0-9]+(-[a-z0-9]+)*$/, {
    message: () => "extensionId must be an extension id (vendor/name)"
  })),
  message: Schema.String.pipe(Schema.minLength(1, { message: () => "message must not be empty" })),
  stack: Schema.optional(Schema.String),
  componentStack: Schema.optional(Schema.String),
  slot: Schema.optional(Schema.String),
  url: Schema.optional(Schema.String),
  /**
   * `render` (the default): a component threw. `anchor`: a slot's anchor is missing on a page of a real
   * panel where its slot map says it exists; such reports are kept under `anchorReportId`. `slot`: an
   * extension registered into a slot that has no place in this panel version (docs/panels.md "Slot maps").
   */
  kind: Schema.optional(Schema.Literal("render", "anchor", "slot"))
})
export type FrontendErrorReport = typeof FrontendErrorReport.Type

export const FrontendErrorEntry = Schema.Struct({
  message: Schema.String,
  stack: Schema.optional(Schema.String),
  componentStack: Schema.optional(Schema.String),
  slot: Schema.optional(Schema.String),
  url: Schema.optional(Schema.String),
  /** The extension version that failed. */
  version: Schema.String,
  /** The user whose page it was (username). */
  user: Schema.String,
  count: Schema.Number,
  firstAt: Schema.String,
  lastAt: Schema.String
})
export type FrontendErrorEntry = typeof FrontendErrorEntry.Type

export const FrontendErrorList = Schema.Array(FrontendErrorEntry)

/** The row anchor reports are kept under: the bridge's own, no extension's. */
export const anchorReportId = "host/bridge"

/** How many entries are kept per extension. */
export const keptErrors = 10

const clip = (text: string | undefined, length: number) => text === undefined ? undefined : text.length > length ? `${text.slice(0, length)}…` : text

/** The list with a new report first (an identical message and version counts up and moves first). */
export const addFrontendError = (
  list: ReadonlyArray<FrontendErrorEntry>,
  report: FrontendErrorReport,
  context: { readonly version: string; readonly user: string; readonly at: string }
): ReadonlyArray<FrontendErrorEntry> => {
  const message = clip(report.message, 1000)!
  const same = list.find((entry) => entry.message === message && entry.version === context.version)
  const optional = {
    ...(report.stack === undefined ? {} : { stack: clip(report.stack, 4000)! }),
    ...(report.componentStack === undefined ? {} : { componentStack: clip(report.componentStack, 4000)! }),
    ...(report.slot === undefined ? {} : { slot: clip(report.slot, 100)! }),
    ...(report.url === undefined ? {} : { url: clip(report.url, 500)! })
  }
  const entry: FrontendErrorEntry = {
    message,
    ...optional,
    version: context.version,
    user: context.user,
    count: (same?.count ?? 0) + 1,
    firstAt: same?.firstAt ?? context.at,
    lastAt: context.at
  }
  return [entry, ...list.filter((other) => other !== same)].slice(0, keptErrors)
}
