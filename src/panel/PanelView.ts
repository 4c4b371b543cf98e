import type { PanelDirectory, PanelUser, PanelUserId, ServerAccess } from "./Panel.js"

// What the reference panel's pages know about the panel (docs/frontend.md "Panel JSON"): the signed-in
// account, the servers it may see with its permissions on each, and which paths are panel pages. Pure,
// so the HTTP adapter and the page shell share one answer.

export interface AccountView {
  readonly id: PanelUserId
  readonly username: string
  readonly email: string
  readonly admin: boolean
}

export interface ServerView {
  readonly uuid: string
  readonly name: string
  readonly owner: { readonly id: PanelUserId; readonly username: string }
  readonly isOwner: boolean
  /** How the user sees the server: as a panel admin, its owner, or a subuser. */
  readonly role: ServerAccess["role"]
  /** `["*"]` for admins and owners. */
  readonly permissions: ReadonlyArray<string>
  /** Only for users who may manage the server's users (admins, the owner, `user.read`). */
  readonly subusers?: ReadonlyArray<{ readonly id: PanelUserId; readonly username: string; readonly email: string; readonly permissions: ReadonlyArray<string> }>
}

/** `window.__HOST__.server` and the SDK's `useServerContext()`. */
export interface ServerContextView {
  readonly uuid: string
  readonly name: string
  readonly permissions: ReadonlyArray<string>
  readonly isOwner: boolean
}

export const accountView = (user: PanelUser): AccountView => ({
  id: user.id,
  username: user.username,
  email: user.email,
  admin: user.admin
})

export const serverView = (directory: PanelDirectory, user: PanelUser, access: ServerAccess, detail = false): ServerView => {
  const owner = directory.userById(access.server.ownerId)
  const base: ServerView = {
    uuid: access.server.uuid,
    name: access.server.name,
    owner: { id: access.server.ownerId, username: owner?.username ?? `user ${access.server.ownerId}` },
    isOwner: access.server.ownerId === user.id,
    role: access.role,
    permissions: access.permissions
  }
  const seesUsers = access.permissions.includes("*") || access.permissions.includes("user.read")
  if (!detail || !seesUsers) return base
  return {
    ...base,
    subusers: access.server.subusers.flatMap((subuser) => {
      const known = directory.userById(subuser.userId)
      return known === undefined
        ? []
        : [{ id: known.id, username: known.username, email: known.email, permissions: subuser.permissions }]
    })
  }
}

export const serverContextView = (access: ServerAccess, user: PanelUser): ServerContextView => ({
  uuid: access.server.uuid,
  name: access.server.name,
  permissions: access.permissions,
  isOwner: access.server.ownerId === user.id
})

/** The server pages of the panel (`/server/{uuid}/<page>`). */
const serverPages: ReadonlySet<string> = new Set(["files", "databases", "schedules", "users", "backups", "network", "startup", "settings"])

export type PanelPath =
  | { readonly kind: "page"; readonly area: "dashboard" | "account"; readonly extension?: string }
  | { readonly kind: "page"; readonly area: "server"; readonly serverUuid: string; readonly extension?: string }
  /** Not a panel page: the shell still answers (the app shows its 404 page), with status 404. */
  | { readonly kind: "unknown" }

const segment = /^[^/]+$/
const isExtensionPage = (rest: ReadonlyArray<string>) =>
  rest.length >= 3 && rest[0] === "ext" && segment.test(rest[1]!) && segment.test(rest[2]!)
/** The extension whose page an `ext/{vendor}/{name}/…` path is (checked with isExtensionPage first). */
const extensionOf = (rest: ReadonlyArray<string>) => `${rest[1]!}/${rest[2]!}`

/**
 * Which panel page a path is (docs/frontend.md "Reference panel"): `/`, the server pages, the account
 * pages and the extension-page paths of the three areas. Only the shape is checked; whether the user
 * may see the server is the caller's question.
 */
export const classifyPanelPath = (pathname: string): PanelPath => {
  let parts: Array<string>
  try {
    parts = pathname.split("/").filter((part) => part !== "").map((part) => decodeURIComponent(part))
  } catch {
    return { kind: "unknown" }
  }
  if (parts.length === 0) return { kind: "page", area: "dashboard" }
  const [first, ...rest] = parts
  if (first === "ext") return isExtensionPage(parts) ? { kind: "page", area: "dashboard", extension: extensionOf(parts) } : { kind: "unknown" }
  if (first === "account") {
    if (isExtensionPage(rest)) return { kind: "page", area: "account", extension: extensionOf(rest) }
    const known = rest.length === 0 || (rest.length === 1 && (rest[0] === "api" || rest[0] === "ssh"))
    return known ? { kind: "page", area: "account" } : { kind: "unknown" }
  }
  if (first === "server" && rest.length >= 1) {
    const [serverUuid, page, ...more] = rest as [string, ...Array<string>]
    const server = { kind: "page", area: "server", serverUuid } as const
    if (page === undefined) return server
    if (serverPages.has(page) && more.length === 0) return server
    if (page === "files" && more[0] === "edit" && more.length >= 2) return server
    if (page === "schedules" && more.length === 1) return server
    if (isExtensionPage([page, ...more])) return { ...server, extension: extensionOf([page, ...more]) }
    return { kind: "unknown" }
  }
  return { kind: "unknown" }
}
