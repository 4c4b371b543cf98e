import type { Area, ServerContext, UserContext } from "@host/sdk"
import { emit } from "./events.js"
import { createStore } from "./store.js"

// The page's context (docs/frontend.md "Context"): path and area from the URL, user and server from the
// shell's `window.__HOST__` and then from the panel's `setContext` calls. The router of a single-page
// panel changes the URL with history.pushState, which fires no event: the bridge wraps pushState and
// replaceState so it notices every navigation, whoever makes it.

export interface PageState {
  readonly path: string
  readonly area: Area
  readonly server: ServerContext | null
  readonly user: UserContext | null
}

export const areaOf = (path: string): Area => {
  if (path.startsWith("/server/")) return "server"
  if (path === "/account" || path.startsWith("/account/")) return "account"
  if (path === "/auth" || path.startsWith("/auth/")) return "auth"
  if (path === "/admin" || path.startsWith("/admin/")) return "admin"
  return "dashboard"
}

/**
 * The server id in `/server/{id}/…`, if any, as the URL writes it: the panel's short identifier or the
 * uuid (Pterodactyl and Pelican accept both; the name is historical).
 */
export const serverUuidOf = (path: string): string | undefined => /^\/server\/([^/]+)/.exec(path)?.[1]

/** Whether `id` (from a URL) names `server`: its uuid or its short identifier. */
export const namesServer = (id: string, server: ServerContext): boolean =>
  id === server.uuid || (server as { readonly identifier?: unknown }).identifier === id

/**
 * The server of a server page, told which id the page's URL names it by: a server context arrives with
 * its uuid, while the panel's URL may name it by its short identifier (docs/panels.md "Extension pages
 * under a real panel"). The context was given for this URL (the bootstrap is asked with `?path=`), so that
 * id is recorded as the server's `identifier`, and links built from the context keep the URL's form.
 */
const withPathId = (server: ServerContext | null, path: string): ServerContext | null => {
  const id = serverUuidOf(path)
  if (server === null || id === undefined || areaOf(path) !== "server" || namesServer(id, server)) return server
  if ((server as { readonly identifier?: unknown }).identifier !== undefined) return server
  const named: ServerContext & { readonly identifier: string } = { ...server, identifier: id }
  return named
}

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined

/** A server as the panel describes it (camelCase or snake_case), normalised; null when unusable. */
export const normaliseServer = (value: unknown): ServerContext | null => {
  const raw = record(value)
  if (raw === undefined || typeof raw.uuid !== "string") return null
  const permissions = Array.isArray(raw.permissions) ? raw.permissions.filter((p): p is string => typeof p === "string") : []
  return {
    ...raw,
    uuid: raw.uuid,
    name: typeof raw.name === "string" ? raw.name : raw.uuid,
    permissions,
    isOwner: raw.isOwner === true || raw.is_owner === true || raw.owner === true
  }
}

export const normaliseUser = (value: unknown): UserContext | null => {
  const raw = record(value)
  if (raw === undefined || (typeof raw.id !== "number" && typeof raw.username !== "string")) return null
  return {
    ...raw,
    id: typeof raw.id === "number" ? raw.id : -1,
    username: typeof raw.username === "string" ? raw.username : "",
    email: typeof raw.email === "string" ? raw.email : "",
    admin: raw.admin === true || raw.root_admin === true
  }
}

export const page = createStore<PageState>({ path: "/", area: "dashboard", server: null, user: null })

export const initPage = (host: { readonly user?: unknown; readonly server?: unknown }) => {
  const path = location.pathname
  page.set({ path, area: areaOf(path), user: normaliseUser(host.user), server: withPathId(normaliseServer(host.server), path) })
  const wrap = (method: "pushState" | "replaceState") => {
    const original = history[method]
    history[method] = function(this: History, ...args: Parameters<History["pushState"]>) {
      original.apply(this, args)
      sync()
    }
  }
  wrap("pushState")
  wrap("replaceState")
  addEventListener("popstate", sync)
}

const sync = () => {
  const path = location.pathname
  const current = page.get()
  if (path === current.path) return
  const area = areaOf(path)
  const id = serverUuidOf(path)
  // The server stays while the URL is still that server's (by uuid or short identifier, or the same id
  // as the page before); the panel's setContext brings the next one.
  const sameServer = id !== undefined && current.server !== null && (namesServer(id, current.server) || id === serverUuidOf(current.path))
  const server = area === "server" && sameServer ? withPathId(current.server, path) : null
  page.set({ ...current, path, area, server })
  emit("navigate", { path, from: current.path })
}

export const setContext = (context: { readonly server?: unknown; readonly user?: unknown }) => {
  const current = page.get()
  const path = location.pathname
  const next: PageState = {
    path,
    area: areaOf(path),
    server: "server" in context ? withPathId(normaliseServer(context.server), path) : current.server,
    user: "user" in context ? normaliseUser(context.user) : current.user
  }
  if (JSON.stringify(next) === JSON.stringify(current)) return
  page.set(next)
  if (next.path !== current.path) emit("navigate", { path: next.path, from: current.path })
}

/**
 * Moves the panel to `path` without a reload: pushState, then a popstate event, which the panel's
 * router (react-router's BrowserRouter) follows.
 */
export const navigateTo = (path: string, replace = false) => {
  if (path === location.pathname + location.search) return
  if (replace) history.replaceState(history.state, "", path)
  else history.pushState(null, "", path)
  dispatchEvent(new PopStateEvent("popstate", { state: history.state }))
}
