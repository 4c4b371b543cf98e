import { Effect } from "effect"
import * as Operations from "../../usecases/Operations.js"
import { header } from "../Context.js"
import { notFound } from "../Errors.js"
import type { PayloadOf } from "../api/Payload.js"
import { respond } from "../api/Respond.js"
import { FlagsBody, FlagsQuery, OperationBody, type OperationPath, RegistryUpdate, UpdateAllBody, UpdatesBody } from "../contracts/Admin.js"
import { AdminActor, UploadingAdmin } from "../contracts/Security.js"
import { extensionId } from "./Caller.js"
import { isJsonRequest, jsonBodyOfMember, queryParams } from "./Decode.js"
import { uploadUpdate } from "./Uploads.js"

// Operations on one installed extension (docs/http.md): `POST extensions/{vendor}/{name}/{action}` with
// action enable, disable, remove or update; and the registry updates of every extension.

const operations = ["enable", "disable", "remove", "update"] as const

// The two JSON bodies read below are members of the union the endpoint declares (contracts/Admin.ts).
const _declaredMembers: (body: typeof FlagsBody.Type | typeof RegistryUpdate.Type) => PayloadOf<"admin", "operation"> = (body) => body
void _declaredMembers

/** `force` and `keepData` from the query string and, for a JSON request, the body (which wins). */
const readFlags = Effect.gen(function*() {
  const query = yield* queryParams(FlagsQuery, "{force?, keepData?}")
  const body = (yield* isJsonRequest) ? yield* jsonBodyOfMember(FlagsBody, "{force?, keepData?, disabled?, noMigrate?}") : {}
  const flags = { ...query, ...body }
  return { force: flags.force ?? false, keepData: flags.keepData ?? false } satisfies Operations.OperationFlags
})

/** `POST extensions/{vendor}/{name}/{action}`: enable, disable, remove, or update (an upload or the registry). */
export const extensionOperation = ({ action, ...path }: OperationPath) =>
  Effect.gen(function*() {
    const id = extensionId(path)
    const caller = yield* UploadingAdmin
    // An uploaded update's CSRF token may be a field of its form, checked once the form is read.
    const uploading = action === "update" && (header(caller.request, "content-type") ?? "").startsWith("multipart/form-data")
    if (uploading) return yield* respond(OperationBody, { data: yield* uploadUpdate(id, caller) })
    const actor = yield* caller.actorAfterCsrf(undefined)
    const operation = operations.find((known) => known === action)
    if (operation === undefined) return yield* notFound(`unknown operation ${action}`)
    if (operation === "update") {
      // update from the registry (`{"version": "1.2.3" | "^1.2"}`, default latest); an upload is above.
      const { version } = yield* jsonBodyOfMember(RegistryUpdate, "{version?}")
      return yield* respond(OperationBody, { data: yield* Operations.updateFromRegistry(id, version, actor) })
    }
    const flags = yield* readFlags
    return yield* respond(OperationBody, { data: yield* Operations.toggleOrRemove(operation, id, flags, actor) })
  })

/** `GET updates`: the extensions installed from the registry that it has a newer version of. */
export const availableUpdates = Effect.gen(function*() {
  yield* AdminActor
  return yield* respond(UpdatesBody, { data: yield* Operations.availableUpdates })
})

/** `POST updates`: updates every extension installed from the registry; one failure does not stop the rest. */
export const updateAll = Effect.gen(function*() {
  const { actor } = yield* AdminActor
  return yield* respond(UpdateAllBody, { data: yield* Operations.updateAll(actor) })
})
