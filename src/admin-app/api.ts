// The admin app's one way to the server: the admin JSON API (docs/http.md), with the CSRF header of the
// panel's rule on every change. Failures carry the API's error entries, so each screen can show the
// message in place (and the settings form can put each one under its field).

// Every shape here is the contracts' (http/contracts/Admin.ts, Errors.ts) or the use cases' read models
// (usecases/Views.ts), imported as types only: nothing of the server reaches this bundle.
import type { HttpApiEndpoint, HttpApiGroup, Multipart } from "@effect/platform"
import { csrfRequestHeaders } from "../domain/CsrfHeaders.js"
import type {
  ActivityPageQuery,
  AdminApi,
  ExtensionPath,
  FlagsQuery,
  AdminBootstrap as HostAdminBootstrap,
  InstallQuery,
  RecentActivityQuery,
  RegistrySearchQuery,
  UpdateQuery
} from "../http/contracts/Admin.js"
import type { ErrorEntry } from "../http/contracts/Errors.js"
import { adminRoutes } from "./routes.generated.js"

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

// ---- the endpoints, by name ----------------------------------------------------------------------
// Each call names an endpoint of the contract's `admin` group (http/contracts/Admin.ts). Its path
// parameters, query, body and answer are the contract's types (type-only imports: nothing of Effect
// reaches this bundle); its method, path and success statuses come from routes.generated.ts, which the
// build writes from HostApi and test/admin-app/routes.test.ts holds to it (docs/decisions.md "The admin
// client is derived from the contract").

type Endpoints = HttpApiGroup.HttpApiGroup.Endpoints<typeof AdminApi>
/** The name of an admin endpoint: `detail`, `updateAll`, … */
export type EndpointName = Endpoints["name"]
type EndpointOf<N extends EndpointName> = HttpApiEndpoint.HttpApiEndpoint.WithName<Endpoints, N>

/** What an endpoint answers: its success body, as the contract declares it (`{data, meta?}`). */
export type Answer<N extends EndpointName> = HttpApiEndpoint.HttpApiEndpoint.Success<EndpointOf<N>>
/** The `data` of an endpoint's answer (every admin answer is `{data, meta?}`). */
export type Data<N extends EndpointName> = Answer<N> extends { readonly data: infer D } ? D : never

const dataOf = <N extends EndpointName>(answer: Answer<N>): Data<N> => (answer as unknown as { readonly data: Data<N> }).data

type PathOf<N extends EndpointName> = HttpApiEndpoint.HttpApiEndpoint.PathParsed<EndpointOf<N>>
type PayloadOf<N extends EndpointName> = HttpApiEndpoint.HttpApiEndpoint.Payload<EndpointOf<N>>

/**
 * The query each endpoint reads. The contract declares these schemas but its handlers decode them after the
 * caller is known (see the note atop http/contracts/Admin.ts), so they are not on the endpoints; once an
 * endpoint declares its URL parameters, those win.
 */
interface DeclaredQueries {
  readonly install: typeof InstallQuery.Type
  readonly operation: typeof FlagsQuery.Type & typeof UpdateQuery.Type
  readonly activity: typeof RecentActivityQuery.Type
  readonly activityPage: typeof ActivityPageQuery.Type
  readonly registrySearch: typeof RegistrySearchQuery.Type
}
type QueryOf<N extends EndpointName> = [HttpApiEndpoint.HttpApiEndpoint.UrlParams<EndpointOf<N>>] extends [never]
  ? N extends keyof DeclaredQueries ? DeclaredQueries[N] : never
  : HttpApiEndpoint.HttpApiEndpoint.UrlParams<EndpointOf<N>>
/** Every query parameter may be left out: the ones with defaults take them, the others are optional already. */
type QueryInput<Q> = { readonly [K in keyof Q]?: Q[K] | undefined }

/** A payload member with a file in it is a multipart form (sent with `upload`); the others are JSON. */
type CarriesFile<T> = { readonly [K in keyof T]-?: NonNullable<T[K]> extends Multipart.PersistedFile ? K : never }[keyof T]
type JsonBody<P> = P extends unknown ? ([CarriesFile<P>] extends [never] ? P : never) : never
type FormBody<P> = P extends unknown ? ([CarriesFile<P>] extends [never] ? never : P) : never

type Parts<N extends EndpointName> =
  & ([PathOf<N>] extends [never] ? unknown : { readonly path: PathOf<N> })
  & ([QueryOf<N>] extends [never] ? unknown : { readonly query?: QueryInput<QueryOf<N>> })

