import { OpenApi } from "@effect/platform"
import { createHash } from "node:crypto"
import { HostApi } from "../contracts/Api.js"
import { callerOf, securityOf, securitySchemes } from "../contracts/Security.js"

// `GET /host/openapi.json` (docs/http.md "OpenAPI document"): the OpenAPI 3.1 document generated from the
// HttpApi by @effect/platform's OpenApi.fromApi, with each operation's security taken from the callers the
// contracts declare (http/contracts/Security.ts) — the API has no HttpApiMiddleware yet to carry them.
// Made once per process: the contract does not change while Host runs.

type Operation = { readonly operationId: string } & Record<string, unknown>

const document = () => {
  const generated = OpenApi.fromApi(HostApi)
  const paths = Object.fromEntries(
    Object.entries(generated.paths).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item as Record<string, Operation>).map(([method, operation]) => {
          const [group = "", endpoint = ""] = operation.operationId.split(".")
          const caller = callerOf(group, endpoint)
          return [method, { ...operation, security: securityOf(caller), "x-host-caller": caller }]
        })
      )
    ])
  )
  return {
    ...generated,
    info: { ...generated.info, title: "Host", description: "Host's HTTP API (docs/http.md). Generated from src/http/contracts." },
    paths,
    components: { ...generated.components, securitySchemes }
  }
}

let made: { readonly etag: string; readonly bytes: Uint8Array } | undefined

/** The document's bytes and their ETag, built on first use. */
export const openApiBody = () => {
  if (made === undefined) {
    const bytes = new TextEncoder().encode(JSON.stringify(document()))
    made = { bytes, etag: `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"` }
  }
  return made
}
