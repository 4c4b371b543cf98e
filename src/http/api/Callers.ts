import { HttpRouter, HttpServerRequest, UrlParams } from "@effect/platform"
import { Clock, Effect, Either, Layer, Option } from "effect"
import { HostConfig } from "../../config/HostConfig.js"
import { LiveRuntime } from "../../runtime/LiveState.js"
import { unsafeMethods } from "../Auth.js"
import { TrustedProxies } from "../ClientAddress.js"
import { type AuthenticatedRequest, authenticateRequest, authenticateWith, authenticatorOf, csrfChecked, currentRequest, header, type ServerSessions } from "../Context.js"
import { forbidden, HttpFailure, type HttpError, notFound, panelUnavailable, unauthorized } from "../Errors.js"
import * as Webhook from "../Webhook.js"
import {
  Admin,
  type AdminCaller,
  AdminOrSigned,
  AdminUpload,
  Anyone,
  OwnsServer,
  type ReconcileCallerService,
  SignedIn,
  type SignedInCaller
} from "../contracts/Security.js"

// The checks behind the statements of who may call an endpoint (http/contracts/Security.ts), as the
// HttpApiMiddleware layers HttpApiBuilder runs around each route, before anything of the request is
// decoded. They hold the runtime, the session signer, the trusted proxies and the configuration from the
// server's start; a request brings only itself. Status codes and error bodies are the ones the handlers
// answered when each checked its own caller (docs/http.md "Authentication", "CSRF", "Admin JSON API").

type Check<A> = Effect.Effect<A, HttpError, HttpRouter.HttpRouter.Provided>

/** Where the admin API's CSRF token belongs, as its refusal words it. */
const adminCsrfPlaces = "X-CSRF-Token header or _token form field"

