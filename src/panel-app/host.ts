// The page's bootstrap (`window.__HOST__`, rendered by the server into the shell; docs/frontend.md) as the
// panel app reads it, and the one call the app makes into the bridge: `setContext` on every navigation.
// The bridge owns the rest of `window.__HOST__`, so the app reads it through this narrow view instead of
// declaring the global's type.

export interface HostUser {
  readonly id: number
  readonly username: string
  readonly email: string
  readonly admin: boolean
}

export interface HostServer {
  readonly uuid: string
  readonly name: string
  readonly permissions: ReadonlyArray<string>
  readonly isOwner: boolean
}

export interface PanelBootstrap {
  readonly version: string
  readonly baseUrl: string
  readonly csrfToken: string | null
  readonly user: HostUser
  readonly server: HostServer | null
  readonly panel?: { readonly name: string; readonly version: string | null }
  readonly setContext?: (context: { server: HostServer | null; user: HostUser }) => void
}

export const bootstrap = (): PanelBootstrap => {
  const host = (window as unknown as { __HOST__?: PanelBootstrap }).__HOST__
  if (host === undefined) throw new Error("window.__HOST__ is missing: the panel app must be loaded by the panel's page shell")
  return host
}

/** Tells the bridge (when it is loaded) which server and user the page now shows. */
export const announceContext = (server: HostServer | null) => {
  const host = bootstrap()
  if (typeof host.setContext === "function") host.setContext({ server, user: host.user })
}
