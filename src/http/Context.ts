import { HttpServerRequest } from "@effect/platform"
import { Context, Deferred, Effect, Either, type Fiber, Option } from "effect"
import type { PanelUser } from "../panel/Panel.js"
import type { Sessions } from "../panel/Session.js"
import type { StoreError } from "../store/StoreError.js"
import { LiveRuntime, type LiveGeneration } from "../runtime/LiveState.js"
import { anonymous, identityLookupGate } from "../panel/Access.js"
import { csrfVerdict, type RequestAuth, unsafeMethods } from "./Auth.js"
import { TrustedProxies, type TrustedProxiesService } from "./ClientAddress.js"
import { csrfMismatch, HttpFailure, notReady, panelRefusal, unauthorized } from "./Errors.js"
import { type LookupGate, PanelLookupGate } from "./RateLimits.js"

// What every handler of the server shares: the session signer and the request's user.

export class ServerSessions extends Context.Tag("host/http/ServerSessions")<ServerSessions, Sessions<StoreError>>() {}

export interface ServerOptions {
  /** Folders searched for `/host/bridge.js` and `/host/utility.css`, in order. */
  readonly publicDirectories: ReadonlyArray<string>
  /** The framework checkout (for its own assets). */
  readonly frameworkRoot: string
  /** The environment the desired state's `${VAR}`s are read from: the one the CLI was started with. */
  readonly env: Readonly<Record<string, string | undefined>>
}

export class ServerSettings extends Context.Tag("host/http/ServerSettings")<ServerSettings, ServerOptions>() {}

/** Completed when the server starts closing: long-lived responses (the events stream) end then. */
export class ServerClosing extends Context.Tag("host/http/ServerClosing")<ServerClosing, Deferred.Deferred<void>>() {}

const headerOf = (request: HttpServerRequest.HttpServerRequest, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === "string" ? value : undefined
}

/** The current generation, or 503 while the runtime boots. */
export const currentGeneration = Effect.flatMap(Effect.flatMap(LiveRuntime, (runtime) => runtime.current), (live) => {
  return live === undefined ? Effect.fail(notReady()) : Effect.succeed(live)
})

export interface AuthenticatedRequest {
  readonly live: LiveGeneration
  readonly request: HttpServerRequest.HttpServerRequest
  readonly auth: RequestAuth
}

const answered = (live: LiveGeneration, request: HttpServerRequest.HttpServerRequest, auth: RequestAuth): Either.Either<AuthenticatedRequest, HttpFailure> =>
  auth.invalidToken ? Either.left(unauthorized("the API token is not valid")) : Either.right({ live, request, auth })

/** The database could not say whether a session was signed out: 503, never a guess either way. */
const revocationUnknown = () => new HttpFailure({ status: 503, code: "StoreUnavailable", detail: "the database is unavailable: try again shortly" })

// Whether a request's session was signed out, read once per request (a handler may authenticate twice).
const revokedPerRequest = new WeakMap<HttpServerRequest.HttpServerRequest, boolean>()

/**
 * An embedded session signed out on any replica is anonymous from the next request on: the database is
 * read on every request made with the cookie (docs/http.md "Signing out").
 */
const unlessRevoked = (sessions: Sessions<StoreError>, request: HttpServerRequest.HttpServerRequest, auth: RequestAuth) => {
  if (auth.via !== "session" || auth.session === undefined) return Effect.succeed(auth)
  const known = revokedPerRequest.get(request)
  if (known !== undefined) return Effect.succeed(known ? anonymous : auth)
  return Effect.map(Effect.mapError(sessions.revoked(auth.session), revocationUnknown), (revoked) => {
    revokedPerRequest.set(request, revoked)
    return revoked ? anonymous : auth
  })
}

/** Runs a real panel's identity lookup under the server's per-address limit (docs/http.md "Limits"). */
const withLookupGate = <A, E>(gate: LookupGate | undefined, request: HttpServerRequest.HttpServerRequest, lookup: Effect.Effect<A, E>) =>
  gate === undefined
    ? lookup
    : Effect.locally(lookup, identityLookupGate, gate(Option.getOrUndefined(request.remoteAddress), headerOf(request, "x-forwarded-for")))

/** What authenticating a request needs of the server: its runtime, its session signer and its panel lookups' limit. */
export interface Authenticator {
  readonly runtime: Context.Tag.Service<LiveRuntime>
  readonly sessions: Sessions<StoreError>
  readonly lookupGate: LookupGate | undefined
}

/**
 * The request's generation and user (a wrong Bearer token is 401 right away). Every request but a few
 * static files comes through here, so when the driver answers synchronously (`peek`: the embedded panel
 * always does) and no session needs its sign-out read, the answer is an `Either` — an effect of one step,
 * and a value the typed endpoints' checks (http/api/Callers.ts) read without running it (docs/decisions.md
 * "A statement is one check"). Otherwise it is the effect that asks a real panel or reads the sign-out.
 */
