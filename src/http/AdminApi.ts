import { FileSystem, HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse, Multipart, Path } from "@effect/platform"
import { Effect, Either, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { HostConfig } from "../config/HostConfig.js"
import type { Actor } from "../domain/Installed.js"
import { decodeManifest } from "../domain/Manifest.js"
import { effectiveSettings } from "../domain/Settings.js"
import { Lifecycle } from "../lifecycle/Lifecycle.js"
import * as RegistryUpdates from "../lifecycle/RegistryUpdates.js"
import { SourceSpec } from "../lifecycle/Source.js"
import { addServer, NewServer, removeServer } from "../panel/Servers.js"
import { Reconciler } from "../reconcile/Reconciler.js"
import { criticalFailures, runHealthChecks } from "../runtime/Backend.js"
import { LiveRuntime } from "../runtime/LiveState.js"
import { quarantineReason, readQuarantine } from "../runtime/Quarantine.js"
import { ActivityRepo } from "../store/ActivityRepo.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { SettingsRepo } from "../store/SettingsRepo.js"
import { WebhookDeliveries } from "../store/WebhookDeliveries.js"
import { csrfOk } from "./Auth.js"
import { authenticate, header, requireAdmin } from "./Context.js"
import { badRequest, HttpFailure, notFound, unauthorized } from "./Errors.js"
import * as Webhook from "./Webhook.js"

// The admin JSON API (docs/http.md) under /admin/host/api: an admin's session (CSRF-checked on
// unsafe methods) or an admin's API token. Every change goes through the same lifecycle operations as
// the CLI, with the actor {type: "admin", user}; the runtime swaps to a new generation before answering.

/** The admin making the request, as the lifecycle's actor. */
const adminActor = Effect.gen(function*() {
  const { auth, request } = yield* authenticate
  const user = yield* requireAdmin(auth)
  if (!csrfOk(auth, request.method, header(request, "x-csrf-token"), undefined)) {
    return yield* new HttpFailure({ status: 403, code: "CsrfTokenMismatch", detail: "missing or wrong CSRF token (X-CSRF-Token)" })
  }
  return { type: "admin", user: user.username } satisfies Actor
})

const extensionIdParam = Effect.map(HttpRouter.params, ({ name, vendor }) => `${vendor}/${name}`)

/** After a change: swap the runtime now, so the next request sees it. */
const swap = Effect.flatMap(LiveRuntime, (runtime) => runtime.refresh())

const ok = (data: unknown, status = 200) => HttpServerResponse.json({ data }, { status })

export const listExtensions = Effect.gen(function*() {
  yield* adminActor
  const installed = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.list)
  const runtime = yield* LiveRuntime
  const live = runtime.current()
  const recorded = yield* readQuarantine
  return yield* ok(installed.map((extension) => {
    const reason = live?.generation.quarantined.get(extension.extensionId) ??
      (live === undefined ? quarantineReason(recorded, extension) : undefined)
    return {
      id: extension.extensionId,
      name: extension.name,
      version: extension.version,
      enabled: extension.enabled,
      status: reason !== undefined && extension.enabled ? "quarantined" : extension.enabled ? "enabled" : "disabled",
      quarantine: reason ?? null,
      signature: extension.signature.status,
      source: extension.source,
      updatedAt: extension.updatedAt
    }
  }))
})

const Flags = Schema.Struct({
  force: Schema.optional(Schema.Boolean),
  keepData: Schema.optional(Schema.Boolean),
  disabled: Schema.optional(Schema.Boolean),
  noMigrate: Schema.optional(Schema.Boolean)
})
type Flags = typeof Flags.Type

const flagFrom = (value: string | ReadonlyArray<string> | undefined) =>
  value === undefined ? undefined : ["1", "true", "yes", "on"].includes(String(Array.isArray(value) ? value[0] : value).toLowerCase())

