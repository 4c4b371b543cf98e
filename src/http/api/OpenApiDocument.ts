import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, OpenApi } from "@effect/platform"
import { HostApi } from "../contracts/Api.js"
import { endpointsOf, type Schemes } from "../contracts/Security.js"
import { contentETag } from "../../system/Hash.js"

// `GET /host/openapi.json` (docs/http.md "OpenAPI document"): the OpenAPI 3.1 document generated from the
// HttpApi by @effect/platform's OpenApi.fromApi. Each operation's security is the schemes named by the
// statement of its caller (http/contracts/Security.ts `schemes`: the statements are no security middleware,
// so fromApi leaves them out); `x-host-caller` adds the caller kind the security schemes cannot say (an
// admin, the server's owner). Made once per process: the contract does not change while Host runs.

type Operation = { readonly operationId: string; readonly security: ReadonlyArray<unknown> } & Record<string, unknown>

/** The OpenAPI objects of `schemes`, written by OpenApi.fromApi itself (from an API that only names them). */
const schemeObjects = (schemes: Schemes): Record<string, unknown> => {
  class Named extends HttpApiMiddleware.Tag<Named>()("host/http/OpenApiSchemes", { security: schemes }) {}
  const api = HttpApi.make("schemes").add(HttpApiGroup.make("schemes").add(HttpApiEndpoint.get("schemes", "/").middleware(Named)))
  return OpenApi.fromApi(api).components.securitySchemes
}

const document = () => {
  const generated = OpenApi.fromApi(HostApi)
  const endpoints = endpointsOf(HostApi)
  const statements = new Map(endpoints.map((endpoint) => [`${endpoint.group}.${endpoint.name}`, endpoint]))
  // The schemes in the order of their first use, as fromApi lists a security middleware's.
  const schemes: Record<string, (typeof endpoints)[number]["schemes"][string]> = {}
  for (const endpoint of endpoints) for (const [name, scheme] of Object.entries(endpoint.schemes)) schemes[name] ??= scheme
  const paths = Object.fromEntries(
    Object.entries(generated.paths).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item as Record<string, Operation>).map(([method, operation]) => {
          const statement = statements.get(operation.operationId)
          const security = Object.keys(statement?.schemes ?? {}).map((name) => ({ [name]: [] }))
          return [method, { ...operation, security: [...operation.security, ...security], "x-host-caller": statement?.caller }]
        })
      )
    ])
  )
  return {
    ...generated,
    info: { ...generated.info, title: "Host", description: "Host's HTTP API (docs/http.md). Generated from src/http/contracts." },
    paths,
    components: { ...generated.components, securitySchemes: { ...generated.components.securitySchemes, ...schemeObjects(schemes) } }
  }
}

let made: { readonly etag: string; readonly bytes: Uint8Array } | undefined

/** The document's bytes and their ETag, built on first use. */
export const openApiBody = () => {
  if (made === undefined) {
    const bytes = new TextEncoder().encode(JSON.stringify(document()))
    made = { bytes, etag: contentETag(bytes) }
  }
  return made
}