export const authenticateRequest = (
  { lookupGate, runtime, sessions }: Authenticator,
  request: HttpServerRequest.HttpServerRequest
): Either.Either<AuthenticatedRequest, HttpFailure> | Effect.Effect<AuthenticatedRequest, HttpFailure> => {
  // The generation read synchronously, as the fast lane reads it: one effect step fewer per request.
  const live = runtime.currentNow()
  if (live === undefined) return Either.left(notReady())
  // Unsafe requests are asked of a real panel every time, never of its cache (docs/panels.md "Identity").
  const fresh = unsafeMethods.has(request.method)
  const credentials = { authorization: headerOf(request, "authorization"), cookie: headerOf(request, "cookie"), fresh }
  const known = fresh ? undefined : live.access.peek(credentials, sessions)
  if (known !== undefined) return checkedAnswer(sessions, live, request, known)
  return Effect.flatMap(
    Effect.mapError(withLookupGate(lookupGate, request, live.access.authenticate(credentials, sessions)), panelRefusal),
    (auth) => checkedAnswer(sessions, live, request, auth)
  )
}

/** The request being served, read from the fiber's context in the step that needs it. */
export const currentRequest = (fiber: Fiber.RuntimeFiber<unknown, unknown>): HttpServerRequest.HttpServerRequest =>
  Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)

/** `authenticateRequest` of the request being served. */
export const authenticateWith = (authenticator: Authenticator): Effect.Effect<AuthenticatedRequest, HttpFailure, HttpServerRequest.HttpServerRequest> =>
  Effect.withFiberRuntime((fiber) => authenticateRequest(authenticator, currentRequest(fiber)))

/** `answered`, once a session was checked for a sign-out (`unlessRevoked`); a token or no credential at once. */
const checkedAnswer = (sessions: Sessions<StoreError>, live: LiveGeneration, request: HttpServerRequest.HttpServerRequest, auth: RequestAuth) =>
  auth.via === "session" && auth.session !== undefined
    ? Effect.flatMap(unlessRevoked(sessions, request, auth), (checked) => answered(live, request, checked))
    : answered(live, request, auth)

/** What `authenticateWith` needs, from a context that holds the server's services. */
export const authenticatorOf = (context: Context.Context<LiveRuntime | ServerSessions>): Authenticator => ({
  runtime: Context.get(context, LiveRuntime),
  sessions: Context.get(context, ServerSessions),
  lookupGate: Context.get(context, PanelLookupGate)
})

/** `authenticateWith` reading its services in one step from the context (the routes that are no typed endpoint). */
export const authenticate: Effect.Effect<AuthenticatedRequest, HttpFailure, HttpServerRequest.HttpServerRequest | LiveRuntime | ServerSessions> =
  Effect.contextWithEffect((context: Context.Context<LiveRuntime | ServerSessions>) => authenticateWith(authenticatorOf(context)))

export const requireUser = (auth: RequestAuth): Effect.Effect<PanelUser, HttpFailure> =>
  auth.user === undefined ? Effect.fail(unauthorized()) : Effect.succeed(auth.user)

/**
 * The one CSRF check of an unsafe request (docs/http.md "Authentication (embedded panel)" and
 * "Authentication under a real panel"): the rule is `csrfVerdict`'s, the failure `csrfMismatch`. `formToken`
 * is the `_token` field of a form body; `expected` words where the embedded panel's token belongs when a
 * caller's answer has always named it its own way. Under a real panel the refusal names the panel's
 * headers and the origins compared, whatever the caller words.
 */
export const requireCsrf = (
  caller: AuthenticatedRequest,
  options: { readonly formToken?: string | undefined; readonly expected?: string } = {}
): Effect.Effect<void, HttpFailure, TrustedProxies> => Effect.flatMap(TrustedProxies, (proxies) => csrfChecked(caller, proxies, options))

/** `requireCsrf` with the trusted proxies given. */
export const csrfChecked = (
  caller: AuthenticatedRequest,
  proxies: TrustedProxiesService,
  options: { readonly formToken?: string | undefined; readonly expected?: string } = {}
): Effect.Effect<void, HttpFailure> => {
  const { request } = caller
  const verdict = csrfVerdict(caller.auth, { method: request.method, headers: request.headers, peer: Option.getOrUndefined(request.remoteAddress) }, caller.live.access, {
    formToken: options.formToken,
    expected: options.expected,
    proxies
  })
  return verdict.ok ? Effect.void : Effect.fail(csrfMismatch(verdict.detail))
}

export const header = headerOf