/** Flags from the query string and, for JSON requests, the body. */
const readFlags = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const query = new URLSearchParams(request.url.split("?")[1] ?? "")
  const fromQuery: Record<string, boolean> = {}
  for (const key of ["force", "keepData", "disabled", "noMigrate"]) {
    const value = flagFrom(query.get(key) ?? undefined)
    if (value !== undefined) fromQuery[key] = value
  }
  if (!(header(request, "content-type") ?? "").includes("json")) return fromQuery as Flags
  const text = yield* request.text
  if (text.trim() === "") return fromQuery as Flags
  const body = yield* Schema.decodeUnknown(Schema.parseJson(Flags))(text).pipe(
    Effect.mapError((error) => badRequest(`the body must be {force?, keepData?, disabled?, noMigrate?}: ${error.message}`))
  )
  return { ...fromQuery, ...body }
})

/**
 * The uploaded `archive` (and optional detached `signature`, a file or a field) written to
 * storage/host/uploads/<uuid>/ as `<name>.host` (+ `.sig`), which the lifecycle reads as an archive.
 */
const receiveUpload = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const { paths } = yield* HostConfig
  const request = yield* HttpServerRequest.HttpServerRequest
  if (!(header(request, "content-type") ?? "").includes("multipart/form-data")) {
    return yield* badRequest("send multipart/form-data with the .host file in the field \"archive\"")
  }
  // Uploads may be as large as an archive may be; every other body keeps the server's small default.
  const { config } = yield* HostConfig
  const limit = Option.some(FileSystem.Size(config.limits.archive_bytes))
  const form = yield* request.multipart.pipe(
    Multipart.withLimits({ maxFileSize: limit, maxTotalSize: Option.some(FileSystem.Size(config.limits.archive_bytes + 1024 * 1024)) }),
    HttpIncomingMessage.withMaxBodySize(Option.some(FileSystem.Size(config.limits.archive_bytes + 1024 * 1024)))
  )
  const archive = form.archive
  const file = Array.isArray(archive) ? archive[0] : undefined
  if (file === undefined || !Multipart.isPersistedFile(file)) return yield* badRequest("the field \"archive\" must be a .host file")
  const folder = path.join(paths.storage, "uploads", randomUUID())
  yield* fs.makeDirectory(folder, { recursive: true })
  const name = /^[A-Za-z0-9._-]+\.host$/.test(file.name) ? file.name : "upload.host"
  const target = path.join(folder, name)
  yield* fs.copyFile(file.path, target)
  const signature = form.signature
  if (typeof signature === "string" && signature.trim() !== "") yield* fs.writeFileString(`${target}.sig`, signature.trim())
  else if (Array.isArray(signature) && signature[0] !== undefined && Multipart.isPersistedFile(signature[0])) {
    yield* fs.copyFile(signature[0].path, `${target}.sig`)
  }
  return { folder, target, name }
})

const withUpload = <A, E, R>(use: (archive: SourceSpec) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    return yield* Effect.acquireUseRelease(
      receiveUpload,
      ({ name, target }) => use(SourceSpec.Upload({ path: target, name })),
      ({ folder }) => fs.remove(folder, { recursive: true }).pipe(Effect.ignore)
    )
  }).pipe(Effect.scoped)

export const uploadInstall = Effect.gen(function*() {
  const actor = yield* adminActor
  const lifecycle = yield* Lifecycle
  const request = yield* HttpServerRequest.HttpServerRequest
  const query = new URLSearchParams(request.url.split("?")[1] ?? "")
  const result = yield* withUpload((upload) =>
    lifecycle.add(upload, {
      actor,
      force: flagFrom(query.get("force") ?? undefined) ?? false,
      disabled: flagFrom(query.get("disabled") ?? undefined) ?? false,
      noMigrate: flagFrom(query.get("noMigrate") ?? undefined) ?? false
    })
  )
  yield* swap
  return yield* ok(result, 201)
})

const operations = ["enable", "disable", "remove", "update"] as const
type AdminOperation = (typeof operations)[number]