const make = Effect.gen(function*() {
  // The runtime, the session signer and the panel lookups' limit, read as the other routes read them.
  const authenticator = authenticatorOf(yield* Effect.context<LiveRuntime | ServerSessions>())
  const proxies = yield* TrustedProxies
  const hostConfig = yield* HostConfig
  const authenticated = authenticateWith(authenticator)

  /** The CSRF check of an unsafe request made with the session cookie; undefined for a safe method, which needs none. */
  const csrfStep = (caller: AuthenticatedRequest, options: { readonly formToken?: string | undefined; readonly expected?: string } = {}) =>
    unsafeMethods.has(caller.request.method) ? csrfChecked(caller, proxies, options) : undefined

  /** The CSRF check of an unsafe request made with the session cookie (others pass at once). */
  const csrf = (caller: AuthenticatedRequest, options: { readonly formToken?: string | undefined; readonly expected?: string } = {}) =>
    csrfStep(caller, options) ?? Effect.void

  const signedInCaller = (caller: AuthenticatedRequest): Either.Either<SignedInCaller, HttpError> =>
    caller.auth.user === undefined ? Either.left(unauthorized()) : Either.right({ ...caller, user: caller.auth.user })

  const signedInUnchecked: Check<SignedInCaller> = Effect.flatMap(authenticated, signedInCaller)

  /** A signed-in caller, CSRF-checked: the caller itself (an effect of one step) when the method needs none. */
  const signedInChecked = (authenticatedCaller: AuthenticatedRequest): Effect.Effect<SignedInCaller, HttpError> => {
    const caller = signedInCaller(authenticatedCaller)
    if (Either.isLeft(caller)) return caller
    const check = csrfStep(caller.right)
    return check === undefined ? caller : Effect.as(check, caller.right)
  }

  // signedInUnchecked and the CSRF check in one step that reads the request from the fiber: a GET whose
  // caller the driver knows (the hottest typed routes) runs no effect for either, since every effect step
  // of a check around a route costs (docs/decisions.md "A statement is one check").
  const signedIn: Check<SignedInCaller> = Effect.withFiberRuntime((fiber) => {
    const answer = authenticateRequest(authenticator, currentRequest(fiber))
    if (!Either.isEither(answer)) return Effect.flatMap(answer, signedInChecked)
    return Either.isLeft(answer) ? Either.left(answer.left) : signedInChecked(answer.right)
  })

  /** The owner of `{server}` or an admin: 404 for a server the user cannot see, 403 for a subuser of it. */
  const ownsServer = Effect.gen(function*() {
    const caller = yield* signedInUnchecked
    const { server: id = "" } = yield* HttpRouter.params
    const server = yield* caller.live.access.serverAccess(caller.auth, id).pipe(Effect.mapError(panelUnavailable))
    if (server === undefined) return yield* notFound(`server ${id} not found`)
    if (server.role === "subuser") return yield* forbidden("only the server's owner or an administrator manages extension access")
    yield* csrf(caller)
    return { ...caller, serverId: id, server }
  })

  const signedInAdmin = Effect.flatMap(signedInUnchecked, (caller) =>
    caller.user.admin ? Effect.succeed(caller) : Effect.fail(forbidden("this needs a panel administrator")))

  /**
   * The admin API's CSRF rule: the header, a `formToken` the handler read from a multipart form, or the
   * `_token` field of a urlencoded form (the embedded panel's rule; a real panel's refusal names its own headers).
   */
  const adminCsrf = (caller: SignedInCaller, formToken: string | undefined) =>
    Effect.gen(function*() {
      const passed = yield* Effect.either(csrf(caller, { formToken, expected: adminCsrfPlaces }))
      if (passed._tag === "Right") return
      if (formToken !== undefined || !(header(caller.request, "content-type") ?? "").startsWith("application/x-www-form-urlencoded")) {
        return yield* passed.left
      }
      const formField = yield* caller.request.urlParamsBody.pipe(
        Effect.map((params) => Option.getOrUndefined(UrlParams.getFirst(params, "_token"))),
        Effect.orElseSucceed(() => undefined)
      )
      yield* csrf(caller, { formToken: formField, expected: adminCsrfPlaces })
    })

  const actorOf = (caller: SignedInCaller): AdminCaller["actor"] => ({ type: "admin", user: caller.user.username })

  const admin: Check<AdminCaller> = Effect.flatMap(signedInAdmin, (caller) => Effect.as(adminCsrf(caller, undefined), { ...caller, actor: actorOf(caller) }))

  const adminUpload = Effect.map(signedInAdmin, (caller) => ({
    ...caller,
    actorAfterCsrf: (formToken: string | undefined) => Effect.as(adminCsrf(caller, formToken), actorOf(caller))
  }))

  /**
   * A request carrying X-Host-Signature-256 is a webhook: it must be signed with `webhook_secret` and carry
   * an unanswered X-Host-Delivery (the handler claims it), and needs no session, token or CSRF token.
   * Anything else is an admin's, whose 401 names all three ways.
   */
  const adminOrSigned: Check<ReconcileCallerService> = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const signature = header(request, Webhook.signatureHeader)
    if (signature === undefined) {
      const caller = yield* authenticated
      if (caller.auth.user === undefined) {
        return yield* unauthorized(
          `sign the request (${Webhook.signatureHeader} with webhook_secret, docs/gitops.md), sign in, or send an admin API token`
        )
      }
      const user = caller.auth.user
      if (!user.admin) return yield* forbidden("this needs a panel administrator")
      yield* adminCsrf({ ...caller, user }, undefined)
      return { door: { _tag: "Admin", user: user.username }, bodyText: yield* request.text } satisfies ReconcileCallerService
    }
    const { config } = hostConfig
    if (config.webhook_secret === "") {
      return yield* new HttpFailure({
        status: 401,
        code: "WebhookNotConfigured",
        detail: "signed webhooks are refused: no webhook_secret is configured (config/host.yaml or HOST_WEBHOOK_SECRET)"
      })
    }
    // The delivery id is part of what is signed (docs/gitops.md), so it is read first.
    const delivery = header(request, Webhook.deliveryHeader)
    if (delivery === undefined || !Webhook.validDelivery(delivery)) {
      return yield* new HttpFailure({
        status: 400,
        code: "DeliveryMissing",
        detail: `a signed request needs ${Webhook.deliveryHeader}: a unique id of up to 100 visible characters (a UUID, the CI job id)`
      })
    }
    // The signature covers the exact bytes received, so the body is read once, as bytes.
    const body = new Uint8Array(yield* request.arrayBuffer)
    const nowSeconds = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    yield* Either.match(
      Webhook.verifySignature({
        secret: config.webhook_secret,
        body,
        header: signature,
        delivery,
        nowSeconds,
        legacyAllowed: config.webhook_legacy_signatures
      }),
      {
        onLeft: (refusal) => Effect.fail(new HttpFailure({ status: 401, code: refusal.code, detail: refusal.detail })),
        onRight: () => Effect.void
      }
    )
    return { door: { _tag: "Webhook", delivery }, bodyText: new TextDecoder().decode(body) } satisfies ReconcileCallerService
  })

  return { signedIn, ownsServer, admin, adminUpload, adminOrSigned }
})

/**
 * The implementation of every statement, for HttpApiBuilder (http/api/Handlers.ts): each statement's
 * middleware is its check, run once around the route (contracts/Security.ts: no scheme is decoded first).
 */
export const CallersLive = Layer.unwrapEffect(Effect.map(make, (checks) =>
  Layer.mergeAll(
    Layer.succeed(Anyone, Effect.void),
    Layer.succeed(SignedIn, checks.signedIn),
    Layer.succeed(OwnsServer, checks.ownsServer),
    Layer.succeed(Admin, checks.admin),
    Layer.succeed(AdminUpload, checks.adminUpload),
    Layer.succeed(AdminOrSigned, checks.adminOrSigned)
  )))
