import { HttpServerResponse } from "@effect/platform"
import type { RequestError, RouteNotFound } from "@effect/platform/HttpServerError"
import type { MultipartError } from "@effect/platform/Multipart"
import { Cause, Data, Effect, Match } from "effect"
import type { ParseError } from "effect/ParseResult"
import type { DesiredStateInvalid, ExtensionNotFound, ManifestInvalid } from "../domain/Errors.js"
import type { OperationFailed, OperationRefused } from "../lifecycle/Errors.js"
import type { PlanInvalid } from "../reconcile/Reconciler.js"
import type { DatabaseUnusable } from "../store/Database.js"
import type { LockHeld } from "../store/OperationLock.js"
import type { StoreError } from "../store/StoreError.js"

// Every error answer of the server has one shape (docs/http.md "Errors"):
//   {"errors":[{"code":"<Tag>","status":"<http status>","detail":"<message>"}]}
// Known failures keep their tag as the code; anything unexpected is a 500 that says nothing internal.

export class HttpFailure extends Data.TaggedError("HttpFailure")<{
  readonly status: number
  readonly code: string
  readonly detail: string
  /** Extra fields per problem (validation errors name the setting). */
  readonly problems?: ReadonlyArray<{ readonly path: string; readonly message: string }>
  /** Headers of the answer (Retry-After of a 429). */
  readonly headers?: Readonly<Record<string, string>>
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
/** The panel did not answer (docs/http.md "Authentication under a real panel"): 503 naming its URL, never a 401. */
export const panelUnavailable = (error: { readonly url: string; readonly message: string }) =>
  new HttpFailure({ status: 503, code: "PanelUnavailable", detail: error.message })
export const notReady = () => new HttpFailure({ status: 503, code: "NotReady", detail: "the runtime is still booting" })
/** An extension installed and enabled, but whose files this replica could not get (docs/operations.md "Running replicas"). */
export const unavailableHere = (id: string, reason: string) =>
  new HttpFailure({ status: 503, code: "ExtensionUnavailable", detail: `${id} is unavailable on this replica: ${reason}` })
/** An extension the generation does not serve: 503 when it is unavailable on this replica, else 404. */
export const notServed = (generation: { readonly unavailable: ReadonlyMap<string, string> }, id: string, detail: string) => {
  const reason = generation.unavailable.get(id)
  return reason === undefined ? notFound(detail) : unavailableHere(id, reason)
}

export interface ErrorEntry {
  readonly code: string
  readonly status: string
  readonly detail: string
  readonly source?: { readonly pointer: string }
}

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

/** The failures of the layers below that have an answer of their own (anything else is a 500). */
type KnownFailure =
  | RouteNotFound
  | RequestError
  | ParseError
  | MultipartError
  | ManifestInvalid
  | DesiredStateInvalid
  | PlanInvalid
  | ExtensionNotFound
  | DatabaseUnusable
  | LockHeld
  | StoreError
  | OperationRefused
  | OperationFailed

/**
 * Status and code per failure. Exhaustive over KnownFailure: a new kind of operation failure does not
 * compile until it has its status here. A store that cannot be reached is 503 (retry later), never 422.
 */
const answerOf = Match.type<KnownFailure>().pipe(
  Match.tagsExhaustive({
    RouteNotFound: () => ({ status: 404, code: "NotFound", detail: "not found" }),
    RequestError: (error) => ({ status: 400, code: error._tag, detail: error.message }),
    ParseError: (error) => ({ status: 400, code: error._tag, detail: error.message }),
    MultipartError: (error) => ({ status: 400, code: error._tag, detail: error.message }),
    ManifestInvalid: (error) => ({ status: 422, code: error._tag, detail: error.message }),
    DesiredStateInvalid: (error) => ({ status: 422, code: error._tag, detail: error.message }),
    PlanInvalid: (error) => ({ status: 422, code: error._tag, detail: error.message }),
    ExtensionNotFound: (error) => ({ status: 404, code: error._tag, detail: error.message }),
    DatabaseUnusable: (error) => ({ status: 503, code: error._tag, detail: error.message }),
    LockHeld: (error) => ({ status: 409, code: error._tag, detail: error.message }),
    StoreError: (error) => ({ status: 503, code: error._tag, detail: error.message }),
    OperationRefused: (error) => ({ status: error.reason === "not-installed" ? 404 : 409, code: error._tag, detail: error.message }),
    SourceRejected: (error) => ({ status: 422, code: error._tag, detail: error.message }),
    SourceUnreachable: (error) => ({ status: 502, code: error._tag, detail: error.message }),
    MigrationsFailed: (error) => ({ status: 422, code: error._tag, detail: error.message }),
    StoreUnavailable: (error) => ({ status: 503, code: error._tag, detail: error.message }),
    FilesFailed: (error) => ({ status: 500, code: error._tag, detail: error.message })
  })
)

const knownTags: Readonly<Record<KnownFailure["_tag"], true>> = {
  RouteNotFound: true,
  RequestError: true,
  ParseError: true,
  MultipartError: true,
  ManifestInvalid: true,
  DesiredStateInvalid: true,
  PlanInvalid: true,
  ExtensionNotFound: true,
  DatabaseUnusable: true,
  LockHeld: true,
  StoreError: true,
  OperationRefused: true,
  SourceRejected: true,
  SourceUnreachable: true,
  MigrationsFailed: true,
  StoreUnavailable: true,
  FilesFailed: true
}

const isKnown = (error: unknown): error is KnownFailure => {
  const tag = tagOf(error)
  return tag !== undefined && Object.hasOwn(knownTags, tag)
}

/** Renders a failure (or 500 for anything not known, logged with its cause). */
export const renderFailure = (error: unknown): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  if (error instanceof HttpFailure) {
    const response = errorResponse(error.status, error.code, error.detail, error.problems)
    return Effect.succeed(error.headers === undefined ? response : HttpServerResponse.setHeaders(response, error.headers))
  }
  if (isKnown(error)) {
    const answer = answerOf(error)
    const response = errorResponse(answer.status, answer.code, answer.detail)
    // A 5xx is the server's trouble: logged with its cause, as unexpected failures are.
    return answer.status >= 500 ? Effect.as(Effect.logError(`request failed: ${answer.detail}`), response) : Effect.succeed(response)
  }
  return Effect.as(Effect.logError("unexpected failure while handling a request", Cause.fail(error)), internalError())
}

export const internalError = () => errorResponse(500, "InternalServerError", "the server failed to handle this request")

/** Turns every failure and defect of a handler into its JSON error answer. */
export const withErrorBodies = <R>(
  effect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R> =>
  effect.pipe(
    Effect.catchAllCause((cause) => {
      const failure = Cause.failureOption(cause)
      if (failure._tag === "Some") return renderFailure(failure.value)
      if (Cause.isInterruptedOnly(cause)) return Effect.succeed(internalError())
      return Effect.as(Effect.logError("unexpected defect while handling a request", cause), internalError())
    })
  )
