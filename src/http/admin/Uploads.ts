import { FileSystem, HttpIncomingMessage, HttpServerRequest, Multipart, Path } from "@effect/platform"
import { Effect, Option, Stream } from "effect"
import { HostConfig } from "../../config/HostConfig.js"
import { SourceRejected } from "../../lifecycle/Errors.js"
import { SourceSpec } from "../../lifecycle/Source.js"
import { uploadFolderName, uploadsDirectory } from "../../lifecycle/Uploads.js"
import { formatBytes } from "../../domain/Bytes.js"
import { type UploadSource, installUpload, updateFromUpload } from "../../usecases/Operations.js"
import type { InspectedUpload } from "../../usecases/UploadFacts.js"
import { uploadPreview as previewOf } from "../../usecases/UploadPreview.js"
import { policyWords, type UploadPolicy, uploadPolicyOf } from "../../usecases/UploadPolicy.js"
import { header } from "../Context.js"
import { badRequest, HttpFailure } from "../Errors.js"
import { archiveTooLargeDetail, uploadOverheadBytes } from "../Limits.js"
import { inspectUpload, type UploadVerdict } from "../UploadInspection.js"
import { respond } from "../api/Respond.js"
import { type InstallQuery, OperationBody, PreviewBody, UpdateQuery } from "../contracts/Admin.js"
import { type AdminCaller, UploadingAdmin, type UploadingAdminCaller } from "../contracts/Security.js"
import { queryParams } from "./Decode.js"
import { uuid } from "../../system/Ids.js"

// Uploaded `.host` archives (docs/http.md, docs/operations.md "Web installs"): received into a folder of
// their own, inspected (and, for an install or update, unpacked) once in a worker thread, then installed
// from that unpacked tree, used for an update, or previewed.

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
 * the form's `_token`), has a worker thread inspect the archive, then runs `use` with it and what the
 * worker read of it. A refusal
 * the worker finds is the operation's refusal (`refusal` words it as the caller's operation).
 */
const withUpload = <A, E, R, Refusal extends SourceRejected | HttpFailure>(
  caller: UploadingAdminCaller,
  // The operation's own wording of a refusal the worker found, or undefined when it has none for it.
  refusal: (verdict: Extract<UploadVerdict, { readonly ok: false }>, upload: ReceivedUpload) => Refusal | undefined,
  use: (archive: UploadSource, facts: InspectedUpload | undefined, actor: AdminCaller["actor"]) => Effect.Effect<A, E, R>,
  options: { readonly preview?: boolean } = {}
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const request = yield* HttpServerRequest.HttpServerRequest
    // `admin_uploads: off`: refused before a byte of the body is read (docs/operations.md "Web installs").
    const policy = uploadPolicyOf((yield* HostConfig).config)
    if (policy.setting === "off") return yield* uploadsOff(policy)
    // A declared body over the limit is refused here, after authentication and authorization, without
    // reading it (the server closes the connection after the answer: docs/http.md "Limits").
    const archiveBytes = (yield* HostConfig).config.limits.archive_bytes
    const declared = header(request, "content-length")
    if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > archiveBytes + uploadOverheadBytes) {
      return yield* new HttpFailure({
        status: 413,
        code: "SourceRejected",
        detail: archiveTooLargeDetail("the upload", formatBytes(Number(declared)), archiveBytes)
      })
    }
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
    const actor = yield* caller.actorAfterCsrf(upload.formToken)
    // An install or update has the judge unpack what passes inside the upload folder (removed with it
    // when the request ends, unless staging moved it); a preview installs nothing, so nothing is unpacked.
    const unpackTo = options.preview === true ? undefined : path.join(folder, "unpacked")
    const { facts, unpacked, verdict } = yield* inspectUpload(upload.target, upload.name, unpackTo)
    const refused = !verdict.ok && refusedByInspection.has(verdict.tag) ? refusal(verdict, upload) : undefined
    if (refused !== undefined) return yield* refused
    // `admin_uploads: signed` refuses what is not signed by a trusted key; a preview shows it as its check.
    if (!verdict.ok && verdict.stage === "policy" && options.preview !== true) {
      return yield* new HttpFailure({ status: 403, code: "UploadPolicy", detail: `${verdict.message}; nothing was changed` })
    }
    if (!verdict.ok && verdict.stage === "disk") {
      return yield* new HttpFailure({ status: 500, code: verdict.tag, detail: `${verdict.message}; nothing was changed` })
    }
    if (!verdict.ok && (verdict.tag === "InspectionTimeout" || verdict.tag === "InspectionFailed")) {
      return yield* new HttpFailure({ status: 422, code: "SourceRejected", detail: `${verdict.message}; nothing was changed` })
    }
    // What the worker unpacked is staged as it is; anything else (a verdict the lifecycle words itself)
    // has the lifecycle read the archive and meet the problem on its own.
    const source: UploadSource = verdict.ok && unpacked !== undefined && facts !== undefined
      ? SourceSpec.StagedUpload({
        path: upload.target,
        name: upload.name,
        directory: unpacked.directory,
        sha256: facts.sha256,
        signature: { status: facts.status, key: facts.signature.key },
        detachedSignature: unpacked.detachedSignature
      })
      : SourceSpec.Upload({ path: upload.target, name: upload.name })
    return yield* use(source, facts, actor)
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

/** `POST extensions?force&disabled&noMigrate`: installs an uploaded archive. */
export const uploadInstall = (flags: typeof InstallQuery.Type) =>
  Effect.gen(function*() {
    const caller = yield* UploadingAdmin
    const result = yield* withUpload(caller, sourceRefusal("add", (upload) => upload.name), (upload, _facts, actor) => installUpload(upload, flags, actor))
    return yield* respond(OperationBody, { data: result }, { status: 201 })
  })

/** `POST extensions/{vendor}/{name}/update` with a multipart body: updates from an uploaded archive. */
export const uploadUpdate = (id: string, caller: UploadingAdminCaller) =>
  Effect.gen(function*() {
    const { force } = yield* queryParams(UpdateQuery, "{force?}")
    return yield* withUpload(caller, sourceRefusal("update", () => id), (upload, _facts, actor) => updateFromUpload(id, upload, force, actor))
  })

/** `POST extensions/preview`: inspects an uploaded archive without installing it. */
export const uploadPreview = Effect.gen(function*() {
  const caller = yield* UploadingAdmin
  // An archive the worker cannot read is the preview's answer; what it refused trusting (checksums,
  // signature policy) or a manifest it cannot read are failing checks of the preview.
  const unreadable = (verdict: { readonly message: string; readonly reason?: string | undefined }) =>
    new HttpFailure({ status: 422, code: "ArchiveRefused", detail: `${verdict.message} (check: ${verdict.reason ?? "archive"})` })
  const archiveRefusal = (verdict: Extract<UploadVerdict, { readonly ok: false }>) =>
    verdict.stage === "archive" && verdict.tag === "ArchiveRefused" ? unreadable(verdict) : undefined
  const preview = yield* withUpload(caller, archiveRefusal, (upload, facts) =>
    Effect.gen(function*() {
      if (facts === undefined) return yield* unreadable({ message: `${upload.name} could not be read` })
      return yield* previewOf(upload.name, facts)
    }), { preview: true })
  return yield* respond(PreviewBody, { data: preview })
})
