import { HttpServerResponse } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import type { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import type { HttpBodyError } from "@effect/platform/HttpBody"
import type { RequestError, RouteNotFound } from "@effect/platform/HttpServerError"
import type { MultipartError } from "@effect/platform/Multipart"
import { Cause, Data, Effect } from "effect"
import type { ParseError } from "effect/ParseResult"
import type { ConfigInvalid, DesiredStateInvalid, ExtensionNotFound, ManifestInvalid } from "../domain/Errors.js"
import { isTooDeepJson, tooDeepJson } from "../domain/JsonDepth.js"
import type { OperationFailed, OperationRefused } from "../lifecycle/Errors.js"
import type { PlanInvalid } from "../reconcile/Reconciler.js"
import type { DatabaseUnusable } from "../store/Database.js"
import type { LockHeld } from "../store/OperationLock.js"
import type { StoreError } from "../store/StoreError.js"
import type { PanelServerConflict } from "../panel/Servers.js"
import type { LookupsLimited, PanelUnavailable } from "../panel/Access.js"
import type {
  RegistryFetchFailed,
  RegistryIndexExpired,
  RegistryIndexInvalid,
  RegistryIndexRolledBack,
  RegistryIndexSignatureInvalid,
  RegistryIndexUnsigned,
  RegistryLookupFailed,
  RegistryNotConfigured,
  RegistryUnknown
} from "../registry/RegistryErrors.js"
import type { ExtensionCodeFailed as RuntimeCodeFailed } from "../runtime/ExtensionCode.js"
import type { ErrorEntry } from "./ErrorBody.js"

// Every error answer of the server has one shape (docs/http.md "Errors"):
//   {"errors":[{"code":"<Tag>","status":"<http status>","detail":"<message>"}]}
// Known failures keep their tag as the code; anything unexpected is a 500 that says nothing internal.

/**
 * A route handler of an extension threw or rejected (not on purpose): a 500 whose cause is logged, never
 * sent (http/ExtensionRoutes.ts). Its own tag: runtime/ExtensionCode's ExtensionCodeFailed is the
 * runtime's (boot, tasks, listeners). Declared here, beside the answer table, so this module needs
 * nothing from the routes that use it (no import circle; test/layering).
 */
export class RouteCodeFailed extends Data.TaggedError("RouteCodeFailed")<{ readonly cause: unknown }> {}

export class HttpFailure extends Data.TaggedError("HttpFailure")<{
  readonly status: number
  readonly code: string
  readonly detail: string
  /** Extra fields per problem (validation errors name the setting). */
  readonly problems?: ReadonlyArray<{ readonly path: string; readonly message: string }>
  /** Headers of the answer (Retry-After of a 429). */
  readonly headers?: Readonly<Record<string, string>>
  /** What the log gets instead of the detail: what the caller must not read (an internal address, a socket error). */
  readonly logged?: string
}> {
  override get message() {
    return this.detail
  }
}

export const unauthorized = (detail = "sign in or send an API token (Authorization: Bearer <token>)") =>
  new HttpFailure({ status: 401, code: "Unauthorized", detail })
export const forbidden = (detail: string) => new HttpFailure({ status: 403, code: "Forbidden", detail })
export const notFound = (detail = "not found") => new HttpFailure({ status: 404, code: "NotFound", detail })
export const badRequest = (detail: string) => new HttpFailure({ status: 400, code: "BadRequest", detail })
/**
 * The 400 for a JSON body read with `parseJsonWithinDepth` that is not `shape`; when the refusal was its
 * nesting, the detail names the limit (docs/decisions.md "JSON from outside nests at most 64 levels").
 */
export const jsonBodyRefused = (shape: string, error: unknown) =>
  badRequest(`the body must be JSON: ${shape}${isTooDeepJson(error) ? `; ${tooDeepJson}` : ""}`)
/** The one CSRF failure (docs/http.md "Errors"): 403 with the check's detail (http/Auth.ts `csrfVerdict`: the rule's headers, the origins). */
export const csrfMismatch = (detail: string) => new HttpFailure({ status: 403, code: "CsrfTokenMismatch", detail })
/**
 * The panel did not answer (docs/http.md "Authentication under a real panel"): 503, never a 401. The caller
 * (anyone, signed in or not) reads only that the panel is unavailable; its internal URL and the socket error
 * go to the log, and `host doctor` shows them (docs/http.md "Limits").
 */
export const panelUnavailable = (error: { readonly url: string; readonly message: string }) =>
  new HttpFailure({ status: 503, code: "PanelUnavailable", detail: "the panel is unavailable; try again shortly", logged: error.message })
/** A real panel's lookup failed: it was unavailable (503), or the caller's address looked up too many new credentials (429). */
export const panelRefusal = (error: PanelUnavailable | LookupsLimited) =>
  error._tag === "LookupsLimited"
    ? new HttpFailure({
      status: 429,
      code: "RateLimited",
      detail: error.message,
      headers: { "retry-after": String(error.retryAfterSeconds) }
    })
    : panelUnavailable(error)
export const notReady = () => new HttpFailure({ status: 503, code: "NotReady", detail: "the runtime is still booting" })
/** An extension installed and enabled, but whose files this replica could not get (docs/operations.md "Running replicas"). */
export const unavailableHere = (id: string, reason: string) =>
  new HttpFailure({ status: 503, code: "ExtensionUnavailable", detail: `${id} is unavailable on this replica: ${reason}` })
/** An extension the generation does not serve: 503 when it is unavailable on this replica, else 404. */
export const notServed = (generation: { readonly unavailable: ReadonlyMap<string, string> }, id: string, detail: string) => {
  const reason = generation.unavailable.get(id)
  return reason === undefined ? notFound(detail) : unavailableHere(id, reason)
}

/** One entry of the error body; its shape is declared once, in http/ErrorBody.ts. */
export type { ErrorEntry }

export const errorBody = (status: number, code: string, detail: string, problems?: ReadonlyArray<{ path: string; message: string }>) => ({
  errors: problems !== undefined && problems.length > 0
    ? problems.map((problem): ErrorEntry => ({
      code,
      status: String(status),
      detail: `${problem.path}: ${problem.message}`,
      source: { pointer: `/${problem.path.split(".").join("/")}` }
    }))
    : [{ code, status: String(status), detail } satisfies ErrorEntry]
})

export const errorResponse = (status: number, code: string, detail: string, problems?: ReadonlyArray<{ path: string; message: string }>) =>
  HttpServerResponse.unsafeJson(errorBody(status, code, detail, problems), { status })

const tagOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string" ? error._tag : undefined

/**
 * Every failure that may reach the HTTP answer. Handlers are typed against this union (`withErrorBodies`
 * accepts nothing else), and `answers` below has one entry per tag: a new error type that can reach a
 * handler does not compile until it is given its answer here.
 */
export type HttpError =
  | HttpFailure
  | RouteNotFound
  | RequestError
  | ParseError
  | MultipartError
  | HttpBodyError
  | HttpApiDecodeError
  | ManifestInvalid
  | DesiredStateInvalid
  | ConfigInvalid
  | PlanInvalid
  | ExtensionNotFound
  | DatabaseUnusable
  | LockHeld
  | StoreError
  | OperationRefused
  | OperationFailed
  | PlatformError
  | PanelServerConflict
  | RegistryLookupFailed
  | RegistryIndexInvalid
  | RegistryFetchFailed
  | RegistryNotConfigured
  | RegistryIndexUnsigned
  | RegistryIndexSignatureInvalid
  | RegistryIndexRolledBack
  | RegistryIndexExpired
  | RegistryUnknown
  | RuntimeCodeFailed
  | RouteCodeFailed

/**
 * A path, query or body the contract's schema refused (HttpApiBuilder decoded it): the first problem of each
 * field, with the field, on one line (an optional field's union adds "Expected undefined" after the real
 * problem; the schema's tree of the refusal would print the whole schema).
 */
const decodeRefusal = (error: HttpApiDecodeError) => {
  const byField = new Map<string, string>()
  for (const issue of error.issues) {
    const field = issue.path.join(".")
    if (!byField.has(field)) byField.set(field, field === "" ? issue.message : `${field}: ${issue.message}`)
  }
  return `the request does not fit the endpoint's contract: ${[...byField.values()].join("; ")}`
}

/** What a failure answers: a status, code and detail of its own, or the logged 500 that says nothing internal. */
type Answer =
  | {
    readonly status: number
    readonly code: string
    readonly detail: string
    readonly problems?: ReadonlyArray<{ readonly path: string; readonly message: string }> | undefined
    readonly headers?: Readonly<Record<string, string>> | undefined
  }
  | "internal"

const own = (status: number) => (error: { readonly _tag: string; readonly message: string }): Answer => ({ status, code: error._tag, detail: error.message })

/**
 * Status and code per failure, one entry per tag of HttpError (a missing one does not compile). A store
 * that cannot be reached is 503 (retry later), never 422. The "internal" ones are failures nobody gave an
 * answer to so far; they stay the logged 500 they always were, but now by name.
 */
const answers: { readonly [Tag in HttpError["_tag"]]: (error: Extract<HttpError, { readonly _tag: Tag }>) => Answer } = {
  HttpFailure: (error) => ({ status: error.status, code: error.code, detail: error.detail, problems: error.problems, headers: error.headers }),
  RouteNotFound: () => ({ status: 404, code: "NotFound", detail: "not found" }),
  RequestError: own(400),
  ParseError: own(400),
  MultipartError: own(400),
  HttpApiDecodeError: (error) => ({ status: 400, code: "BadRequest", detail: decodeRefusal(error) }),
  HttpBodyError: () => "internal",
  ManifestInvalid: own(422),
  DesiredStateInvalid: own(422),
  ConfigInvalid: () => "internal",
  PlanInvalid: own(422),
  ExtensionNotFound: own(404),
  DatabaseUnusable: own(503),
  LockHeld: own(409),
  StoreError: own(503),
  OperationRefused: (error) => ({ status: error.reason === "not-installed" ? 404 : 409, code: error._tag, detail: error.message }),
  SourceRejected: own(422),
  SourceUnreachable: own(502),
  MigrationsFailed: own(422),
  StoreUnavailable: own(503),
  FilesFailed: own(500),
  BadArgument: () => "internal",
  SystemError: () => "internal",
  PanelServerConflict: () => "internal",
  RegistryLookupFailed: () => "internal",
  RegistryIndexInvalid: () => "internal",
  RegistryFetchFailed: () => "internal",
  RegistryNotConfigured: () => "internal",
  // A registry's index refused by its trust checks (docs/registry.md "Trust"): the registry's failure.
  RegistryIndexUnsigned: own(502),
  RegistryIndexSignatureInvalid: own(502),
  RegistryIndexRolledBack: own(502),
  RegistryIndexExpired: own(502),
  RegistryUnknown: own(422),
  ExtensionCodeFailed: () => "internal",
  RouteCodeFailed: () => "internal"
}

// A failure whose tag has no entry can only be one that left the type system (a cast, a library's
// untyped channel): it is answered as what it is, a logged 500, rather than breaking the renderer.
const answerOf = (error: HttpError): Answer =>
  isHttpError(error) ? (answers[error._tag] as (error: HttpError) => Answer)(error) : "internal"

/** Whether a value is one of the failures of HttpError (for the edges whose error channel is untyped). */
export const isHttpError = (error: unknown): error is HttpError => {
  const tag = tagOf(error)
  return tag !== undefined && Object.hasOwn(answers, tag)
}

/** Renders a failure (a 500 for the ones without an answer, logged with its cause). */
export const renderFailure = (error: HttpError): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const answer = answerOf(error)
  if (answer === "internal") {
    return Effect.as(Effect.logError("unexpected failure while handling a request", Cause.fail(error)), internalError())
  }
  const response = errorResponse(answer.status, answer.code, answer.detail, answer.problems)
  const answered = answer.headers === undefined ? response : HttpServerResponse.setHeaders(response, answer.headers)
  if (error._tag === "HttpFailure" && error.logged !== undefined) return Effect.as(Effect.logWarning(`request failed: ${error.logged}`), answered)
  // A 5xx is the server's trouble: logged with its cause, as unexpected failures are. HttpFailure's own
  // 5xx (a 503 while booting, a stream cap) are answers the server chose, not troubles.
  return answer.status >= 500 && error._tag !== "HttpFailure"
    ? Effect.as(Effect.logError(`request failed: ${answer.detail}`), answered)
    : Effect.succeed(answered)
}

