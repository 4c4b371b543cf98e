// The admin app's one way to the server: the admin JSON API (docs/http.md), with the session's CSRF token
// on every change. Failures carry the API's error entries, so each screen can show the message in place
// (and the settings form can put each one under its field).

import type { Capabilities } from "../domain/PlanFormat.js"

export interface HostAdminBootstrap {
  readonly version: string
  readonly csrfToken: string | null
  readonly user: { readonly id: number; readonly username: string; readonly email: string; readonly admin: boolean }
  readonly panel: { readonly name: string; readonly version: string | null }
  /** `uploads`: the web-install policy, `admin_uploads` (docs/operations.md "Web installs"). */
  readonly admin: { readonly desiredState: string; readonly registry: boolean; readonly uploads: "any" | "signed" | "off" }
}

export const bootstrap = (): HostAdminBootstrap => {
  const host = (window as unknown as { __HOST__?: HostAdminBootstrap }).__HOST__
  if (host === undefined) throw new Error("window.__HOST__ is missing: the admin app must be loaded by its page shell")
  return host
}

export interface ErrorEntry {
  readonly code: string
  readonly status: string
  readonly detail: string
  readonly source?: { readonly pointer: string }
}

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

const headers = (json: boolean): Record<string, string> => {
  const token = bootstrap().csrfToken
  return { accept: "application/json", ...(json ? { "content-type": "application/json" } : {}), ...(token === null ? {} : { "x-csrf-token": token }) }
}

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

// ---- shapes of the API's answers --------------------------------------------------------------

export type Status = "enabled" | "disabled" | "quarantined" | "corrupt"

export interface Source {
  readonly type: string
  readonly ref: string
  readonly sha256: string | null
}

export interface ExtensionRow {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly version: string
  readonly enabled: boolean
  readonly status: Status
  readonly quarantine: string | null
  readonly signature: string
  readonly signatureKey: string | null
  readonly source: Source
  readonly updateAvailable: string | null
  readonly dependents: ReadonlyArray<string>
  readonly managed: boolean
  readonly frontendErrors: ReadonlyArray<FrontendError>
  readonly updatedAt: string
}

/** A render error of one of its components, as the bridge reported it (newest first, repeats counted). */
export interface FrontendError {
  readonly message: string
  readonly slot?: string
  readonly url?: string
  readonly version: string
  readonly user: string
  readonly count: number
  readonly firstAt: string
  readonly lastAt: string
}

export interface HealthCheck {
  readonly id: string
  readonly label: string
  readonly severity: string | null
  readonly status: "ok" | "warning" | "error" | "unknown"
  readonly message: string | null
  readonly declared: boolean
}

export interface ExtensionHealth {
  readonly extensionId: string
  readonly checks: ReadonlyArray<HealthCheck>
  readonly checkedAt?: string
}

/** `GET extensions/{id}/doctor`: the report `host doctor <id>` prints (docs/operations.md "host doctor"). */
export interface DoctorCheck {
  readonly id: string
  readonly verdict: "ok" | "warning" | "fail"
  readonly evidence: string
  readonly fix: string
}

export interface DoctorReport {
  readonly sections: ReadonlyArray<{ readonly subject: string; readonly version: string | null; readonly checks: ReadonlyArray<DoctorCheck> }>
  readonly summary: { readonly ok: number; readonly warning: number; readonly fail: number }
  readonly healthy: boolean
}

export interface Impact {
  readonly id: string
  readonly version: string
  readonly dependents: ReadonlyArray<string>
  readonly allDependents: ReadonlyArray<string>
  readonly migrations: ReadonlyArray<string>
  readonly tables: ReadonlyArray<{ readonly name: string; readonly rows: number | null }>
  readonly settings: number
}

export interface RequiresReport {
  readonly ok: boolean
  readonly unmet: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
  readonly ranges: ReadonlyArray<{ readonly key: string; readonly range: string; readonly actual: string | null; readonly ok: boolean; readonly detail: string | null }>
}

/** What a version brings, as the admin API reports it (the plan's own type). */
export type { Capabilities }

export interface Detail {
  readonly id: string
  readonly name: string
  readonly version: string
  readonly description: string
  readonly license: string | null
  readonly authors: ReadonlyArray<{ readonly name: string; readonly email?: string; readonly url?: string }>
  readonly enabled: boolean
  readonly status: Status
  readonly quarantine: string | null
  readonly loaded: boolean
  readonly signature: { readonly status: string; readonly key: string | null }
  readonly source: Source
  readonly installedAt: string
  readonly updatedAt: string
  readonly updateAvailable: string | null
  readonly requires: RequiresReport
  readonly dependencies: ReadonlyArray<{ readonly id: string; readonly range: string; readonly installed: string | null; readonly enabled: boolean; readonly ok: boolean }>
  readonly dependents: ReadonlyArray<{ readonly id: string; readonly enabled: boolean }>
  readonly capabilities: {
    readonly permissions: ReadonlyArray<string>
    readonly routes: Readonly<Record<string, ReadonlyArray<{ readonly method: string; readonly path: string; readonly permission: string | null }>>>
    readonly routeFiles: Readonly<Record<string, string>>
    readonly slots: ReadonlyArray<string>
    readonly pages: ReadonlyArray<{ readonly area: string; readonly path: string }>
    readonly migrations: ReadonlyArray<{ readonly name: string; readonly status: string; readonly batch: number | null; readonly ranAt: string | null }>
    readonly schedules: ReadonlyArray<{ readonly id: string; readonly label: string; readonly command: string; readonly cron: string; readonly nextRun: string | null }>
    readonly commands: ReadonlyArray<{ readonly name: string; readonly description: string }>
    readonly listeners: ReadonlyArray<string>
    readonly healthChecks: ReadonlyArray<{ readonly id: string; readonly label: string; readonly severity?: string }>
    readonly settings: number
  }
  readonly frontendErrors: ReadonlyArray<FrontendError>
  readonly managed: null | { readonly file: string; readonly absent: boolean; readonly enabled: boolean; readonly settings: ReadonlyArray<string> }
}