/** What a JSON call to endpoint `N` takes besides its name. */
export type Request<N extends EndpointName> =
  & Parts<N>
  & ([JsonBody<PayloadOf<N>>] extends [never] ? unknown : { readonly body: JsonBody<PayloadOf<N>> })
  & { readonly signal?: AbortSignal }

/** The endpoints whose only body is an uploaded form. */
export type UploadName = { [N in EndpointName]: [FormBody<PayloadOf<N>>] extends [never] ? never : N }[EndpointName]
/** The endpoints called with JSON (or nothing): all but the upload-only ones. */
type JsonName = Exclude<EndpointName, { [N in UploadName]: [JsonBody<PayloadOf<N>>] extends [never] ? N : never }[UploadName]>

/** The request, optional when nothing in it is required. */
type RequestArgument<N extends EndpointName> = object extends Request<N> ? [request?: Request<N>] : [request: Request<N>]

/** The table's entry for each endpoint: the compiler checks it lists every endpoint with its method. */
const routes: { readonly [N in EndpointName]: { readonly method: EndpointOf<N>["method"]; readonly path: string; readonly successes: ReadonlyArray<number> } } = adminRoutes
// …and no endpoint the contract does not have.
const noExtraRoutes: Exclude<keyof typeof adminRoutes, EndpointName> extends never ? true : never = true
void noExtraRoutes

const urlOf = <N extends EndpointName>(name: N, parts: { readonly path?: object; readonly query?: object }): string => {
  const path = parts.path as Readonly<Record<string, string>> | undefined
  const url = routes[name].path.replace(/:(\w+)/g, (_match, key: string) => {
    const value = path?.[key]
    if (value === undefined) throw new Error(`${name}: the path parameter ${key} is missing`)
    return encodeURIComponent(value)
  })
  const query = new URLSearchParams()
  for (const [key, value] of Object.entries(parts.query ?? {})) {
    if (value !== undefined) query.set(key, String(value))
  }
  const search = query.toString()
  return search === "" ? url : `${url}?${search}`
}

/** The answer if its status is one the endpoint declares a success and its body is not an error body. */
const answerOf = <N extends EndpointName>(name: N, status: number, text: string): Answer<N> => {
  if (routes[name].successes.includes(status)) {
    const body = JSON.parse(text) as Answer<N> | { readonly errors?: unknown }
    if (!(typeof body === "object" && body !== null && "errors" in body)) return body as Answer<N>
  }
  throw parseErrors(status, text)
}

/** Calls an admin endpoint by name and resolves its whole answer (`{data, meta?}`). */
export const request = async <N extends JsonName>(name: N, ...[options]: RequestArgument<N>): Promise<Answer<N>> => {
  const parts = (options ?? {}) as { readonly path?: object; readonly query?: object; readonly body?: unknown; readonly signal?: AbortSignal }
  const response = await fetch(urlOf(name, parts), {
    method: routes[name].method,
    credentials: "same-origin",
    headers: headers(parts.body !== undefined),
    body: parts.body === undefined ? null : JSON.stringify(parts.body),
    ...(parts.signal === undefined ? {} : { signal: parts.signal })
  })
  return answerOf(name, response.status, await response.text())
}

/** Calls an admin endpoint by name and resolves the `data` of its answer. */
export const api = <N extends JsonName>(name: N, ...options: RequestArgument<N>): Promise<Data<N>> =>
  request(name, ...options).then((answer) => dataOf<N>(answer))

/** A multipart upload with progress (fetch cannot report upload progress; XMLHttpRequest can); resolves the answer's `data`. */
export const upload = <N extends UploadName>(
  name: N,
  options: Parts<N> & { readonly form: FormData; readonly onProgress: (fraction: number) => void }
): Promise<Data<N>> =>
  new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open(routes[name].method, urlOf(name, options as { readonly path?: object; readonly query?: object }))
    for (const [header, value] of Object.entries(headers(false))) xhr.setRequestHeader(header, value)
    xhr.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) options.onProgress(event.loaded / event.total)
    })
    xhr.addEventListener("load", () => {
      try {
        const answer = answerOf(name, xhr.status, xhr.responseText)
        options.onProgress(1)
        resolve(dataOf<N>(answer))
      } catch (failure) {
        reject(failure)
      }
    })
    xhr.addEventListener("error", () => reject(new ApiError(0, [{ code: "NetworkError", status: "0", detail: "The upload failed: the server could not be reached" }])))
    xhr.send(options.form)
  })

/** The path parameters of an extension's endpoints from its id `vendor/name`. */
export const extensionPath = (id: string): ExtensionPath => {
  const slash = id.indexOf("/")
  return { vendor: id.slice(0, slash), name: id.slice(slash + 1) }
}

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
