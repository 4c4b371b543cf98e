import { OpenApi } from "@effect/platform"
import { createHash } from "node:crypto"
import { HostApi } from "../contracts/Api.js"
import { endpointsOf } from "../contracts/Security.js"

// `GET /host/openapi.json` (docs/http.md "OpenAPI document"): the OpenAPI 3.1 document generated from the
// HttpApi by @effect/platform's OpenApi.fromApi. Each operation's security comes from the middleware that
// states its caller (http/contracts/Security.ts); `x-host-caller` adds the caller kind the security schemes
// cannot say (an admin, the server's owner). Made once per process: the contract does not change while Host runs.

type Operation = { readonly operationId: string } & Record<string, unknown>

const document = () => {
  const generated = OpenApi.fromApi(HostApi)
  const callers = new Map(endpointsOf(HostApi).map((endpoint) => [`${endpoint.group}.${endpoint.name}`, endpoint.caller]))
  const paths = Object.fromEntries(
    Object.entries(generated.paths).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item as Record<string, Operation>).map(([method, operation]) => [method, { ...operation, "x-host-caller": callers.get(operation.operationId) }])
      )
    ])
  )
  return {
    ...generated,
    info: { ...generated.info, title: "Host", description: "Host's HTTP API (docs/http.md). Generated from src/http/contracts." },
    paths
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
