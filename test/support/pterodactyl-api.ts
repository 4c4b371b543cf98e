import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

// A stand-in for a Pterodactyl panel's client API (a PHP panel cannot run here), built from its documented
// behaviour (docs/panels.md "Drivers"): `{object, attributes}` envelopes, lists with `meta.pagination`, the
// session cookie `pterodactyl_session` or a Bearer `ptlc_…` key, the 2FA 400 on guarded endpoints, 404 for
// servers the caller may not open, JSON 401 without credentials, a rotated Set-Cookie on every answer. It
// records every request (path and the headers received) and can be made slow, down, or answer 5xx.
// `pelican-api.ts` starts the same server with Pelican's differences.

export interface StandInUser {
  readonly id: number
  readonly uuid: string
  readonly username: string
  readonly email: string
  readonly admin: boolean
  /** Pterodactyl: the panel requires 2FA and the user has none (guarded endpoints answer 400). */
  readonly twoFactorPending?: boolean
  /** Session cookie values and Bearer keys that sign this user in. */
  readonly sessions: ReadonlyArray<string>
  readonly keys: ReadonlyArray<string>
}

export interface StandInServer {
  readonly uuid: string
  readonly identifier: string
  readonly name: string
  readonly owner: number
  readonly subusers: ReadonlyArray<{ readonly user: number; readonly permissions: ReadonlyArray<string> }>
}

export interface ReceivedRequest {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
}

export interface PanelStandIn {
  readonly url: string
  readonly kind: "pterodactyl" | "pelican"
  readonly received: Array<ReceivedRequest>
  /** Requests to one path (prefix match on the path without the query). */
  readonly count: (path: string) => number
  readonly users: Array<StandInUser>
  readonly servers: Array<StandInServer>
  /** "ok", "slow" (answers after `slowMs`), "error" (500), "limited" (429, the client API's rate limit), or "down" (the socket is destroyed). */
  mode: "ok" | "slow" | "error" | "limited" | "down"
  slowMs: number
  /** The application API key (`ptla_…`) that lists all servers. */
  readonly applicationKey: string
  readonly close: () => Promise<void>
}

const envelope = (object: string, attributes: unknown) => ({ object, attributes })

const paged = <A>(items: ReadonlyArray<A>, page: number, perPage: number) => {
  const totalPages = Math.max(1, Math.ceil(items.length / perPage))
  const slice = items.slice((page - 1) * perPage, page * perPage)
  return {
    slice,
    pagination: { total: items.length, count: slice.length, per_page: perPage, current_page: page, total_pages: totalPages, links: {} }
  }
}

