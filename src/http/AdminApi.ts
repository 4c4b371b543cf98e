import { FileSystem, HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse, Multipart, Path, UrlParams } from "@effect/platform"
import { Clock, DateTime, Effect, Either, Option, Schema, Stream } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import { type Actor, dependenciesOf, type InstalledExtension, manifestOf, migrationsFolderOf } from "../domain/Installed.js"
import { effectiveSettings } from "../domain/Settings.js"
import { SourceRejected } from "../lifecycle/Errors.js"
import { Lifecycle } from "../lifecycle/Lifecycle.js"
import { uploadFolderName, uploadsDirectory } from "../lifecycle/Uploads.js"
import { formatBytes } from "../domain/Bytes.js"
import * as RegistryUpdates from "../lifecycle/RegistryUpdates.js"
import { SourceSpec } from "../lifecycle/Source.js"
import { addServer, NewServer, removeServer } from "../panel/Servers.js"
import { Reconciler } from "../reconcile/Reconciler.js"
import { criticalFailures, runHealthChecks } from "../runtime/Backend.js"
import { LiveRuntime } from "../runtime/LiveState.js"
import { readFrontendErrors } from "../runtime/FrontendErrors.js"
import { extensionStatus, extensionSummary } from "../runtime/ExtensionView.js"
import { quarantineReason, readQuarantine } from "../runtime/Quarantine.js"
import { ActivityRepo } from "../store/ActivityRepo.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { SettingsRepo } from "../store/SettingsRepo.js"
import { WebhookDeliveries } from "../store/WebhookDeliveries.js"
import { inspectFile, integrityRefusal, limitsFromConfig, listedFileCount } from "../archive/Archive.js"
import { keyringFromConfig, signaturePolicy } from "../archive/Signing.js"
import { sha256Hex } from "../archive/Tree.js"
import { frameworkVersion } from "../config/HostConfig.js"
import type { DesiredExtension } from "../domain/DesiredState.js"
import { ActivityAction } from "../domain/Installed.js"
import { type ManifestDocument, routeGroups } from "../domain/Manifest.js"
import { formatPlan } from "../reconcile/PlanRender.js"
import { availableVersions, newerVersion, type RegistryIndex, searchEntries } from "../domain/Registry.js"
import { checkRequires, dependencyProblems } from "../domain/Rules.js"
import { nextRuns } from "../domain/Schedules.js"
import { bundleSlotReferences } from "../domain/Slots.js"
import { removalImpact } from "../lifecycle/Impact.js"
import { discoverMigrations } from "../lifecycle/Migrations.js"
import { adopt } from "../reconcile/Adopt.js"
import { readArchiveCandidate, readDesiredFile } from "../reconcile/Inputs.js"
import { Registry } from "../registry/Registry.js"
import { extensionCommands, extensionHealth } from "../runtime/Backend.js"
import { MigrationsRepo } from "../store/MigrationsRepo.js"
import semver from "semver"
import { csrfOk } from "./Auth.js"
import { authenticate, header, requireAdmin, ServerSettings } from "./Context.js"
import { badRequest, HttpFailure, notFound, unauthorized } from "./Errors.js"
import { archiveTooLargeDetail, uploadOverheadBytes } from "./Limits.js"
import { inspectUpload, type UploadVerdict } from "./UploadInspection.js"
import { policyDetail, policyWords, type UploadPolicy, uploadPolicyOf } from "./UploadPolicy.js"
import * as Webhook from "./Webhook.js"
import { uuid } from "../system/Ids.js"
import { type PanelVersions, runtimeVersions } from "../system/RuntimeVersions.js"

// The admin JSON API (docs/http.md) under /admin/host/api: an admin's session (CSRF-checked on
// unsafe methods) or an admin's API token. Every change goes through the same lifecycle operations as
// the CLI, with the actor {type: "admin", user}; the runtime swaps to a new generation before answering.

const csrfMismatch = () =>
  new HttpFailure({ status: 403, code: "CsrfTokenMismatch", detail: "missing or wrong CSRF token (X-CSRF-Token header or _token form field)" })

/** The signed-in admin, and the request's CSRF check given the form's `_token` when there is one. */
const adminCaller = Effect.gen(function*() {
  const { auth, live, request } = yield* authenticate
  const user = yield* requireAdmin(auth)
  const actor = { type: "admin", user: user.username } satisfies Actor
  const checkCsrf = (formToken: string | undefined) =>
    csrfOk(auth, request, live.access, formToken) ? Effect.void : Effect.fail(csrfMismatch())
  return { actor, request, checkCsrf }
})

/** The admin making the request, as the lifecycle's actor (CSRF by header, or `_token` of a urlencoded form). */
export const adminActor = Effect.gen(function*() {
  const { actor, checkCsrf, request } = yield* adminCaller
  const passed = yield* Effect.either(checkCsrf(undefined))
  if (passed._tag === "Right") return actor
  if (!(header(request, "content-type") ?? "").startsWith("application/x-www-form-urlencoded")) return yield* passed.left
  const formToken = yield* request.urlParamsBody.pipe(
    Effect.map((params) => Option.getOrUndefined(UrlParams.getFirst(params, "_token"))),
    Effect.orElseSucceed(() => undefined)
  )
  yield* checkCsrf(formToken)
  return actor
})

