import type { RouteGroup } from "../domain/Manifest.js"

// Extension routes as the runtime holds them: compiled once per generation, matched by segments.
// Paths use `{name}` (or `:name`) parameters; `{server}` is a server uuid checked against the user's
// access. The handler stays whatever the route file gave (the HTTP layer calls it).

export const routeMethods = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const
export type RouteMethod = (typeof routeMethods)[number]

export type Segment = { readonly _tag: "Literal"; readonly value: string } | { readonly _tag: "Param"; readonly name: string }

export interface CompiledRoute {
  readonly group: RouteGroup
  readonly method: RouteMethod
  /** As declared, normalised to start with `/`. */
  readonly path: string
  readonly segments: ReadonlyArray<Segment>
  readonly permission: string | undefined
  readonly usesServer: boolean
  readonly handler: (context: never) => unknown
  /** The route file it came from, relative to the extension root. */
  readonly file: string
}

export const groupPrefixes: Readonly<Record<RouteGroup, string>> = {
  "api-client": "/api/client/host",
  admin: "/admin/host",
  web: "/host"
}

/** The public URL path of a route: `<group prefix>/<vendor>/<name><path>`. */
export const routeUrl = (group: RouteGroup, extensionId: string, path: string): string =>
  `${groupPrefixes[group]}/${extensionId}${path === "/" ? "" : path}`

const splitPath = (path: string): ReadonlyArray<string> => path.split("/").filter((segment) => segment !== "")

export const compileSegments = (path: string): ReadonlyArray<Segment> =>
  splitPath(path).map((segment) => {
    const brace = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(segment)
    if (brace !== null) return { _tag: "Param", name: brace[1]! }
    if (segment.startsWith(":") && segment.length > 1) return { _tag: "Param", name: segment.slice(1) }
    return { _tag: "Literal", value: segment }
  })

export const normalizeRoutePath = (path: string): string => `/${splitPath(path).join("/")}`

export type RouteMatch =
  | { readonly _tag: "Found"; readonly route: CompiledRoute; readonly params: Readonly<Record<string, string>> }
  | { readonly _tag: "MethodNotAllowed"; readonly allowed: ReadonlyArray<string> }
  | { readonly _tag: "NotFound" }

/** Matches a path below the extension's prefix (`rest` like `/stats` or `/`). Literal routes win over params. */
export const matchRoute = (routes: ReadonlyArray<CompiledRoute>, method: string, rest: string): RouteMatch => {
  const parts = splitPath(rest).map((part) => {
    try {
      return decodeURIComponent(part)
    } catch {
      return part
    }
  })
  const candidates: Array<{ route: CompiledRoute; params: Record<string, string>; score: number }> = []
  for (const route of routes) {
    if (route.segments.length !== parts.length) continue
    const params: Record<string, string> = {}
    let score = 0
    let ok = true
    for (let index = 0; index < parts.length; index++) {
      const segment = route.segments[index]!
      if (segment._tag === "Literal") {
        if (segment.value !== parts[index]) {
          ok = false
          break
        }
        score += 1
      } else params[segment.name] = parts[index]!
    }
    if (ok) candidates.push({ route, params, score })
  }
  if (candidates.length === 0) return { _tag: "NotFound" }
  const wanted = method === "HEAD" ? "GET" : method
  const matching = candidates.filter((candidate) => candidate.route.method === wanted).sort((a, b) => b.score - a.score)
  const best = matching[0]
  if (best === undefined) return { _tag: "MethodNotAllowed", allowed: [...new Set(candidates.map((c) => c.route.method))].sort() }
  return { _tag: "Found", route: best.route, params: best.params }
}