export const startPanelStandIn = async (options: {
  readonly kind?: "pterodactyl" | "pelican"
  readonly users: ReadonlyArray<StandInUser>
  readonly servers: ReadonlyArray<StandInServer>
}): Promise<PanelStandIn> => {
  const kind = options.kind ?? "pterodactyl"
  const cookieName = kind === "pterodactyl" ? "pterodactyl_session" : "pelican_session"
  const received: Array<ReceivedRequest> = []
  const users = [...options.users]
  const servers = [...options.servers]
  const applicationKey = `ptla_${randomBytes(8).toString("hex")}`

  const cookieOf = (header: string | undefined, name: string) => {
    for (const part of (header ?? "").split(";")) {
      const index = part.indexOf("=")
      if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim()
    }
    return undefined
  }

  const userOf = (request: IncomingMessage): StandInUser | undefined => {
    const bearer = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "")?.[1]
    if (bearer !== undefined) return users.find((user) => user.keys.includes(bearer))
    const session = cookieOf(request.headers.cookie, cookieName)
    return session === undefined ? undefined : users.find((user) => user.sessions.includes(session))
  }

  const accountOf = (user: StandInUser) =>
    kind === "pterodactyl"
      ? envelope("user", { id: user.id, admin: user.admin, username: user.username, email: user.email, first_name: "A", last_name: "B", language: "en" })
      : envelope("user", {
        uuid: user.uuid, username: user.username, email: user.email, language: "en", image: "", admin: user.admin,
        root_admin: user.admin, "2fa_enabled": false, created_at: "2026-01-01T00:00:00+00:00", updated_at: "2026-01-01T00:00:00+00:00"
      })

  const serverAttributes = (server: StandInServer, user: StandInUser) => ({
    server_owner: server.owner === user.id,
    identifier: server.identifier,
    internal_id: servers.indexOf(server) + 1,
    uuid: server.uuid,
    name: server.name,
    node: "node-1",
    is_node_under_maintenance: false,
    sftp_details: { ip: "node.test", port: 2022 },
    description: "",
    limits: { memory: 1024, swap: 0, disk: 5120, io: 500, cpu: 100, threads: null, oom_disabled: true },
    invocation: "java -jar server.jar",
    docker_image: "ghcr.io/test",
    egg_features: [],
    feature_limits: { databases: 0, allocations: 0, backups: 0 },
    status: null,
    is_suspended: false,
    is_installing: false,
    is_transferring: false
  })

  const canOpen = (server: StandInServer, user: StandInUser) =>
    user.admin || server.owner === user.id || server.subusers.some((subuser) => subuser.user === user.id)

  const permissionsOf = (server: StandInServer, user: StandInUser): ReadonlyArray<string> =>
    server.owner === user.id
      ? ["*"]
      : user.admin
      ? ["*", "admin.websocket.errors", "admin.websocket.install", "admin.websocket.transfer"]
      : (server.subusers.find((subuser) => subuser.user === user.id)?.permissions ?? [])

  const answer = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, {
      "content-type": "application/json",
      // Laravel rotates the session and XSRF cookies on every answer; a sidecar must drop them.
      "set-cookie": [`${cookieName}=${randomBytes(12).toString("hex")}; path=/; httponly`, `XSRF-TOKEN=${randomBytes(12).toString("hex")}; path=/`]
    })
    response.end(JSON.stringify(body))
  }
  const error = (response: ServerResponse, status: number, code: string, detail: string) =>
    answer(response, status, { errors: [{ code, status: String(status), detail }] })

  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://panel.invalid")
    const path = url.pathname
    const application = path.startsWith("/api/application/")
    if (application) {
      if (request.headers.authorization !== `Bearer ${applicationKey}`) return error(response, 401, "AuthenticationException", "Unauthenticated.")
      if (path === "/api/application/servers") {
        const { pagination, slice } = paged(servers, Number(url.searchParams.get("page") ?? 1), Number(url.searchParams.get("per_page") ?? 50))
        return answer(response, 200, {
          object: "list",
          data: slice.map((server) => envelope("server", { id: servers.indexOf(server) + 1, uuid: server.uuid, identifier: server.identifier, name: server.name, user: server.owner })),
          meta: { pagination }
        })
      }
      return error(response, 404, "NotFoundHttpException", "not found")
    }
    const user = userOf(request)
    if (user === undefined) return error(response, 401, "AuthenticationException", "Unauthenticated.")
    if (path === "/api/client/account") return answer(response, 200, accountOf(user))
    // Pterodactyl's RequireTwoFactorAuthentication guards every client endpoint but the account.
    if (kind === "pterodactyl" && user.twoFactorPending === true) {
      return error(response, 400, "TwoFactorAuthRequiredException", "Two-factor authentication is required on this account in order to access this endpoint.")
    }
    if (path === "/api/client/permissions") {
      return answer(response, 200, envelope("system_permissions", { permissions: { websocket: { description: "", keys: { connect: "" } } } }))
    }
    if (path === "/api/client" || path === "/api/client/") {
      const type = url.searchParams.get("type")
      const perPage = Math.min(100, Number(url.searchParams.get("per_page") ?? 50))
      const visible = servers.filter((server) =>
        type === "admin-all" ? user.admin : server.owner === user.id || server.subusers.some((subuser) => subuser.user === user.id)
      )
      const { pagination, slice } = paged(visible, Number(url.searchParams.get("page") ?? 1), perPage)
      return answer(response, 200, { object: "list", data: slice.map((server) => envelope("server", serverAttributes(server, user))), meta: { pagination } })
    }
    const match = /^\/api\/client\/servers\/([^/]+)(\/users)?$/.exec(path)
    if (match !== null) {
      const id = decodeURIComponent(match[1]!)
      const server = servers.find((entry) => entry.uuid === id || entry.identifier === id)
      if (server === undefined || !canOpen(server, user)) return error(response, 404, "NotFoundHttpException", "The requested resource could not be found on the server.")
      if (match[2] !== undefined) {
        const permissions = permissionsOf(server, user)
        if (!permissions.includes("*") && !permissions.includes("user.read")) return error(response, 403, "AccessDeniedHttpException", "This action is unauthorized.")
        return answer(response, 200, {
          object: "list",
          data: server.subusers.flatMap((subuser) => {
            const found = users.find((entry) => entry.id === subuser.user)
            return found === undefined ? [] : [envelope("server_subuser", {
              uuid: found.uuid, username: found.username, email: found.email, image: "", "2fa_enabled": false,
              created_at: "2026-01-01T00:00:00+00:00", permissions: subuser.permissions
            })]
          })
        })
      }
      return answer(response, 200, {
        ...envelope("server", serverAttributes(server, user)),
        meta: { is_server_owner: server.owner === user.id, user_permissions: permissionsOf(server, user) }
      })
    }
    return error(response, 404, "NotFoundHttpException", "not found")
  }

  const standIn: PanelStandIn = {
    url: "",
    kind,
    received,
    count: (path) => received.filter((entry) => entry.path.split("?")[0] === path).length,
    users,
    servers,
    mode: "ok",
    slowMs: 6_000,
    applicationKey,
    close: () => Promise.resolve()
  }

  const server: Server = createServer((request, response) => {
    received.push({ method: request.method ?? "GET", path: request.url ?? "/", headers: { ...request.headers } })
    if (standIn.mode === "down") return request.socket.destroy()
    if (standIn.mode === "error") return error(response, 500, "HttpException", "Server Error")
    if (standIn.mode === "limited") return error(response, 429, "TooManyRequestsHttpException", "Too Many Attempts.")
    if (standIn.mode === "slow") {
      const timer = setTimeout(() => handle(request, response), standIn.slowMs)
      response.once("close", () => clearTimeout(timer))
      return
    }
    handle(request, response)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  Object.assign(standIn, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  })
  return standIn
}