export const extensionOperation = Effect.gen(function*() {
  const actor = yield* adminActor
  const id = yield* extensionIdParam
  const { action } = yield* HttpRouter.params
  if (!(operations as ReadonlyArray<string | undefined>).includes(action)) return yield* notFound(`unknown operation ${action ?? ""}`)
  const lifecycle = yield* Lifecycle
  const operation = action as AdminOperation
  const timeout = 5
  const request = yield* HttpServerRequest.HttpServerRequest
  // update: a multipart upload (`archive`), or else the registry (`{"version": "1.2.3" | "^1.2"}`, default latest).
  const fromRegistry = Effect.gen(function*() {
    const text = yield* request.text
    const body = yield* Schema.decodeUnknown(Schema.parseJson(Schema.Struct({ version: Schema.optional(Schema.String) })))(
      text.trim() === "" ? "{}" : text
    ).pipe(Effect.mapError((error) => badRequest(`the body must be {version?}: ${error.message.split("\n")[0]}`)))
    // A version asked for by name may be older: asking is the force.
    return yield* lifecycle.update(id, SourceSpec.Registry({ id, range: body.version }), {
      actor,
      lockTimeout: timeout,
      force: body.version !== undefined
    })
  })
  const uploadForce = flagFrom(new URLSearchParams(request.url.split("?")[1] ?? "").get("force") ?? undefined) ?? false
  const result = operation === "update"
    ? (header(request, "content-type") ?? "").startsWith("multipart/form-data")
      ? yield* withUpload((upload) => lifecycle.update(id, upload, { actor, lockTimeout: timeout, force: uploadForce }))
      : yield* fromRegistry
    : yield* Effect.flatMap(readFlags, (flags) =>
      operation === "remove"
        ? lifecycle.remove(id, { actor, force: flags.force ?? false, keepData: flags.keepData ?? false, lockTimeout: timeout })
        : lifecycle[operation](id, { actor, force: flags.force ?? false, lockTimeout: timeout }))
  yield* swap
  return yield* ok(result)
})

/** `GET updates`: the extensions installed from the registry that it has a newer version of. */
export const availableUpdates = Effect.gen(function*() {
  yield* adminActor
  const { updates } = yield* RegistryUpdates.checkUpdates(Option.none())
  return yield* ok(updates)
})

/** `POST updates`: updates every extension installed from the registry; one failure does not stop the rest. */
export const updateAll = Effect.gen(function*() {
  const actor = yield* adminActor
  const outcomes = yield* RegistryUpdates.updateAll({ actor, lockTimeout: 5 })
  yield* swap
  return yield* ok(outcomes.map(Either.merge))
})

/** The installed extension's normalized settings fields (from the manifest as installed). */
const installedFields = (id: string) =>
  Effect.gen(function*() {
    const record = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.find(id))
    if (Option.isNone(record)) return yield* notFound(`extension ${id} is not installed`)
    const manifest = decodeManifest(record.value.manifest).manifest
    return manifest?.settings ?? []
  })

export const readSettings = Effect.gen(function*() {
  yield* adminActor
  const id = yield* extensionIdParam
  const fields = yield* installedFields(id)
  const stored = yield* Effect.flatMap(SettingsRepo, (settings) => settings.getAll(id))
  return yield* ok({ fields, values: effectiveSettings(fields, stored) })
})

const SettingsBody = Schema.Union(
  Schema.Struct({ values: Schema.Record({ key: Schema.String, value: Schema.Unknown }) }),
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)

