import { HttpServerResponse } from "@effect/platform"
import { Effect, Schema } from "effect"
import { installFromRegistry } from "../../usecases/Operations.js"
import { searchRegistry } from "../../usecases/RegistrySearch.js"
import { HttpFailure } from "../Errors.js"
import { adminActor, ok } from "./Caller.js"
import { jsonBody, queryParams } from "./Decode.js"
import { answered } from "./Failures.js"

// The Registry screen (docs/admin.md "Registry"): search the index, install from it.

const registryFailed = (error: { readonly _tag: string; readonly message: string }) =>
  new HttpFailure({ status: 502, code: error._tag, detail: error.message })

const SearchQuery = Schema.Struct({ q: Schema.optionalWith(Schema.String, { default: () => "" }) })

/** `GET registry?q=`: registry entries matching the search, each with versions and `requires` checked here. */
export const registrySearch = Effect.gen(function*() {
  yield* adminActor
  const { q } = yield* queryParams(SearchQuery, "{q?}")
  // An index that cannot be read is the registry's failure, not this server's: 502 with its own tag.
  const { data, meta } = yield* answered(searchRegistry(q)).pipe(
    Effect.catchTags({
      RegistryNotConfigured: registryFailed,
      RegistryFetchFailed: registryFailed,
      RegistryIndexInvalid: registryFailed
    })
  )
  return yield* HttpServerResponse.json({ data, meta })
})

const RegistryInstall = Schema.Struct({ id: Schema.String, version: Schema.optional(Schema.String) })

/** `POST registry/install {id, version?}`: installs an extension (a chosen version) from the registry. */
export const registryInstall = Effect.gen(function*() {
  const actor = yield* adminActor
  const body = yield* jsonBody(RegistryInstall, "{id, version?}")
  return yield* ok(yield* installFromRegistry(body, actor), 201)
})
