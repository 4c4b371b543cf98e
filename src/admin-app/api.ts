// The admin app's one way to the server: the admin JSON API (docs/http.md), with the CSRF header of the
// panel's rule on every change. Failures carry the API's error entries, so each screen can show the
// message in place (and the settings form can put each one under its field).

// Every shape here is the contracts' (http/contracts/Admin.ts, Errors.ts) or the use cases' read models
// (usecases/Views.ts), imported as types only: nothing of the server reaches this bundle.
import { csrfRequestHeaders } from "../domain/CsrfHeaders.js"
import type { AdminBootstrap as HostAdminBootstrap } from "../http/contracts/Admin.js"
import type { ErrorEntry } from "../http/contracts/Errors.js"

export type { HostAdminBootstrap }

export const bootstrap = (): HostAdminBootstrap => {
  const host = (window as unknown as { __HOST__?: HostAdminBootstrap }).__HOST__
  if (host === undefined) throw new Error("window.__HOST__ is missing: the admin app must be loaded by its page shell")
  return host
}

/** One entry of an error body, as the server writes it (http/contracts/Errors.ts). */
export type { ErrorEntry }

export class ApiError extends Error {
  constructor(readonly status: number, readonly errors: ReadonlyArray<ErrorEntry>) {
    super(errors.map((error) => error.detail).join("; ") || `The request failed (HTTP ${status})`)
  }

  /** Messages keyed by the setting a `/settings/<key>` pointer names. */
  fieldErrors(): Readonly<Record<string, string>> {
    const fields: Record<string, string> = {}
    for (const error of this.errors) {
      const pointer = error.source?.pointer
      if (pointer === undefined || !pointer.startsWith("/settings/")) continue
      const key = pointer.slice("/settings/".length).split("/").join(".")
      fields[key] = error.detail.replace(/^settings\.[^:]+:\s*/, "")
    }
    return fields
  }
}

const parseErrors = (status: number, text: string): ApiError => {
  try {
    const body = JSON.parse(text) as { errors?: ReadonlyArray<ErrorEntry> }
    if (Array.isArray(body.errors)) return new ApiError(status, body.errors)
  } catch {
    // not JSON: fall through to a generic message
  }
  return new ApiError(status, [{ code: "HttpError", status: String(status), detail: `The request failed (HTTP ${status})` }])
}

/** The CSRF header the API's rule asks for (domain/CsrfHeaders.ts). */
const csrfHeader = (): Record<string, string> => {
  const { csrf, csrfToken } = bootstrap()
  return csrfRequestHeaders(csrf === "panel" ? "panel" : "host", csrfToken, document.cookie)
}

const headers = (json: boolean): Record<string, string> => ({
  accept: "application/json",
  ...(json ? { "content-type": "application/json" } : {}),
  ...csrfHeader()
})

/** A JSON call to `/admin/host/api/<path>`; resolves the whole body (`{data, meta?}`). */
export const call = async <T>(path: string, init: { readonly method?: string; readonly body?: unknown; readonly signal?: AbortSignal } = {}): Promise<T> => {
  const response = await fetch(`/admin/host/api${path}`, {
    method: init.method ?? "GET",
    credentials: "same-origin",
    headers: headers(init.body !== undefined),
    body: init.body === undefined ? null : JSON.stringify(init.body),
    ...(init.signal === undefined ? {} : { signal: init.signal })
  })
  const text = await response.text()
  if (!response.ok) throw parseErrors(response.status, text)
  return JSON.parse(text) as T
}

export const get = <T>(path: string, signal?: AbortSignal) => call<{ data: T }>(path, signal === undefined ? {} : { signal }).then((body) => body.data)
export const post = <T>(path: string, body: unknown = {}) => call<{ data: T }>(path, { method: "POST", body }).then((result) => result.data)
export const put = <T>(path: string, body: unknown) => call<{ data: T }>(path, { method: "PUT", body }).then((result) => result.data)

/** A multipart upload with progress (fetch cannot report upload progress; XMLHttpRequest can). */
export const upload = <T>(path: string, form: FormData, onProgress: (fraction: number) => void): Promise<T> =>
  new Promise((resolve, reject) => {
    const request = new XMLHttpRequest()
    request.open("POST", `/admin/host/api${path}`)
    for (const [name, value] of Object.entries(headers(false))) request.setRequestHeader(name, value)
    request.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total)
    })
    request.addEventListener("load", () => {
      if (request.status >= 200 && request.status < 300) {
        onProgress(1)
        resolve((JSON.parse(request.responseText) as { data: T }).data)
      } else {
        reject(parseErrors(request.status, request.responseText))
      }
    })
    request.addEventListener("error", () => reject(new ApiError(0, [{ code: "NetworkError", status: "0", detail: "The upload failed: the server could not be reached" }])))
    request.send(form)
  })

export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

// ---- shapes of the API's answers ---------------------------------------------------------------
// Declared once, as Schema, by the use cases that build them (src/usecases/Views.ts); the contracts'
// bodies wrap them.

export type {
  ActivityPage,
  ActivityRow,
  AdoptResult,
  DesiredStateView,
  DoctorCheck,
  DoctorReport,
  ExtensionDetail as Detail,
  ExtensionHealth,
  ExtensionRow,
  ExtensionStatus as Status,
  HealthCheck,
  Impact,
  OperationResult,
  PlanView as Plan,
  RegistryEntry,
  RequiresReport,
  SettingField,
  SettingsForm,
  SettingValue,
  UploadPreview as Preview
} from "../usecases/Views.js"

/** A render error of one of its components, as the bridge reported it (newest first, repeats counted). */
export type { FrontendErrorEntry as FrontendError } from "../domain/FrontendErrors.js"
export type { ExtensionSource as Source } from "../domain/Installed.js"

/** What a version brings, as the admin API reports it (the plan's own types). */
export type { Capabilities, CapabilityDiff, PlanAction } from "../domain/PlanFormat.js"