/**
 * The users and servers most tests use: admin (root admin), alice (owns aaaaaaaa), bob (subuser of
 * aaaaaaaa with control.* and Pelican's host_acme_probe.probe-view), erin (stopped by the 2FA policy),
 * dave (no servers).
 */
export const people: ReadonlyArray<StandInUser> = [
  { id: 1, uuid: "u-admin", username: "admin", email: "admin@panel.test", admin: true, sessions: ["sess-admin"], keys: ["ptlc_admin"] },
  { id: 2, uuid: "u-alice", username: "alice", email: "alice@panel.test", admin: false, sessions: ["sess-alice"], keys: ["ptlc_alice"] },
  { id: 3, uuid: "u-bob", username: "bob", email: "bob@panel.test", admin: false, sessions: ["sess-bob"], keys: ["ptlc_bob"] },
  { id: 4, uuid: "u-erin", username: "erin", email: "erin@panel.test", admin: false, twoFactorPending: true, sessions: ["sess-erin"], keys: [] },
  { id: 5, uuid: "u-dave", username: "dave", email: "dave@panel.test", admin: false, sessions: ["sess-dave", "sess-dave-2"], keys: ["ptlc_dave"] }
]
export const machines: ReadonlyArray<StandInServer> = [
  { uuid: "aaaaaaaa-1111-4000-8000-000000000001", identifier: "aaaaaaaa", name: "Alice's server", owner: 2, subusers: [{ user: 3, permissions: ["control.*", "host_acme_probe.probe-view"] }] },
  { uuid: "bbbbbbbb-2222-4000-8000-000000000002", identifier: "bbbbbbbb", name: "Admin's server", owner: 1, subusers: [] }
]