const extensionIdParam = Effect.map(HttpRouter.params, ({ name, vendor }) => `${vendor}/${name}`)

/** After a change: swap the runtime now, so the next request sees it. */
const swap = Effect.flatMap(LiveRuntime, (runtime) => runtime.refresh())

const ok = (data: unknown, status = 200) => HttpServerResponse.json({ data }, { status })

export const listExtensions = Effect.gen(function*() {
  yield* adminActor
  const installed = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.list)
  const runtime = yield* LiveRuntime
  const live = yield* runtime.current
  const recorded = yield* readQuarantine
  const frontendErrors = yield* readFrontendErrors
  return yield* ok(installed.map((extension) => {
    const { reason, ...summary } = extensionSummary(
      extension,
      live?.generation.quarantined.get(extension.extensionId) ?? (live === undefined ? quarantineReason(recorded, extension) : undefined)
    )
    return {
      ...summary,
      quarantine: reason ?? null,
      signature: extension.signature.status,
      source: extension.source,
      updatedAt: extension.updatedAt,
      // Recent render errors the bridge reported (docs/frontend.md "Diagnostics"), newest first.
      frontendErrors: frontendErrors.get(extension.extensionId) ?? []
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

/** The inspection's refusals, which the lifecycle reports as SourceRejected (anything else it meets on its own). */
const refusedByInspection: ReadonlySet<string> = new Set(["ArchiveRefused", "SignatureRefused", "KeyInvalid", "ManifestInvalid", "ChecksumMismatch"])

const uploadRefused = (detail: string) => new HttpFailure({ status: 400, code: "BadRequest", detail })

/** File names longer than this are refused (most file systems allow 255 bytes per name). */
const maxUploadNameBytes = 255

export interface ReceivedUpload {
  readonly folder: string
  readonly target: string
  readonly name: string
  /** The form's `_token` field, if it had one. */
  readonly formToken: string | undefined
}

/**
 * Streams the multipart form's `archive` file (and optional detached `signature`, a file or a field)
 * into `folder` as `<name>.host` (+ `.sig`), which the lifecycle reads as an archive. Nothing goes
 * through a temporary folder elsewhere, so the upload folder is all there is to clean up.
 */
const receiveUpload = (folder: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const request = yield* HttpServerRequest.HttpServerRequest
    const { config } = yield* HostConfig
    const archiveBytes = config.limits.archive_bytes
    const bodyLimit = Option.some(FileSystem.Size(archiveBytes + uploadOverheadBytes))
    let received: { readonly target: string; readonly name: string } | undefined
    let formToken: string | undefined
    let signature: string | undefined
    const archiveTooLarge = new HttpFailure({
      status: 413,
      code: "SourceRejected",
      detail: archiveTooLargeDetail("the upload", `more than ${formatBytes(archiveBytes)}`, archiveBytes)
    })
    const multipartFailure = (error: Multipart.MultipartError) =>
      error.reason === "BodyTooLarge" || error.reason === "FileTooLarge"
        ? archiveTooLarge
        : uploadRefused(`the multipart body cannot be read (${error.reason})`)
    const parts = request.multipartStream.pipe(Stream.mapError(multipartFailure))
    yield* Stream.runForEach(parts, (part) =>
      Effect.gen(function*() {
        if (part._tag === "Field") {
          if (part.key === "_token") formToken = part.value
          if (part.key === "signature" && part.value.trim() !== "") signature = part.value.trim()
          return
        }
        const wanted = (part.key === "archive" && received === undefined) || part.key === "signature"
        if (!wanted) return yield* Stream.runDrain(part.content).pipe(Effect.mapError(multipartFailure))
        if (part.key === "signature") {
          const text = yield* Stream.runFold(part.content, "", (all, chunk) => all + Buffer.from(chunk).toString("utf8")).pipe(
            Effect.mapError(multipartFailure)
          )
          if (text.trim() !== "") signature = text.trim()
          return
        }
        if (Buffer.byteLength(part.name) > maxUploadNameBytes) {
          yield* Stream.runDrain(part.content).pipe(Effect.mapError(multipartFailure))
          return yield* uploadRefused(`the archive's file name is ${Buffer.byteLength(part.name)} bytes long; the limit is ${maxUploadNameBytes}`)
        }
        const name = /^[A-Za-z0-9._-]+\.host$/.test(part.name) ? part.name : "upload.host"
        const target = path.join(folder, name)
        // Counted as it arrives: a body without a declared length (chunked) is refused by the archive's
        // limit as soon as it passes it, with the archive-size refusal, and no more of it is written.
        let written = 0
        const counted = Stream.mapEffect(part.content, (chunk) => {
          written += chunk.byteLength
          return written > archiveBytes
            ? Effect.fail(archiveTooLarge)
            : Effect.succeed(chunk)
        })
        yield* Stream.run(counted, fs.sink(target)).pipe(
          Effect.mapError((error) =>
            error._tag === "HttpFailure"
              ? error
              : error._tag === "MultipartError"
              ? multipartFailure(error)
              : new HttpFailure({ status: 500, code: "UploadNotStored", detail: `the upload could not be stored: ${error.message}` })
          )
        )
        received = { target, name }
      })).pipe(
        Multipart.withLimits({ maxFileSize: Option.none(), maxTotalSize: bodyLimit }),
        HttpIncomingMessage.withMaxBodySize(bodyLimit)
      )
    if (received === undefined) return yield* badRequest("the field \"archive\" must be a .host file")
    // The body's limit leaves room for the form around the archive; the archive itself has the archive's.
    const size = Number((yield* fs.stat(received.target)).size)
    if (size > archiveBytes) {
      return yield* new HttpFailure({
        status: 413,
        code: "SourceRejected",
        detail: archiveTooLargeDetail(received.name, formatBytes(size), archiveBytes)
      })
    }
    if (signature !== undefined) yield* fs.writeFileString(`${received.target}.sig`, signature)
    return { folder, target: received.target, name: received.name, formToken } satisfies ReceivedUpload
  })

/**
 * Receives the upload into its own folder under storage/host/uploads/ (removed when the request ends,
 * whatever happened; see lifecycle/Uploads.ts for a process that dies), checks CSRF (the header, or
 * the form's `_token`), has a worker thread inspect the archive, then runs `use` with it. A refusal
 * the worker finds is the operation's refusal (`refusal` words it as the caller's operation).
 */
const withUpload = <A, E, R>(
  checkCsrf: (formToken: string | undefined) => Effect.Effect<void, HttpFailure>,
  refusal: (verdict: Extract<UploadVerdict, { readonly ok: false }>, upload: ReceivedUpload) => unknown,
  use: (archive: SourceSpec & { readonly _tag: "Upload" }) => Effect.Effect<A, E, R>,
  options: { readonly preview?: boolean } = {}
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const request = yield* HttpServerRequest.HttpServerRequest
    // `admin_uploads: off`: refused before a byte of the body is read (docs/operations.md "Web installs").
    const policy = uploadPolicyOf((yield* HostConfig).config)
    if (policy.setting === "off") return yield* uploadsOff(policy)
    const contentType = header(request, "content-type") ?? ""
    if (!contentType.startsWith("multipart/form-data")) {
      return yield* badRequest("send multipart/form-data with the .host file in the field \"archive\"")
    }
    if (!/;\s*boundary=("[^"]+"|[^\s;]+)/i.test(contentType)) {
      return yield* badRequest("the multipart/form-data Content-Type has no boundary parameter")
    }
    const directory = yield* uploadsDirectory
    const folder = yield* Effect.acquireRelease(
      Effect.flatMap(uuid, (id) => {
        const created = path.join(directory, uploadFolderName(id))
        return Effect.as(fs.makeDirectory(created, { recursive: true }), created)
      }),
      (created) => fs.remove(created, { recursive: true, force: true }).pipe(Effect.ignore)
    )
    const upload = yield* receiveUpload(folder)
    yield* checkCsrf(upload.formToken)
    const verdict = yield* inspectUpload(upload.target, upload.name)
    const refused = !verdict.ok && refusedByInspection.has(verdict.tag) ? refusal(verdict, upload) : undefined
    if (refused !== undefined) return yield* Effect.fail(refused)
    // `admin_uploads: signed` refuses what is not signed by a trusted key; a preview shows it as its check.
    if (!verdict.ok && verdict.stage === "policy" && options.preview !== true) {
      return yield* new HttpFailure({ status: 403, code: "UploadPolicy", detail: `${verdict.message}; nothing was changed` })
    }
    if (!verdict.ok && (verdict.tag === "InspectionTimeout" || verdict.tag === "InspectionFailed")) {
      return yield* new HttpFailure({ status: 422, code: "SourceRejected", detail: `${verdict.message}; nothing was changed` })
    }
    return yield* use(SourceSpec.Upload({ path: upload.target, name: upload.name }) as SourceSpec & { readonly _tag: "Upload" })
  }).pipe(Effect.scoped)

/** 403 naming the setting, for every upload endpoint while `admin_uploads` is `off`. */
const uploadsOff = (policy: UploadPolicy) =>
  new HttpFailure({
    status: 403,
    code: "UploadsOff",
    detail: `${policyWords(policy)}: this panel accepts no archives through the admin UI or API; install on the server with host add <file> (or the desired-state file), or change admin_uploads in config/host.yaml`
  })

/** An upload the worker refused, worded as the lifecycle words a refused source. */
const sourceRefusal = (operation: "add" | "update", extensionId: (upload: ReceivedUpload) => string) =>
(verdict: { readonly tag: string; readonly message: string }, upload: ReceivedUpload) =>
  new SourceRejected({
    operation,
    extensionId: extensionId(upload),
    step: `verifying and staging ${upload.name}`,
    reason: verdict.tag,
    detail: verdict.message
  })

export const uploadInstall = Effect.gen(function*() {
  const { actor, checkCsrf } = yield* adminCaller
  const lifecycle = yield* Lifecycle
  const request = yield* HttpServerRequest.HttpServerRequest
  const query = new URLSearchParams(request.url.split("?")[1] ?? "")
  const result = yield* withUpload(checkCsrf, sourceRefusal("add", (upload) => upload.name), (upload) =>
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
  const id = yield* extensionIdParam
  const { action } = yield* HttpRouter.params
  const caller = yield* adminCaller
  // An uploaded update's CSRF token may be a field of its form, checked once the form is read.
  const uploading = action === "update" && (header(caller.request, "content-type") ?? "").startsWith("multipart/form-data")
  const actor = uploading ? caller.actor : yield* adminActor
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
    ? uploading
      ? yield* withUpload(caller.checkCsrf, sourceRefusal("update", () => id), (upload) => lifecycle.update(id, upload, { actor, lockTimeout: timeout, force: uploadForce }))
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
    return manifestOf(record.value)?.settings ?? []
  })

/** The settings form's data (see settingsView below). */
export const readSettings = Effect.suspend(() => settingsView)

const SettingsBody = Schema.Union(
  Schema.Struct({ values: Schema.Record({ key: Schema.String, value: Schema.Unknown }) }),
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)

export const writeSettings = Effect.gen(function*() {
  const actor = yield* adminActor
  const id = yield* extensionIdParam
  yield* installedFields(id)
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
  return yield* settingsView
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
  const live = yield* runtime.current
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
    // The delivery id is part of what is signed (docs/gitops.md), so it is read first.
    const delivery = header(request, Webhook.deliveryHeader)
    if (delivery === undefined || !Webhook.validDelivery(delivery)) {
      return yield* new HttpFailure({
        status: 400,
        code: "DeliveryMissing",
        detail: `a signed request needs ${Webhook.deliveryHeader}: a unique id of up to 100 visible characters (a UUID, the CI job id)`
      })
    }
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
  const { env } = yield* ServerSettings
  const planRequest = { file: paths.desiredState, prune: options.prune, allowDestroy: options.allow_destroy, env }
  const run = Effect.gen(function*() {
    if (options.dry_run) return yield* ok(yield* reconciler.plan(planRequest))
    const { plan, result } = yield* reconciler.reconcile(planRequest, {
      env,
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

// ---- additions for the admin screens (docs/http.md "Admin screens"): every screen reads and changes
// the panel only through these, so the UI can do nothing the API cannot.

const queryOf = (request: HttpServerRequest.HttpServerRequest) => new URLSearchParams(request.url.split("?")[1] ?? "")

const versionsOf = (live: { readonly panelInfo: PanelVersions } | undefined) => runtimeVersions(frameworkVersion, live?.panelInfo)

/** `requires` of a manifest or registry entry against this panel: each range with the version it meets. */
const requiresReport = (
  requires: Readonly<Record<string, string>> | undefined,
  versions: ReturnType<typeof runtimeVersions>
) => {
  const outcome = checkRequires({ requires } as Pick<ManifestDocument, "requires"> as ManifestDocument, versions)
  const ranges = Object.entries(requires ?? {}).map(([key, range]) => {
    const actual = (versions as Record<string, string | undefined>)[key]
    const unmet = outcome.unmet.find((line) => line.startsWith(`requires.${key} `))
    const unknown = outcome.warnings.find((line) => line.startsWith(`requires.${key} `))
    return { key, range, actual: actual ?? null, ok: unmet === undefined, detail: unmet ?? unknown ?? null }
  })
  return { ok: outcome.unmet.length === 0, unmet: outcome.unmet, warnings: outcome.warnings, ranges }
}

/** The registry index when one is configured and answers quickly (a cached index answers at once). */
const registryIndexQuietly = Effect.gen(function*() {
  const registry = yield* Registry
  if (registry.url === "") return undefined
  return yield* registry.index.pipe(
    Effect.timeout("3 seconds"),
    Effect.map((result) => result.index),
    Effect.orElseSucceed(() => undefined)
  )
})

/** The newer registry version of an installed extension, if the registry lists one. */
const newerInRegistry = (index: RegistryIndex | undefined, record: { readonly extensionId: string; readonly version: string; readonly source: { readonly type: string } }) => {
  if (index === undefined || record.source.type !== "registry") return null
  const entry = index.extensions.find((candidate) => candidate.id === record.extensionId)
  return entry === undefined ? null : newerVersion(entry, record.version) ?? null
}

/** What the desired-state file says about each extension, when it exists and decodes. */
const desiredEntries = Effect.gen(function*() {
  const { paths } = yield* HostConfig
  const fs = yield* FileSystem.FileSystem
  if (!(yield* fs.exists(paths.desiredState).pipe(Effect.orElseSucceed(() => false)))) return new Map<string, DesiredExtension>()
  const desired = yield* Effect.either(readDesiredFile(paths.desiredState))
  return Either.isLeft(desired) ? new Map<string, DesiredExtension>() : new Map(desired.right.state.extensions.map((entry) => [entry.id, entry]))
})

const quarantineOf = Effect.gen(function*() {
  const runtime = yield* LiveRuntime
  const live = yield* runtime.current
  const recorded = yield* readQuarantine
  return (extension: InstalledExtension) =>
    extensionStatus(
      extension,
      live?.generation.quarantined.get(extension.extensionId) ?? (live === undefined ? quarantineReason(recorded, extension) : undefined)
    )
})

/** `GET extensions/overview`: the Extensions screen's rows: the list plus update, dependents and desired-state facts. */
export const extensionsOverview = Effect.gen(function*() {
  yield* adminActor
  const installed = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.list)
  const reasonOf = yield* quarantineOf
  const index = yield* registryIndexQuietly
  const desired = yield* desiredEntries
  const dependencies = new Map(installed.map((record) => [record.extensionId, dependenciesOf(record)]))
  const frontendErrors = yield* readFrontendErrors
  return yield* ok(installed.map((record) => {
    const { reason, status } = reasonOf(record)
    return {
      id: record.extensionId,
      name: record.name,
      description: manifestOf(record)?.document.description ?? "",
      version: record.version,
      enabled: record.enabled,
      status,
      quarantine: reason ?? null,
      signature: record.signature.status,
      signatureKey: record.signature.key,
      source: record.source,
      updateAvailable: newerInRegistry(index, record),
      dependents: [...dependencies.entries()].filter(([other, deps]) => other !== record.extensionId && record.extensionId in deps).map(([other]) => other).sort(),
      managed: desired.has(record.extensionId),
      frontendErrors: frontendErrors.get(record.extensionId) ?? [],
      updatedAt: record.updatedAt
    }
  }))
})

/** The bundle's page registrations (`routes: [{area, path, …}]`), as far as the built text shows them. */
const bundlePages = (bundle: string | undefined): ReadonlyArray<{ readonly area: string; readonly path: string }> => {
  if (bundle === undefined) return []
  const found = new Map<string, { area: string; path: string }>()
  const pattern = /area\s*:\s*["'`](server|dashboard|account)["'`]\s*,\s*path\s*:\s*["'`]([^"'`]+)["'`]|path\s*:\s*["'`]([^"'`]+)["'`]\s*,\s*area\s*:\s*["'`](server|dashboard|account)["'`]/g
  for (const match of bundle.matchAll(pattern)) {
    const area = match[1] ?? match[4]!
    const path = match[2] ?? match[3]!
    found.set(`${area} ${path}`, { area, path })
  }
  return [...found.values()]
}

/** `GET extensions/{vendor}/{name}`: everything the detail screen shows (docs/admin.md "Extension detail"). */
export const extensionDetail = Effect.gen(function*() {
  yield* adminActor
  const id = yield* extensionIdParam
  const record = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.find(id))
  if (Option.isNone(record)) return yield* notFound(`extension ${id} is not installed`)
  const extension = record.value
  const manifest = manifestOf(extension)
  const document = manifest?.document
  const runtime = yield* LiveRuntime
  const live = yield* runtime.current
  const loaded = live?.generation.extensions.get(id)
  const { reason, status } = (yield* quarantineOf)(extension)
  const all = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.list)
  const installedVersions = new Map(all.map((other) => [other.extensionId, other]))
  const { paths } = yield* HostConfig
  const path = yield* Path.Path
  const fs = yield* FileSystem.FileSystem
  const directory = path.join(paths.extensions, ...id.split("/"))
  const files = yield* discoverMigrations(path.join(directory, migrationsFolderOf(extension))).pipe(Effect.orElseSucceed(() => []))
  const recorded = yield* Effect.flatMap(MigrationsRepo, (repo) => repo.listFor(id))
  const ranByName = new Map(recorded.map((migration) => [migration.migration, migration]))
  const migrations = [
    ...files.map((file) => {
      const ran = ranByName.get(file.name)
      return { name: file.name, status: ran === undefined ? "pending" : "ran", batch: ran?.batch ?? null, ranAt: ran?.ranAt ?? null }
    }),
    ...recorded.filter((migration) => !files.some((file) => file.name === migration.migration)).map((migration) => ({
      name: migration.migration,
      status: "file missing",
      batch: migration.batch,
      ranAt: migration.ranAt
    }))
  ]
  const now = DateTime.toDateUtc(yield* DateTime.now)
  const schedules = (manifest?.schedules ?? []).map((task) => {
    const next = Either.getOrUndefined(Either.try(() => nextRuns(task.cron, now, 1)[0]?.toISOString() ?? null))
    return { id: task.id, label: task.label, command: task.command, cron: task.cron, withoutOverlapping: task.withoutOverlapping, nextRun: next ?? null }
  })
  const commands = live === undefined || loaded === undefined
    ? []
    : (yield* extensionCommands({ ...live.generation, extensions: new Map([[id, loaded]]) })).map((command) => ({
      name: command.name,
      description: command.description
    }))
  const routeGroupsOf = Object.fromEntries(routeGroups.map((group) => [
    group,
    (loaded?.routes[group] ?? []).map((route) => ({ method: route.method, path: route.path, permission: route.permission ?? null, file: route.file }))
  ]))
  const bundleText = loaded?.bundleSource ?? (yield* Effect.gen(function*() {
    const bundle = document?.frontend?.bundle
    if (bundle === undefined) return undefined
    return yield* fs.readFileString(path.join(directory, bundle)).pipe(Effect.orElseSucceed(() => undefined))
  }))
  const slots = loaded !== undefined
    ? [...new Set(loaded.slots.map((slot) => slot.slot))].sort()
    : [...new Set(bundleText === undefined ? [] : bundleSlotReferences(bundleText))].sort()
  const desired = (yield* desiredEntries).get(id)
  const index = yield* registryIndexQuietly
  const frontendErrors = (yield* readFrontendErrors).get(id) ?? []
  return yield* ok({
    frontendErrors,
    id,
    name: extension.name,
    version: extension.version,
    description: document?.description ?? "",
    license: document?.license ?? null,
    authors: document?.authors ?? [],
    enabled: extension.enabled,
    status,
    quarantine: reason ?? null,
    loaded: loaded !== undefined,
    signature: extension.signature,
    source: extension.source,
    installedAt: extension.createdAt,
    updatedAt: extension.updatedAt,
    updateAvailable: newerInRegistry(index, extension),
    requires: requiresReport(document?.requires, versionsOf(live)),
    dependencies: Object.entries(document?.dependencies ?? {}).map(([dependency, range]) => {
      const other = installedVersions.get(dependency)
      return {
        id: dependency,
        range,
        installed: other?.version ?? null,
        enabled: other?.enabled ?? false,
        ok: dependencyProblems({ dependencies: { [dependency]: range } }, installedVersions).length === 0
      }
    }),
    dependents: all.filter((other) => other.extensionId !== id && id in dependenciesOf(other))
      .map((other) => ({ id: other.extensionId, enabled: other.enabled })),
    capabilities: {
      permissions: manifest?.permissions ?? [],
      routes: routeGroupsOf,
      routeFiles: document?.backend?.routes ?? {},
      slots,
      pages: bundlePages(bundleText),
      migrations,
      schedules,
      commands,
      listeners: loaded === undefined ? [] : Object.keys(loaded.listeners).sort(),
      healthChecks: document?.health?.checks ?? [],
      settings: (manifest?.settings ?? []).length
    },
    managed: desired === undefined
      ? null
      : {
        file: paths.desiredState,
        absent: desired._tag === "Absent",
        enabled: desired._tag === "Present" ? desired.enabled : false,
        settings: desired._tag === "Present" ? Object.keys(desired.settings ?? {}) : []
      }
  })
})

/** `GET extensions/{vendor}/{name}/impact`: what disable/remove would affect (dependents, tables and rows). */
export const extensionImpact = Effect.gen(function*() {
  yield* adminActor
  const id = yield* extensionIdParam
  return yield* ok(yield* removalImpact(id))
})

/** `POST extensions/{vendor}/{name}/health`: runs this extension's health checks now. */
export const extensionHealthNow = Effect.gen(function*() {
  yield* adminActor
  const id = yield* extensionIdParam
  const runtime = yield* LiveRuntime
  const loaded = (yield* runtime.current)?.generation.extensions.get(id)
  if (loaded === undefined) {
    return yield* new HttpFailure({ status: 409, code: "NotLoaded", detail: `${id} is not running (disabled, quarantined or not installed), so its checks cannot run` })
  }
  const report = yield* extensionHealth(loaded, "5 seconds")
  return yield* ok({ ...report, checkedAt: DateTime.formatIso(yield* DateTime.now) })
})

/** The settings screen's view: secrets (password inputs) never echoed, and which keys the desired state sets. */
export const settingsView = Effect.gen(function*() {
  yield* adminActor
  const id = yield* extensionIdParam
  const record = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.find(id))
  if (Option.isNone(record)) return yield* notFound(`extension ${id} is not installed`)
  const settingsSection = manifestOf(record.value)?.document.admin?.settings
  const fields = yield* installedFields(id)
  const stored = yield* Effect.flatMap(SettingsRepo, (settings) => settings.getAll(id))
  const values = effectiveSettings(fields, stored)
  const secrets: Record<string, boolean> = {}
  for (const field of fields) {
    if (field.input !== "password") continue
    secrets[field.key] = field.key in stored
    values[field.key] = null
  }
  const desired = (yield* desiredEntries).get(id)
  return yield* ok({
    title: settingsSection?.title ?? null,
    description: settingsSection?.description ?? null,
    fields,
    values,
    secrets,
    managed: desired?._tag === "Present" ? Object.keys(desired.settings ?? {}) : []
  })
})

/** Inspects an uploaded archive without installing it: what the install would do and which check refuses it. */
export const uploadPreview = Effect.gen(function*() {
  const { checkCsrf } = yield* adminCaller
  const { config } = yield* HostConfig
  // An archive the worker cannot read is the preview's answer; what it refused trusting (checksums,
  // signature policy) or a manifest it cannot read are failing checks below.
  const archiveRefusal = (verdict: Extract<UploadVerdict, { readonly ok: false }>) =>
    verdict.stage === "archive" && verdict.tag === "ArchiveRefused"
      ? new HttpFailure({ status: 422, code: "ArchiveRefused", detail: `${verdict.message} (check: ${verdict.reason ?? "archive"})` })
      : undefined
  const uploads = uploadPolicyOf(config)
  const preview = yield* withUpload(checkCsrf, archiveRefusal, (upload) =>
    Effect.gen(function*() {
      if (upload._tag !== "Upload") return yield* badRequest("expected an upload")
      const inspection = yield* inspectFile(upload.path, { limits: limitsFromConfig(config), keyring: keyringFromConfig(config) }).pipe(
        Effect.catchTag("ArchiveRefused", (error) =>
          new HttpFailure({ status: 422, code: "ArchiveRefused", detail: `${error.message} (check: ${error.reason})` }))
      )
      const checks: Array<{ check: string; ok: boolean; detail: string }> = []
      const integrity = integrityRefusal(inspection)
      checks.push(integrity === undefined
        ? { check: "integrity", ok: true, detail: `${listedFileCount(inspection)} files match checksums.json` }
        : { check: `integrity (${integrity.reason})`, ok: false, detail: integrity.message })
      const policy = signaturePolicy(inspection.status, config.require_signatures)
      checks.push({
        check: "signature",
        ok: Either.isRight(policy) && inspection.status !== "invalid" && inspection.status !== "modified",
        detail: Either.isLeft(policy)
          ? policy.left
          : inspection.status === "signed"
          ? `signed by ${inspection.signature.trustedAs ?? inspection.signature.key ?? "a trusted key"}`
          : `${inspection.status}${config.require_signatures ? "" : " (this panel does not require signatures)"}`
      })
      // Which policy decided what this upload may do (docs/operations.md "Web installs").
      const refusedByPolicy = policyDetail(uploads, upload.name, inspection.status, inspection.signature.key)
      const uploadPolicy = {
        setting: uploads.setting,
        from: uploads.from,
        ok: refusedByPolicy === undefined,
        detail: refusedByPolicy ?? (uploads.setting === "signed"
          ? `${policyWords(uploads)}: signed by a trusted key, accepted`
          : `${policyWords(uploads)}: any archive whose checks pass is accepted`)
      }
      checks.push({ check: "upload policy", ok: uploadPolicy.ok, detail: uploadPolicy.detail })
      const manifest = inspection.manifest.decoded
      checks.push(manifest === undefined
        ? { check: "manifest", ok: false, detail: inspection.manifest.problems.map((p) => `${p.path}: ${p.message}`).join("; ") || "extension.yaml cannot be read" }
        : { check: "manifest", ok: true, detail: `${manifest.id} ${manifest.version}` })
      const live = yield* (yield* LiveRuntime).current
      const versions = versionsOf(live)
      const requires = requiresReport(manifest?.document.requires, versions)
      if (manifest !== undefined) {
        checks.push({ check: "requires", ok: requires.ok, detail: requires.ok ? (requires.warnings.join("; ") || "met") : requires.unmet.join("; ") })
      }
      const all = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.list)
      const states = new Map(all.map((other) => [other.extensionId, {
        version: other.version,
        enabled: other.enabled,
        dependencies: dependenciesOf(other)
      }]))
      if (manifest !== undefined) {
        const problems = dependencyProblems(manifest.document, states)
        checks.push({ check: "dependencies", ok: problems.length === 0, detail: problems.join("; ") || "met" })
      }
      const existing = manifest === undefined ? undefined : all.find((other) => other.extensionId === manifest.id)
      const action = existing === undefined || manifest === undefined
        ? "install"
        : semver.gt(manifest.version, existing.version)
        ? "update"
        : semver.eq(manifest.version, existing.version)
        ? "reinstall"
        : "downgrade"
      if (existing !== undefined && action !== "update") {
        checks.push({ check: "version", ok: false, detail: `${existing.extensionId} ${existing.version} is installed; a ${action} needs force` })
      }
      const capabilities = manifest === undefined
        ? null
        : yield* readArchiveCandidate(manifest.id, upload.path, undefined).pipe(
          Effect.map((candidate) => candidate.capabilities),
          Effect.orElseSucceed(() => null)
        )
      const failing = checks.find((check) => !check.ok)
      return {
        archive: upload.name,
        sha256: inspection.sha256,
        bytes: inspection.bytes,
        id: inspection.manifest.id,
        version: inspection.manifest.version,
        name: manifest?.document.name ?? null,
        description: manifest?.document.description ?? null,
        signature: { status: inspection.status, key: inspection.signature.key, trustedAs: inspection.signature.trustedAs ?? null },
        upload_policy: uploadPolicy,
        installed: existing === undefined ? null : { version: existing.version, enabled: existing.enabled },
        action,
        requires,
        dependencies: manifest?.document.dependencies ?? {},
        settings: manifest?.settings.length ?? 0,
        capabilities,
        checks,
        refusal: failing === undefined ? null : { check: failing.check, detail: failing.detail },
        installable: failing === undefined
      }
    }), { preview: true })
  return yield* ok(preview)
})

/** `GET registry?q=`: registry entries matching the search, each with versions and `requires` checked here. */
export const registrySearch = Effect.gen(function*() {
  yield* adminActor
  const request = yield* HttpServerRequest.HttpServerRequest
  const query = queryOf(request).get("q") ?? ""
  const registry = yield* Registry
  if (registry.url === "") {
    return yield* new HttpFailure({ status: 409, code: "RegistryNotConfigured", detail: "no registry is configured (registry_url in config/host.yaml)" })
  }
  const result = yield* registry.index.pipe(
    Effect.mapError((error) => new HttpFailure({ status: 502, code: error._tag, detail: error.message }))
  )
  const installed = new Map((yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.list)).map((record) => [record.extensionId, record]))
  const live = yield* (yield* LiveRuntime).current
  const versions = versionsOf(live)
  return yield* HttpServerResponse.json({
    data: searchEntries(result.index.extensions, query).map((entry) => {
      const record = installed.get(entry.id)
      const requires = requiresReport(entry.requires, versions)
      return {
        id: entry.id,
        name: entry.name,
        description: entry.description,
        tags: entry.tags,
        license: entry.license,
        authors: entry.authors,
        repository: entry.repository ?? null,
        latest: entry.latest_version,
        versions: availableVersions(entry).map((version) => ({ version, requires: requires.ok, latest: version === entry.latest_version })),
        requires,
        dependencies: entry.dependencies,
        installed: record === undefined ? null : { version: record.version, enabled: record.enabled, source: record.source.type },
        updateAvailable: record === undefined || record.source.type !== "registry" ? null : newerVersion(entry, record.version) ?? null
      }
    }),
    meta: { url: result.url, source: result.source, fetchedAt: result.fetchedAt.toISOString(), warning: result.warning ?? null, query }
  })
})

const RegistryInstall = Schema.Struct({ id: Schema.String, version: Schema.optional(Schema.String) })

/** `POST registry/install {id, version?}`: installs an extension (a chosen version) from the registry. */
export const registryInstall = Effect.gen(function*() {
  const actor = yield* adminActor
  const request = yield* HttpServerRequest.HttpServerRequest
  const text = yield* request.text
  const body = yield* Schema.decodeUnknown(Schema.parseJson(RegistryInstall))(text).pipe(
    Effect.mapError((error) => badRequest(`the body must be {id, version?}: ${error.message.split("\n")[0]}`))
  )
  const lifecycle = yield* Lifecycle
  const result = yield* lifecycle.add(SourceSpec.Registry({ id: body.id, range: body.version }), {
    actor,
    expectedId: body.id,
    lockTimeout: 5
  })
  yield* swap
  return yield* ok(result, 201)
})

/** `GET desired-state`: the file, the plan against it (or why there is none), and the drift. */
export const desiredState = Effect.gen(function*() {
  yield* adminActor
  const { paths } = yield* HostConfig
  const fs = yield* FileSystem.FileSystem
  const exists = yield* fs.exists(paths.desiredState).pipe(Effect.orElseSucceed(() => false))
  const text = exists ? yield* fs.readFileString(paths.desiredState) : null
  if (!exists) {
    return yield* ok({ file: paths.desiredState, exists, text, sha256: null, plan: null, planError: null, drift: [] })
  }
  const reconciler = yield* Reconciler
  const { env } = yield* ServerSettings
  const plan = yield* Effect.either(reconciler.plan({ file: paths.desiredState, prune: false, allowDestroy: false, env }))
  if (Either.isLeft(plan)) {
    const error = plan.left
    const problems = "problems" in error ? error.problems : []
    return yield* ok({
      file: paths.desiredState,
      exists,
      text,
      sha256: sha256Hex(text ?? ""),
      plan: null,
      planError: { code: error._tag, detail: error.message, problems },
      drift: []
    })
  }
  // Drift: what changed on the panel since the file was applied — every action on an installed extension
  // and every installed extension the file does not list.
  const drift = [
    ...plan.right.actions.filter((action) => action.type !== "install").map((action) => ({ id: action.id, type: action.type, detail: action.reason })),
    ...plan.right.warnings.filter((warning) => warning.includes("not in the desired state")).map((warning) => ({
      id: warning.split(" ")[0]!,
      type: "unlisted",
      detail: warning
    }))
  ]
  const { basis: _basis, ...shown } = plan.right
  return yield* ok({ file: paths.desiredState, exists, text, sha256: sha256Hex(text ?? ""), plan: { ...shown, text: formatPlan(plan.right) }, planError: null, drift })
})

const AdoptRequest = Schema.Struct({
  write: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  expected_sha256: Schema.optional(Schema.String)
})

/** `POST desired-state/adopt {write?, expected_sha256?}`: the diff adopt would make; with write, writes it. */
export const adoptDesiredState = Effect.gen(function*() {
  yield* adminActor
  const request = yield* HttpServerRequest.HttpServerRequest
  const text = yield* request.text
  const body = yield* Schema.decodeUnknown(Schema.parseJson(AdoptRequest))(text.trim() === "" ? "{}" : text).pipe(
    Effect.mapError((error) => badRequest(`the body must be {write?, expected_sha256?}: ${error.message.split("\n")[0]}`))
  )
  const { paths } = yield* HostConfig
  const { env } = yield* ServerSettings
  const result = yield* adopt(paths.desiredState, { write: body.write, expectedSha256: body.expected_sha256, env }).pipe(
    Effect.catchTag("AdoptRefused", (error) => new HttpFailure({ status: 409, code: "AdoptRefused", detail: error.message }))
  )
  return yield* ok(result)
})

const ActivityQuery = Schema.Struct({
  limit: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000)), { default: () => 50 }),
  offset: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.greaterThanOrEqualTo(0)), { default: () => 0 }),
  extension: Schema.optional(Schema.String),
  action: Schema.optional(ActivityAction)
})

/** `GET activity/page?limit&offset&extension&action`: one page of activity with the total that matches. */
export const activityPage = Effect.gen(function*() {
  yield* adminActor
  const request = yield* HttpServerRequest.HttpServerRequest
  const query = Object.fromEntries([...queryOf(request).entries()].filter(([, value]) => value !== ""))
  const options = yield* Schema.decodeUnknown(ActivityQuery)(query).pipe(
    Effect.mapError((error) => badRequest(`bad activity query: ${error.message.split("\n").slice(-1)[0]?.trim() ?? error.message}`))
  )
  const page = yield* Effect.flatMap(ActivityRepo, (repo) =>
    repo.page({ extensionId: options.extension, action: options.action, limit: options.limit, offset: options.offset }))
  return yield* HttpServerResponse.json({
    data: page.rows,
    meta: { total: page.total, limit: options.limit, offset: options.offset, extension: options.extension ?? null, action: options.action ?? null }
  })
})
