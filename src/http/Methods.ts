import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Chunk, Effect } from "effect"
import { errorResponse } from "./Errors.js"

// 405 for the admin API (docs/http.md "Errors"): a path the API has, asked with a method it does not
// take, is answered `405 Method Not Allowed` with an `Allow` header listing the methods it takes —
// not handed on to the extension routes as if `api` were a vendor. A path the API does not have goes
// on to `fallback` (the admin extension routes) as before.

const patternOf = (path: string): RegExp =>
  new RegExp(
    `^${
      path.split("/").map((segment) =>
        segment === "*" ? ".*" : segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      ).join("/")
    }/?$`
  )

/** The methods each path pattern of `router` takes. */
const methodsByPath = <E, R>(router: HttpRouter.HttpRouter<E, R>) => {
  const table = new Map<string, { readonly pattern: RegExp; readonly methods: Set<string> }>()
  for (const route of Chunk.toReadonlyArray(router.routes)) {
    const path = String(route.path)
    const entry = table.get(path) ?? { pattern: patternOf(path), methods: new Set<string>() }
    entry.methods.add(route.method)
    table.set(path, entry)
  }
  return [...table.values()]
}

export const methodNotAllowed = <E, R, E2, R2>(
  router: HttpRouter.HttpRouter<E, R>,
  fallback: Effect.Effect<HttpServerResponse.HttpServerResponse, E2, R2>
) => {
  const table = methodsByPath(router)
  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const pathname = request.url.split("?")[0] ?? ""
    const allowed = new Set<string>()
    for (const entry of table) if (entry.pattern.test(pathname)) for (const method of entry.methods) allowed.add(method)
    if (allowed.size === 0 || allowed.has("*")) return yield* fallback
    // GET implies HEAD (the server answers HEAD for every GET route).
    if (allowed.has("GET")) allowed.add("HEAD")
    const allow = [...allowed].sort().join(", ")
    return HttpServerResponse.setHeader(
      errorResponse(405, "MethodNotAllowed", `${request.method} is not allowed on ${pathname}; use ${allow}`),
      "allow",
      allow
    )
  })
}
