import { type HttpApi, HttpApiBuilder, type HttpApiEndpoint, type HttpApiGroup, type HttpRouter, HttpServerRequest } from "@effect/platform"
import type { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { Context, Effect, Layer, Scope } from "effect"
import { effectiveSettings } from "../../domain/Settings.js"
import { type ClientBodies, extensionMetadata } from "../../runtime/ClientView.js"
import type { LoadedExtension } from "../../runtime/Runtime.js"
import { type SlotEntry, slotMap } from "../../runtime/Slots.js"
import { SettingsRepo } from "../../store/SettingsRepo.js"
import { type HttpError, notFound } from "../Errors.js"
import * as Diagnostics from "../Diagnostics.js"
import * as PanelPages from "../PanelPages.js"
import * as ServerAccess from "../ServerAccess.js"
import { clientBodyCaching, withCachedETag, withETag } from "../Static.js"
import { HostApi } from "../contracts/Api.js"
import type { AdminActor, ReconcileCaller, ServerOwner, UploadingAdmin } from "../contracts/Security.js"
import { OwnsServer, SignedIn, SignedInUser } from "../contracts/Security.js"
import { type ExtensionMetadata, PublicSettingsBody, type SlotsBody } from "../contracts/Client.js"
import { AdminLive, WebhookLive } from "./AdminHandlers.js"
import { CallersLive } from "./Callers.js"
import { openApiBody } from "./OpenApiDocument.js"
import { respond } from "./Respond.js"

// The typed endpoints (http/contracts) implemented with HttpApiBuilder, and turned into routes the
// server's router mounts beside its own (http/App.ts). Only the routes are taken from HttpApiBuilder: a
// failure goes on to the server's one error renderer (http/Errors.ts), so every error body stays Host's.
// Each endpoint's statement of its caller (http/contracts/Security.ts, checked by api/Callers.ts) runs
// first, around the whole route, so a signed-out request is 401 before its path, query or body is looked
// at; query strings are decoded by HttpApiBuilder, bodies by the handlers (the note atop contracts/Admin.ts).

// The precomputed client bodies are bytes made below http/ (runtime/ClientView.ts), once per generation;
// the compiler holds the values they are made of to the contract here.
const _slotsConform: (entries: ReadonlyArray<SlotEntry>) => typeof SlotsBody.Encoded["data"] = slotMap
const _extensionConforms: (extension: LoadedExtension) => ExtensionMetadata = extensionMetadata
void _slotsConform
void _extensionConforms

const clientBodyAnswer = withCachedETag(clientBodyCaching, "application/json")

/**
 * The three read-only client bodies, precomputed per runtime generation (Server.ts answers them earlier
 * when it can). Plain combinators and one effect per endpoint, made once: this is the hottest Effect route.
 */
const precomputed = (key: keyof ClientBodies) => Effect.map(SignedInUser, ({ live, request }) => clientBodyAnswer(request, live.bodies[key]))
const slotsAnswer = precomputed("slots")
const extensionsAnswer = precomputed("extensions")
const configAnswer = precomputed("config")

/** `/api/client/host/extensions/{vendor}/{name}/settings`: public fields only, stored or default. */
const publicSettings = (path: { readonly vendor: string; readonly name: string }) =>
  Effect.gen(function*() {
    const { live } = yield* SignedInUser
    const id = `${path.vendor}/${path.name}`
    const extension = live.generation.extensions.get(id)
    if (extension === undefined) return yield* notFound(`no enabled extension ${id}`)
    const fields = extension.manifest.settings.filter((field) => field.public)
    const stored = fields.length === 0 ? {} : yield* Effect.flatMap(SettingsRepo, (settings) => settings.getAll(id))
    return yield* respond(PublicSettingsBody, { data: effectiveSettings(fields, stored) })
  })

/**
 * The `client` group, built in `built` (a handful of services: below) and not in the server's context. Why:
 * HttpApiBuilder runs each handler in the context its group was built in merged with the request's, a copy
 * of that whole context on every request (docs/decisions.md "The client group is built in two services").
 * The three precomputed bodies need nothing but their caller, which the request brings; every other
 * handler of the group runs in `server` (the server's context, what the group was built in before) with
 * the request's services on top, merged once as HttpApiBuilder did, so none of them runs with fewer services.
 */
const clientGroup = <S>(server: Context.Context<S>) => {
  const inServer = <A, E, R>(handler: Effect.Effect<A, E, R>) =>
    Effect.mapInputContext(handler, (request: Context.Context<Exclude<R, S>>) => Context.merge(server, request) as Context.Context<R>)
  return HttpApiBuilder.group(HostApi, "client", (handlers) =>
    handlers
      .handle("slots", () => slotsAnswer)
      .handle("extensions", () => extensionsAnswer)
      .handle("config", () => configAnswer)
      .handle("bootstrap", ({ urlParams }) => inServer(PanelPages.bootstrapEndpoint(urlParams.path)))
      .handle("publicSettings", ({ path }) => inServer(publicSettings(path)))
      .handleRaw("diagnostics", () => inServer(Diagnostics.diagnostics))
      .handle("accessList", () => inServer(ServerAccess.list))
      .handleRaw("accessGrant", () => inServer(ServerAccess.grant))
      .handleRaw("accessRevoke", () => inServer(ServerAccess.revoke)))
}

/** What the `client` group's handlers and statements take from the server's context. */
type ClientServices = Layer.Layer.Context<ReturnType<typeof clientGroup<never>>>

/**
 * What the group's build reads from its context besides its router (which comes from the build's memo map,
 * the one router every group joins): the checks of the group's statements, each taken once.
 */
const built = Context.pick(SignedIn, OwnsServer)

const ClientLive = Layer.scopedContext(Effect.gen(function*() {
  const server = yield* Effect.context<ClientServices>()
  // The same memo map and scope as the layers around it, so the group joins their router (Router.use provides it).
  const build = Layer.buildWithMemoMap(clientGroup(server), yield* Layer.CurrentMemoMap, yield* Scope.Scope)
  return yield* Effect.mapInputContext(build, (_: Context.Context<never>) => built(server))
}))

const PanelLive = HttpApiBuilder.group(HostApi, "panel", (handlers) =>
  handlers
    .handle("account", () => PanelPages.account)
    .handle("servers", () => PanelPages.servers)
    .handle("server", ({ path }) => PanelPages.server(path)))

/** `GET /host/openapi.json`: public, revalidated by its ETag (it changes only with a new Host version). */
const MetaLive = HttpApiBuilder.group(HostApi, "meta", (handlers) =>
  handlers.handleRaw("openapi", () =>
    Effect.map(HttpServerRequest.HttpServerRequest, (request) => withETag(request, openApiBody(), "public, no-cache", "application/json"))))

/**
 * What the routes HttpApiBuilder builds can fail with: the errors the contracts declare (every one is
 * HostError, whose type is HttpError) and the decode failure of a path or query. The compiler checks each handler
 * against its endpoint's error schema, and the statements' failures are among them (HttpApiEndpoint.middleware
 * adds a middleware's failure schema to the endpoint's); HttpApiBuilder's router only forgets the type (its
 * error channel is `unknown` whatever the API, middleware or not), so it is stated again here, and checked
 * to be within HttpError.
 */
type ContractFailure =
  | (typeof HostApi extends HttpApi.HttpApi<string, infer Groups, infer ApiError, unknown>
    ? ApiError | HttpApiGroup.HttpApiGroup.Error<Groups> | HttpApiEndpoint.HttpApiEndpoint.Error<HttpApiGroup.HttpApiGroup.Endpoints<Groups>>
    : never)
  | HttpApiDecodeError
const _withinHttpError: (failure: ContractFailure) => HttpError = (failure) => failure
// …and the other way round, so the inference above cannot silently come out as nothing but the decode failure.
const _declaresHostError: (failure: HttpError) => ContractFailure = (failure) => failure
void _withinHttpError
void _declaresHostError

const typed = <R>(router: HttpRouter.HttpRouter<unknown, R>) => router as HttpRouter.HttpRouter<ContractFailure, R>

/**
 * The typed endpoints as a router to mount. The handlers' services are taken from the context this runs
 * in (the server's), as HttpApiBuilder does.
 */
export const apiRoutes = HttpApiBuilder.Router.router.pipe(
  Effect.map(typed),
  Effect.provide(Layer.provideMerge(Layer.provide(Layer.mergeAll(ClientLive, PanelLive, AdminLive, WebhookLive, MetaLive), CallersLive), HttpApiBuilder.Router.Live))
)

/**
 * A handler reads its caller from the statement of its endpoint (http/contracts/Security.ts): one that reads
 * a caller its endpoint's middleware does not provide (an admin handler under an endpoint without `Admin`)
 * leaves that service required here, and this does not compile (test/http/caller-statements.typecheck.ts).
 */
type CallerService = SignedInUser | ServerOwner | AdminActor | UploadingAdmin | ReconcileCaller
type UnprovidedCaller = Extract<Effect.Effect.Context<typeof apiRoutes>, CallerService>
export const callersProvided: [UnprovidedCaller] extends [never] ? true : UnprovidedCaller = true
