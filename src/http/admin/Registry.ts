import { Effect } from "effect"
import { installFromRegistry } from "../../usecases/Operations.js"
import { searchRegistry } from "../../usecases/RegistrySearch.js"
import { HttpFailure } from "../Errors.js"
import { respond } from "../api/Respond.js"
import { OperationBody, RegistrySearchBody, type RegistrySearchQuery } from "../contracts/Admin.js"
import { AdminActor } from "../contracts/Security.js"
import { jsonBody } from "./Decode.js"
import { answered } from "./Failures.js"

// The Registry screen (docs/admin.md "Registry"): search the index, install from it.

const registryFailed = (error: { readonly _tag: string; readonly message: string }) =>
  new HttpFailure({ status: 502, code: error._tag, detail: error.message })

/** `GET registry?q=`: registry entries matching the search, each with versions and `requires` checked here. */
export const registrySearch = ({ q }: typeof RegistrySearchQuery.Type) =>
  Effect.gen(function*() {
    yield* AdminActor
    // An index that cannot be read is the registry's failure, not this server's: 502 with its own tag.
    const { data, meta } = yield* answered(searchRegistry(q)).pipe(
      Effect.catchTags({
        RegistryNotConfigured: registryFailed,
        RegistryFetchFailed: registryFailed,
        RegistryIndexInvalid: registryFailed,
        RegistryIndexUnsigned: registryFailed,
        RegistryIndexSignatureInvalid: registryFailed,
        RegistryIndexRolledBack: registryFailed,
        RegistryIndexExpired: registryFailed,
        RegistryUnknown: registryFailed
      })
    )
    return yield* respond(RegistrySearchBody, { data, meta })
  })

/** `POST registry/install {id, version?}`: installs an extension (a chosen version) from the registry. */
export const registryInstall = Effect.gen(function*() {
  const { actor } = yield* AdminActor
  const body = yield* jsonBody(["admin", "registryInstall"], "{id, version?}")
  return yield* respond(OperationBody, { data: yield* installFromRegistry(body, actor) }, { status: 201 })
})