export const writeSettings = Effect.gen(function*() {
  const actor = yield* adminActor
  const id = yield* extensionIdParam
  const fields = yield* installedFields(id)
  const body = yield* HttpServerRequest.schemaBodyJson(SettingsBody).pipe(
    Effect.mapError(() => badRequest("send a JSON object of setting key → value"))
  )
  const values = "values" in body && typeof body.values === "object" && body.values !== null && !Array.isArray(body.values)
    ? body.values as Record<string, unknown>
    : body as Record<string, unknown>
  yield* Effect.flatMap(Lifecycle, (lifecycle) => lifecycle.configure(id, values, { actor, lockTimeout: 5 })).pipe(
    Effect.catchIf(
      (error) => error._tag === "OperationRefused" && error.reason === "settings",
      (error) =>
        new HttpFailure({
          status: 422,
          code: "SettingsInvalid",
          detail: error.message,
          problems: "problems" in error ? error.problems ?? [] : []
        })
    )
  )
  const stored = yield* Effect.flatMap(SettingsRepo, (settings) => settings.getAll(id))
  return yield* ok({ fields, values: effectiveSettings(fields, stored) })
})

export const activity = Effect.gen(function*() {
  yield* adminActor
  const request = yield* HttpServerRequest.HttpServerRequest
  const query = new URLSearchParams(request.url.split("?")[1] ?? "")
  const limit = Math.min(Math.max(Number(query.get("limit") ?? 100) || 100, 1), 1000)
  const extensionId = query.get("extension") ?? undefined
  const rows = yield* Effect.flatMap(ActivityRepo, (repo) =>
    repo.list(extensionId === undefined ? { limit } : { extensionId, limit }))
  return yield* ok(rows)
})

/** The health of every booted extension: declared checks joined with reported results (runtime/Backend). */
export const health = Effect.gen(function*() {
  yield* adminActor
  const runtime = yield* LiveRuntime
  const live = runtime.current()
  const report = live === undefined ? [] : yield* runHealthChecks(live.generation)
  return yield* ok({ extensions: report, critical_failures: criticalFailures(report) })
})

const ReconcileRequest = Schema.Struct({
  dry_run: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  prune: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  allow_destroy: Schema.optionalWith(Schema.Boolean, { default: () => false })
})

/** Who asked for a reconcile: an admin (session or token), or a signed webhook delivery. */
type ReconcileCaller =
  | { readonly _tag: "Admin" }
  | { readonly _tag: "Webhook"; readonly delivery: string }

/**
 * A request carrying X-Host-Signature-256 is a webhook: it must be signed with `webhook_secret` and carry
 * an unanswered X-Host-Delivery, and needs no session, token or CSRF token. Anything else is an admin's.
 */
const reconcileCaller = (body: Uint8Array) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const signature = header(request, Webhook.signatureHeader)
    if (signature === undefined) {
      const { auth } = yield* authenticate
      if (auth.user === undefined) {
        return yield* unauthorized(
          `sign the request (${Webhook.signatureHeader} with webhook_secret, docs/gitops.md), sign in, or send an admin API token`
        )
      }
      yield* adminActor
      return { _tag: "Admin" } satisfies ReconcileCaller
    }
    const { config } = yield* HostConfig
    if (config.webhook_secret === "") {
      return yield* new HttpFailure({
        status: 401,
        code: "WebhookNotConfigured",
        detail: "signed webhooks are refused: no webhook_secret is configured (config/host.yaml or HOST_WEBHOOK_SECRET)"
      })
    }
    yield* Either.match(Webhook.verifySignature(config.webhook_secret, body, signature), {
      onLeft: (detail) => Effect.fail(new HttpFailure({ status: 401, code: "SignatureInvalid", detail })),
      onRight: () => Effect.void
    })
    const delivery = header(request, Webhook.deliveryHeader)
    if (delivery === undefined || !Webhook.validDelivery(delivery)) {
      return yield* new HttpFailure({
        status: 400,
        code: "DeliveryMissing",
        detail: `a signed request needs ${Webhook.deliveryHeader}: a unique id of up to 100 visible characters (a UUID, the CI job id)`
      })
    }
    return { _tag: "Webhook", delivery } satisfies ReconcileCaller
  })

