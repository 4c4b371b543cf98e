import type { FrontendError } from "@host/sdk"
import type { FrontendErrorReport } from "../domain/FrontendErrors.js"
import { csrfHeaders } from "./csrf.js"

/** The body POST /api/client/host/diagnostics decodes (the server's schema; a type-only import). */
type Report = { -readonly [Key in keyof typeof FrontendErrorReport.Encoded]: (typeof FrontendErrorReport.Encoded)[Key] }

// Render errors of extension components (docs/frontend.md "Diagnostics"): kept in
// `window.__HOST__.diagnostics.errors` (newest 100) and sent to POST /api/client/host/diagnostics, where
// `host status` and the admin UI read them. The server rate-limits too; the bridge sends at most five
// errors per extension per minute, so a component failing in every row of a long list costs one burst.

export const errors: Array<FrontendError> = []

const sent = new Map<string, Array<number>>()
const perMinute = 5

let endpoint = "/api/client/host/diagnostics"

export const initDiagnostics = (baseUrl: string) => {
  endpoint = `${baseUrl.replace(/\/$/, "")}/api/client/host/diagnostics`
}

const clip = (text: string | undefined, length: number) => text === undefined ? undefined : text.length > length ? text.slice(0, length) : text

export const report = (input: Omit<FrontendError, "at">) => {
  const entry: FrontendError = { ...input, message: clip(input.message, 2000) ?? "", at: new Date().toISOString() }
  errors.push(entry)
  if (errors.length > 100) errors.splice(0, errors.length - 100)
  const now = Date.now()
  const recent = (sent.get(input.extensionId) ?? []).filter((time) => now - time < 60_000)
  if (recent.length >= perMinute) {
    sent.set(input.extensionId, recent)
    return
  }
  recent.push(now)
  sent.set(input.extensionId, recent)
  const body: Report = { extensionId: input.extensionId, message: entry.message }
  const stack = clip(input.stack, 8000)
  const componentStack = clip(input.componentStack, 8000)
  if (stack !== undefined) body.stack = stack
  if (componentStack !== undefined) body.componentStack = componentStack
  if (input.slot !== undefined) body.slot = input.slot
  post(body)
}

/** One report to the server, with the CSRF header of the panel's mode (bridge/csrf.ts). */
function post(body: Omit<Report, "url">) {
  fetch(endpoint, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", ...csrfHeaders() },
    body: JSON.stringify({ ...body, url: location.pathname }),
    keepalive: true
  }).catch(() => undefined)
}

/** A slot's anchor missing on a real panel's page (docs/panels.md "Slot maps"): kept under host/bridge. */
export const reportAnchor = (message: string, slot: string) => post({ kind: "anchor", extensionId: "host/bridge", message, slot })

/** An extension registered into a slot this panel version has no place for. */
export const reportSlot = (extensionId: string, message: string, slot: string) => post({ kind: "slot", extensionId, message, slot })
