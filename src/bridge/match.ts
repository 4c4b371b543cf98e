import type { Area, PageArea, ServerContext, UserContext, WhenCondition } from "@host/sdk"

// Pure rules of the bridge (docs/frontend.md): route patterns, extension-page paths, permission and
// `when` gating. No DOM and no React, so they are easy to reason about and to test.

/** `/files/:name` against `/files/a.txt` → `{name: "a.txt"}`; a trailing `*` takes the rest as `*`. */
export const matchPath = (pattern: string, path: string): Record<string, string> | undefined => {
  const split = (value: string) => value.split("/").filter((part) => part !== "")
  const want = split(pattern)
  const have = split(path)
  const params: Record<string, string> = {}
  for (let index = 0; index < want.length; index++) {
    const part = want[index]!
    if (part === "*" && index === want.length - 1) {
      params["*"] = have.slice(index).map(decode).join("/")
      return params
    }
    const value = have[index]
    if (value === undefined) return undefined
    if (part.startsWith(":")) params[part.slice(1)] = decode(value)
    else if (part !== value) return undefined
  }
  return have.length === want.length ? params : undefined
}

const decode = (value: string) => {
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

/** Where an extension's pages live in each area (the panel's own paths); `serverId` is the uuid or the short identifier. */
export const pageBase = (area: PageArea, extensionId: string, serverId: string | undefined): string | undefined => {
  if (area === "dashboard") return `/ext/${extensionId}`
  if (area === "account") return `/account/ext/${extensionId}`
  return serverId === undefined ? undefined : `/server/${serverId}/ext/${extensionId}`
}

/**
 * The id links to `server`'s pages use, in the form the user came with (docs/panels.md "Extension pages
 * under a real panel"): the id of the current URL when it names this server (a real panel's URL may use
 * the short identifier or the uuid, and its own tabs follow the URL), else the server's short identifier
 * when known, else its uuid. Without a server, the current URL's server id.
 */
export const serverLinkId = (server: ServerContext | null, path: string): string | undefined => {
  const id = /^\/server\/([^/]+)/.exec(path)?.[1]
  const identifier = (server as { readonly identifier?: unknown } | null)?.identifier
  if (id !== undefined && (server === null || id === server.uuid || id === identifier)) return id
  if (server === null) return undefined
  return typeof identifier === "string" && identifier !== "" ? identifier : server.uuid
}

export const pageHref = (base: string, path: string) => path === "/" || path === "" ? base : `${base}${path.startsWith("/") ? path : `/${path}`}`

/** The extension page a path points at: `{area, extensionId, rest}`. */
export const extensionPageOf = (path: string): { readonly area: PageArea; readonly extensionId: string; readonly rest: string } | undefined => {
  const server = /^\/server\/[^/]+\/ext\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path)
  if (server !== null) return { area: "server", extensionId: `${server[1]}/${server[2]}`, rest: server[3] ?? "/" }
  const account = /^\/account\/ext\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path)
  if (account !== null) return { area: "account", extensionId: `${account[1]}/${account[2]}`, rest: account[3] ?? "/" }
  const dashboard = /^\/ext\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path)
  if (dashboard !== null) return { area: "dashboard", extensionId: `${dashboard[1]}/${dashboard[2]}`, rest: dashboard[3] ?? "/" }
  return undefined
}

/** Admins, the server's owner, `*` and the permission itself (on the server, or panel-wide for the user). */
export const holdsPermission = (permission: string, user: UserContext | null, server: ServerContext | null): boolean => {
  if (user?.admin === true) return true
  if (server !== null && (server.isOwner || server.permissions.includes("*") || server.permissions.includes(permission))) return true
  const global = (user as { readonly permissions?: unknown } | null)?.permissions
  return Array.isArray(global) && (global.includes("*") || global.includes(permission))
}

const list = <T>(value: T | ReadonlyArray<T> | undefined): ReadonlyArray<T> =>
  value === undefined ? [] : Array.isArray(value) ? value as ReadonlyArray<T> : [value as T]

const booleanAreas = ["server", "dashboard", "account", "admin", "auth"] as const

export const whenHolds = (
  when: WhenCondition | undefined,
  context: { readonly area: Area; readonly path: string },
  user: UserContext | null,
  server: ServerContext | null
): boolean => {
  if (when === undefined) return true
  const areas = list(when.area)
  if (areas.length > 0 && !areas.includes(context.area)) return false
  const wanted = booleanAreas.filter((area) => when[area] === true)
  if (wanted.length > 0 && !wanted.includes(context.area as typeof booleanAreas[number])) return false
  if (booleanAreas.some((area) => when[area] === false && context.area === area)) return false
  const paths = list(when.path)
  if (paths.length > 0 && !paths.some((pattern) => typeof pattern === "string" ? matchPath(pattern, context.path) !== undefined : pattern.test(context.path))) {
    return false
  }
  const prefixes = list(when.pathStartsWith)
  if (prefixes.length > 0 && !prefixes.some((prefix) => context.path.startsWith(prefix))) return false
  return list(when.permission).every((permission) => holdsPermission(permission, user, server))
}
