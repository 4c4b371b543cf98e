import { HttpServerResponse } from "@effect/platform"
import { Cause, Data, Effect } from "effect"

// Every error answer of the server has one shape (docs/http.md "Errors"):
//   {"errors":[{"code":"<Tag>","status":"<http status>","detail":"<message>"}]}
// Known failures keep their tag as the code; anything unexpected is a 500 that says nothing internal.

export class HttpFailure extends Data.TaggedError("HttpFailure")<{
  readonly status: number
  readonly code: string
  readonly detail: string
  /** Extra fields per problem (validation errors name the setting). */
  readonly problems?: ReadonlyArray<{ readonly path: string; readonly message: string }>
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
export const notReady = () => new HttpFailure({ status: 503, code: "NotReady", detail: "the runtime is still booting" })

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

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" ? error.message : String(error)

/** Known failures of the layers below, by tag. */
const statusByTag: Readonly<Record<string, number>> = {
  RouteNotFound: 404,
  ExtensionNotFound: 404,
  RequestError: 400,
  ParseError: 400,
  MultipartError: 400,
  ManifestInvalid: 422,
  OperationFailed: 422,
  LockHeld: 409,
  PlanInvalid: 422,
  DesiredStateInvalid: 422,
  NotAvailableYet: 501
}

/** Renders a failure (or 500 for anything not known, logged with its cause). */
export const renderFailure = (error: unknown): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  if (error instanceof HttpFailure) return Effect.succeed(errorResponse(error.status, error.code, error.detail, error.problems))
  const tag = tagOf(error)
  if (tag === "OperationRefused") {
    const reason = (error as { reason?: unknown }).reason
    return Effect.succeed(errorResponse(reason === "not-installed" ? 404 : 409, tag, messageOf(error)))
  }
  if (tag === "RouteNotFound") return Effect.succeed(errorResponse(404, "NotFound", "not found"))
  if (tag !== undefined && tag in statusByTag) return Effect.succeed(errorResponse(statusByTag[tag]!, tag, messageOf(error)))
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