/** The body a failure answers with (the contracts' HostError encodes through it). */
export const errorBodyOf = (error: HttpError) => {
  const answer = answerOf(error)
  return answer === "internal"
    ? errorBody(500, "InternalServerError", internalDetail)
    : errorBody(answer.status, answer.code, answer.detail, answer.problems)
}

const internalDetail = "the server failed to handle this request"

export const internalError = () => errorResponse(500, "InternalServerError", internalDetail)

/** The JSON error answer to a handler's failure or defect. */
const causeAnswer = (cause: Cause.Cause<HttpError>): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some") return renderFailure(failure.value)
  if (Cause.isInterruptedOnly(cause)) return Effect.succeed(internalError())
  return Effect.as(Effect.logError("unexpected defect while handling a request", cause), internalError())
}

/** Turns every failure and defect of a handler into its JSON error answer. */
export const withErrorBodies = <E extends HttpError, R>(
  effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R> => Effect.catchAllCause(effect, causeAnswer)

/**
 * `withErrorBodies`, and `finish` applied to every answer (the handler's or the error's), in one step: the
 * app's outermost wrapper, so one continuation per request instead of two (docs/decisions.md "The client group is built in
 * two services").
 */
export const withErrorBodiesThen = <E extends HttpError, R>(
  effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  finish: (response: HttpServerResponse.HttpServerResponse) => HttpServerResponse.HttpServerResponse
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R> =>
  Effect.matchCauseEffect(effect, {
    onFailure: (cause) => Effect.map(causeAnswer(cause), finish),
    onSuccess: (response) => Effect.succeed(finish(response))
  })
