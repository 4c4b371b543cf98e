// The panel's users and servers as data (the types only): apart from Panel.ts so that panel/Access.ts,
// which Panel.ts imports, needs them without importing Panel.ts back (no import circle; test/layering).

/**
 * How the panel keys its users (docs/decisions.md "Panel user ids"): a number on the embedded panel and
 * Pterodactyl (`attributes.id`), the uuid string on Pelican (its account has no numeric id).
 */
export type PanelUserId = number | string

export interface PanelUser {
  readonly id: PanelUserId
  readonly username: string
  readonly email: string
  readonly admin: boolean
  /** Granted on every server the user can see (ours; `*` = all). */
  readonly permissions: ReadonlyArray<string>
  /** Changes whenever the user's credentials change; sessions issued under another stamp end. */
  readonly credentialStamp: string
}

export interface PanelServer {
  readonly uuid: string
  readonly name: string
  /** The panel's short identifier (Pterodactyl/Pelican `identifier`); the uuid's first 8 characters otherwise. */
  readonly identifier?: string | undefined
  readonly ownerId: PanelUserId
  readonly subusers: ReadonlyArray<{ readonly userId: PanelUserId; readonly permissions: ReadonlyArray<string> }>
}

/** A user's access to one server: `all` for admins and owners, else the listed permissions. */
export interface ServerAccess {
  readonly server: PanelServer
  readonly role: "admin" | "owner" | "subuser"
  readonly permissions: ReadonlyArray<string>
}

/** The users and servers of the panel at one moment, with lookups. Pure data: rebuild it to refresh. */
export interface PanelDirectory {
  readonly users: ReadonlyArray<PanelUser>
  readonly servers: ReadonlyArray<PanelServer>
  readonly userById: (id: PanelUserId) => PanelUser | undefined
  /** The user owning this API token (compared by sha256). */
  readonly userByToken: (token: string) => PanelUser | undefined
  readonly userByName: (username: string) => PanelUser | undefined
  /** `undefined` when the server does not exist or the user has no access to it. */
  readonly serverAccess: (user: PanelUser, uuid: string) => ServerAccess | undefined
  readonly serversOf: (user: PanelUser) => ReadonlyArray<ServerAccess>
  /**
   * Whether the user holds `permission`: on `serverUuid` when given, else on any server they can see
   * (plus their global grants). Admins hold every permission; owners hold every permission on their server.
   */
  readonly can: (user: PanelUser, permission: string, serverUuid?: string) => boolean
}