/**
 * `POST /admin/host/api/reconcile` and `POST /admin/host/reconcile` (CI webhooks, docs/gitops.md): plans
 * the desired-state file of `config/host.yaml` and applies it (`{"dry_run": true}`: plan only). The body
 * is the plan, with `apply` when applied; 200 when everything applied, 409 when another operation holds
 * the lock or a signed delivery was already answered, 422 when the plan cannot be made or the apply
 * stopped (the body then says what was and was not applied).
 */
export const reconcile = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  // The signature covers the exact bytes received, so the body is read once, as bytes.
  const body = new Uint8Array(yield* request.arrayBuffer)
  const caller = yield* reconcileCaller(body)
  const text = new TextDecoder().decode(body)
  const options = yield* Schema.decodeUnknown(Schema.parseJson(ReconcileRequest))(text.trim() === "" ? "{}" : text).pipe(
    Effect.mapError((error) => badRequest(`the body must be {dry_run?, prune?, allow_destroy?}: ${error.message.split("\n")[0]}`))
  )
  const { paths } = yield* HostConfig
  const reconciler = yield* Reconciler
  const planRequest = { file: paths.desiredState, prune: options.prune, allowDestroy: options.allow_destroy, env: process.env }
  const run = Effect.gen(function*() {
    if (options.dry_run) return yield* ok(yield* reconciler.plan(planRequest))
    const { plan, result } = yield* reconciler.reconcile(planRequest, {
      env: process.env,
      ...(caller._tag === "Webhook" ? { actor: webhookActor, context: { delivery: caller.delivery } } : {})
    })
    yield* swap
    return yield* ok(
      { ...plan, apply: { applied: result.applied, failed: result.failed, not_applied: result.notApplied } },
      result.failed === null ? 200 : 422
    )
  })
  if (caller._tag === "Admin") return yield* run
  // A delivery is answered once; one that failed before changing anything (lock held, plan invalid) is
  // forgotten again, so the sender's retry of it is not refused.
  const deliveries = yield* WebhookDeliveries
  if (!(yield* deliveries.claim(caller.delivery))) {
    return yield* new HttpFailure({
      status: 409,
      code: "DeliveryRepeated",
      detail: `delivery ${caller.delivery} was already answered in the last 24 hours; send a new ${Webhook.deliveryHeader} to reconcile again`
    })
  }
  return yield* run.pipe(Effect.tapError(() => deliveries.release(caller.delivery).pipe(Effect.ignore)))
})

/** Activity of a signed webhook names it as an API caller; the context adds the delivery id. */
const webhookActor = { type: "api", user: "webhook" } satisfies Actor

/** `POST /admin/host/api/servers` `{uuid, name, owner}`: adds a server to the embedded panel (ServerCreated follows). */
export const createServer = Effect.gen(function*() {
  yield* adminActor
  const request = yield* HttpServerRequest.HttpServerRequest
  const body = yield* Effect.flatMap(request.text, Schema.decodeUnknown(Schema.parseJson(NewServer))).pipe(
    Effect.mapError((error) => badRequest(`the body must be {uuid, name, owner}: ${error.message.split("\n")[0]}`))
  )
  const server = yield* addServer(body).pipe(Effect.mapError(conflict))
  yield* swap
  return yield* ok(server, 201)
})

/** `DELETE /admin/host/api/servers/{uuid}`: removes a server of the embedded panel (ServerDeleted follows). */
export const deleteServer = Effect.gen(function*() {
  yield* adminActor
  const { uuid } = yield* HttpRouter.params
  yield* removeServer(uuid ?? "").pipe(Effect.mapError((error) => error._tag === "PanelServerConflict" ? notFound(error.message) : error))
  yield* swap
  return yield* ok({ uuid })
})

const conflict = <E extends { readonly _tag: string; readonly message: string }>(error: E) =>
  error._tag === "PanelServerConflict" ? new HttpFailure({ status: 409, code: "Conflict", detail: error.message }) : error