export type SettingValue = string | number | boolean | null

export interface SettingField {
  readonly key: string
  readonly type: "string" | "text" | "number" | "boolean" | "select"
  readonly label: string
  readonly required: boolean
  readonly default: SettingValue
  readonly help: string | null
  readonly placeholder: string | null
  readonly input: string
  readonly options: ReadonlyArray<{ readonly value: string | number | boolean; readonly label: string }>
  readonly public: boolean
}

export interface SettingsForm {
  readonly title: string | null
  readonly description: string | null
  readonly fields: ReadonlyArray<SettingField>
  readonly values: Readonly<Record<string, SettingValue>>
  readonly secrets: Readonly<Record<string, boolean>>
  readonly managed: ReadonlyArray<string>
}

export interface Preview {
  readonly archive: string
  readonly sha256: string
  readonly bytes: number
  readonly id: string | null
  readonly version: string | null
  readonly name: string | null
  readonly description: string | null
  readonly signature: { readonly status: string; readonly key: string | null; readonly trustedAs: string | null }
  /** Which web-install policy decided, and what it said about this archive. */
  readonly upload_policy: {
    readonly setting: "any" | "signed" | "off"
    readonly from: "admin_uploads" | "require_signatures" | "default"
    readonly ok: boolean
    readonly detail: string
  }
  readonly installed: { readonly version: string; readonly enabled: boolean } | null
  readonly action: "install" | "update" | "reinstall" | "downgrade"
  readonly requires: RequiresReport
  readonly dependencies: Readonly<Record<string, string>>
  readonly settings: number
  readonly capabilities: Capabilities | null
  readonly checks: ReadonlyArray<{ readonly check: string; readonly ok: boolean; readonly detail: string }>
  readonly refusal: { readonly check: string; readonly detail: string } | null
  readonly installable: boolean
}

export interface OperationResult {
  readonly id: string
  readonly action: string
  readonly version: string
  readonly fromVersion: string | null
  readonly warnings: ReadonlyArray<string>
}

export interface RegistryEntry {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly tags: ReadonlyArray<string>
  readonly license: string
  readonly authors: ReadonlyArray<{ readonly name: string }>
  readonly repository: string | null
  readonly latest: string
  readonly versions: ReadonlyArray<{ readonly version: string; readonly requires: boolean; readonly latest: boolean }>
  readonly requires: RequiresReport
  readonly dependencies: Readonly<Record<string, string>>
  readonly installed: { readonly version: string; readonly enabled: boolean; readonly source: string } | null
  readonly updateAvailable: string | null
}

export interface CapabilityDiff {
  readonly [kind: string]: { readonly added: ReadonlyArray<string>; readonly removed: ReadonlyArray<string> }
}

export interface PlanAction {
  readonly type: string
  readonly id: string
  readonly from?: string | null
  readonly to?: string | null
  readonly reason: string
  readonly capabilities: CapabilityDiff
  readonly settings?: ReadonlyArray<{ readonly key: string; readonly from: unknown; readonly to: unknown; readonly sensitive: boolean }>
}

export interface Plan {
  readonly id: string
  readonly actions: ReadonlyArray<PlanAction>
  readonly summary: Readonly<Record<string, number>>
  readonly warnings: ReadonlyArray<string>
  readonly text: string
}

export interface DesiredStateView {
  readonly file: string
  readonly exists: boolean
  readonly text: string | null
  readonly sha256: string | null
  readonly plan: Plan | null
  readonly planError: { readonly code: string; readonly detail: string; readonly problems: ReadonlyArray<{ readonly path: string; readonly message: string }> } | null
  readonly drift: ReadonlyArray<{ readonly id: string; readonly type: string; readonly detail: string }>
}

export interface AdoptResult {
  readonly file: string
  readonly sha256: string
  readonly diff: string
  readonly changed: boolean
  readonly changes: ReadonlyArray<string>
  readonly notes: ReadonlyArray<string>
  readonly written: boolean
}

export interface ActivityRow {
  readonly id: number
  readonly extensionId: string
  readonly action: string
  readonly summary: string
  readonly context: Readonly<Record<string, unknown>>
  readonly createdAt: string
}

export interface ActivityPage {
  readonly data: ReadonlyArray<ActivityRow>
  readonly meta: { readonly total: number; readonly limit: number; readonly offset: number }
}
