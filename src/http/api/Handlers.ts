import { HttpApiBuilder, HttpRouter } from "@effect/platform"
import { Effect, Layer } from "effect"
import { effectiveSettings } from "../../domain/Settings.js"
import { type ClientBodies, extensionMetadata } from "../../runtime/ClientView.js"
import type { LoadedExtension } from "../../runtime/Runtime.js"
import { type SlotEntry, slotMap } from "../../runtime/Slots.js"
import { SettingsRepo } from "../../store/SettingsRepo.js"
import { authenticate, requireUser } from "../Context.js"
import { notFound, typedFailures } from "../Errors.js"
import * as Diagnostics from "../Diagnostics.js"
import * as PanelPages from "../PanelPages.js"
import * as ServerAccess from "../ServerAccess.js"
import { clientBodyCaching, withETag } from "../Static.js"
import { HostApi } from "../contracts/Api.js"
import { type ExtensionMetadata, PublicSettingsBody, type SlotsBody } from "../contracts/Client.js"
import { respond } from "./Respond.js"

// The typed endpoints (http/contracts) implemented with HttpApiBuilder, and turned into routes the
// server's router mounts beside its own (http/App.ts). Only the routes are taken from HttpApiBuilder: a
// failure goes on to the server's one error renderer (http/Errors.ts), so every error body stays Host's,
// and bodies with a payload are decoded inside the handler, after the caller is known (a signed-out
// request is 401 before its body is looked at), with the handler's own message.

// The precomputed client bodies are bytes made below http/ (runtime/ClientView.ts), once per generation;
// the compiler holds the values they are made of to the contract here.
const _slotsConform: (entries: ReadonlyArray<SlotEntry>) => typeof SlotsBody.Encoded["data"] = slotMap
const _extensionConforms: (extension: LoadedExtension) => ExtensionMetadata = extensionMetadata
void _slotsConform
void _extensionConforms

/** The three read-only client bodies, precomputed per runtime generation: a request only picks the bytes. */
const precomputed = (key: keyof ClientBodies) =>
  Effect.gen(function*() {
    const { auth, live, request } = yield* authenticate
    yield* requireUser(auth)
    return withETag(request, live.bodies[key], clientBodyCaching, "application/json")
  })

/** `/api/client/host/extensions/{vendor}/{name}/settings`: public fields only, stored or default. */
const publicSettings = (path: { readonly vendor: string; readonly name: string }) =>
  Effect.gen(function*() {
    const { auth, live } = yield* authenticate
    yield* requireUser(auth)
    const id = `${path.vendor}/${path.name}`
    const extension = live.generation.extensions.get(id)
    if (extension === undefined) return yield* notFound(`no enabled extension ${id}`)
    const fields = extension.manifest.settings.filter((field) => field.public)
    const stored = fields.length === 0 ? {} : yield* Effect.flatMap(SettingsRepo, (settings) => settings.getAll(id))
    return yield* respond(PublicSettingsBody, { data: effectiveSettings(fields, stored) })
  })

const ClientLive = HttpApiBuilder.group(HostApi, "client", (handlers) =>
  handlers
    .handle("slots", () => precomputed("slots"))
    .handle("extensions", () => precomputed("extensions"))
    .handle("config", () => precomputed("config"))
    .handle("bootstrap", () => PanelPages.bootstrapEndpoint)
    .handle("publicSettings", ({ path }) => publicSettings(path))
    .handleRaw("diagnostics", () => Diagnostics.diagnostics)
    .handle("accessList", () => ServerAccess.list)
    .handleRaw("accessGrant", () => ServerAccess.grant)
    .handleRaw("accessRevoke", () => ServerAccess.revoke))

const PanelLive = HttpApiBuilder.group(HostApi, "panel", (handlers) =>
  handlers
    .handle("account", () => PanelPages.account)
    .handle("servers", () => PanelPages.servers)
    .handle("server", () => PanelPages.server))

/**
 * The typed endpoints as a router to mount. The handlers' services are taken from the context this runs
 * in (the server's), as HttpApiBuilder does; their failures are HttpError by the contracts' typing, which
 * typedFailures states for the router HttpApiBuilder hands back untyped.
 */
export const apiRoutes = HttpApiBuilder.Router.router.pipe(
  Effect.map((router) => HttpRouter.transform(router, typedFailures)),
  Effect.provide(Layer.provideMerge(Layer.mergeAll(ClientLive, PanelLive), HttpApiBuilder.Router.Live))
)
