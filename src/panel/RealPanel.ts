import { FileSystem, Path } from "@effect/platform"
import { Cache, Duration, Effect, Either, Equal, Exit, Hash, Layer, Option, Schema } from "effect"
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { parseEnv } from "node:util"
import { HostConfig } from "../config/HostConfig.js"
import { ConfigInvalid } from "../domain/Errors.js"
import { problem } from "../domain/Problems.js"
import { CoreRows } from "../store/CoreRows.js"
import { grantsOn } from "./Grants.js"
import {
  anonymous,
  bearerOf,
  cookieValue,
  invalidToken,
  type PanelAccess,
  type PanelCredential,
  PanelUnavailable,
  type RequestAuth,
  type RequestCredentials
} from "./Access.js"
import { embeddedService, makeDirectory, Panel, type PanelInfo, type PanelKind, type PanelServer, type PanelService, type PanelUser, type ServerAccess } from "./Panel.js"
import { pelicanPermissionName } from "./PelicanNames.js"

// Real panels (docs/panels.md "Drivers"): Pterodactyl and Pelican, asked over their own client API with the
// caller's credentials — the panel stays the authority on who a user is and what they may do. Host never
// reads the panel's secrets; from its folder (`panel.root`) it reads only the version and `.env`'s name and
// session cookie name.

/** What differs between the two panels Host knows (PANELS facts summarised in docs/panels.md). */
interface Flavor {
  readonly kind: Exclude<PanelKind, "embedded">
  /** The session cookie when `.env` sets neither SESSION_COOKIE nor (Pterodactyl) APP_NAME. */
  readonly defaultCookie: string
  /** Pterodactyl exempts /api/client/account from its 2FA policy: another endpoint must be asked too. */
  readonly twoFactorProbe: boolean
  /** Whether the cookie name follows APP_NAME (Pterodactyl) or is fixed (Pelican). */
  readonly cookieFromAppName: boolean
  readonly decodeUser: (body: unknown) => Option.Option<PanelUser>
  /** Whether a subuser holds an extension permission through the panel's own permission list. */
  readonly panelGrants: boolean
}

const PteroAccount = Schema.Struct({
  attributes: Schema.Struct({
    id: Schema.Int,
    admin: Schema.Boolean,
    username: Schema.String,
    email: Schema.optionalWith(Schema.String, { default: () => "" })
  })
})

const PelicanAccount = Schema.Struct({
  attributes: Schema.Struct({
    uuid: Schema.String,
    username: Schema.String,
    email: Schema.optionalWith(Schema.String, { default: () => "" }),
    root_admin: Schema.optionalWith(Schema.Boolean, { default: () => false })
  })
})

const userOf = (id: number | string, username: string, email: string, admin: boolean): PanelUser => ({
  id,
  username,
  email,
  admin,
  permissions: [],
  credentialStamp: ""
})

export const flavors: Readonly<Record<Exclude<PanelKind, "embedded">, Flavor>> = {
  pterodactyl: {
    kind: "pterodactyl",
    defaultCookie: "pterodactyl_session",
    twoFactorProbe: true,
    cookieFromAppName: true,
    decodeUser: (body) =>
      Option.map(Schema.decodeUnknownOption(PteroAccount)(body), ({ attributes: a }) => userOf(a.id, a.username, a.email, a.admin)),
    panelGrants: false
  },
  pelican: {
    kind: "pelican",
    defaultCookie: "pelican_session",
    twoFactorProbe: false,
    cookieFromAppName: false,
    decodeUser: (body) =>
      Option.map(Schema.decodeUnknownOption(PelicanAccount)(body), ({ attributes: a }) => userOf(a.uuid, a.username, a.email, a.root_admin)),
    panelGrants: true
  }
}

const ServerItem = Schema.Struct({
  attributes: Schema.Struct({
    uuid: Schema.String,
    identifier: Schema.optional(Schema.String),
    name: Schema.String,
    server_owner: Schema.optional(Schema.Boolean)
  }),
  meta: Schema.optional(Schema.Struct({
    is_server_owner: Schema.optional(Schema.Boolean),
    user_permissions: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] })
  }))
})

const ServerList = Schema.Struct({
  data: Schema.Array(ServerItem),
  meta: Schema.optional(Schema.Struct({
    pagination: Schema.optional(Schema.Struct({ current_page: Schema.Number, total_pages: Schema.Number }))
  }))
})

const ApplicationServerList = Schema.Struct({
  data: Schema.Array(Schema.Struct({
    attributes: Schema.Struct({ uuid: Schema.String, identifier: Schema.optional(Schema.String), name: Schema.String, user: Schema.optional(Schema.Int) })
  })),
  meta: Schema.optional(Schema.Struct({
    pagination: Schema.optional(Schema.Struct({ current_page: Schema.Number, total_pages: Schema.Number }))
  }))
})

export const SubuserList = Schema.Struct({
  data: Schema.Array(Schema.Struct({
    attributes: Schema.Struct({
      uuid: Schema.optional(Schema.String),
      username: Schema.String,
      email: Schema.optionalWith(Schema.String, { default: () => "" }),
      permissions: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] })
    })
  }))
})
export type SubuserList = typeof SubuserList.Type

/** The panel's own permission matching: `*` everything, `x.*` anything under `x`, else exact. */
export const panelPermits = (held: ReadonlyArray<string>, permission: string): boolean =>
  held.some((entry) => entry === "*" || entry === permission || (entry.endsWith(".*") && permission.startsWith(entry.slice(0, -1))))


// ---- the panel's folder ------------------------------------------------------------------------------

export interface PanelRootFacts {
  readonly name: string | undefined
  readonly version: string | undefined
  readonly cookie: string
}

/** `Str::slug($value, '_')` for the cookie name: lowercase ASCII words joined by `_`. */
const slug = (value: string) =>
  value.normalize("NFKD").replace(/[^\x00-\x7f]/g, "").toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "")

/** Reads the version (`config/app.php`), name and session cookie (`.env`) from the panel's folder. */
export const readPanelRoot = (root: string, flavor: Flavor) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const fail = (message: string) =>
      new ConfigInvalid({ source: "config/host.yaml", problems: [problem("panel.root", message)] })
    const appPhp = path.join(root, "config", "app.php")
    const app = yield* fs.readFileString(appPhp).pipe(
      Effect.mapError(() => fail(`${root} is not a readable panel folder (${appPhp} cannot be read)`))
    )
    const envFile = path.join(root, ".env")
    const envText = yield* fs.readFileString(envFile).pipe(Effect.orElseSucceed(() => ""))
    const env = yield* Effect.try({ try: () => parseEnv(envText), catch: () => fail(`${envFile} cannot be parsed`) })
    const version = /['"]version['"]\s*=>\s*['"]([^'"]+)['"]/.exec(app)?.[1]
    const name = env.APP_NAME
    const cookie = env.SESSION_COOKIE !== undefined && env.SESSION_COOKIE !== ""
      ? env.SESSION_COOKIE
      : flavor.cookieFromAppName && name !== undefined && slug(name) !== ""
      ? `${slug(name)}_session`
      : flavor.defaultCookie
    return { name, version, cookie } satisfies PanelRootFacts
  })

/** `php -r 'echo PHP_VERSION;'` when `php` is on the PATH. */
const phpVersion = Effect.async<string | undefined>((resume) => {
  execFile("php", ["-r", "echo PHP_VERSION;"], { timeout: 5000 }, (error, stdout) => {
    resume(Effect.succeed(error === null && /^\d+\.\d+/.test(stdout.trim()) ? stdout.trim() : undefined))
  })
})

// ---- asking the panel ----------------------------------------------------------------------------

/** A cache key: the credential's sha256 (and what is asked about), compared by value; the headers ride along. */
class Key implements Equal.Equal {
  constructor(readonly credential: PanelCredential, readonly subject: string) {}
  [Equal.symbol](that: Equal.Equal): boolean {
    return that instanceof Key && that.credential.key === this.credential.key && that.subject === this.subject
  }
  [Hash.symbol](): number {
    return Hash.string(`${this.credential.key}\u0000${this.subject}`)
  }
}

interface Answer {
  readonly status: number
  readonly body: unknown
}

const requestTimeout = Duration.seconds(5)
const failureWindow = Duration.seconds(5)

export interface RealPanelOptions {
  readonly kind: Exclude<PanelKind, "embedded">
  readonly url: string
  readonly root: string
  readonly cacheSeconds: number
  readonly applicationKey: string
  readonly php: string
  /** The panel's public origin for the CSRF Origin check (docs/http.md "CSRF"); undefined: the request's Host. */
  readonly origin: string | undefined
}

export const makeRealPanel = (options: RealPanelOptions) =>
  Effect.gen(function*() {
    const flavor = flavors[options.kind]
    const facts = yield* readPanelRoot(options.root, flavor)
    const php = (yield* phpVersion) ?? (options.php === "" ? undefined : options.php)
    const info: PanelInfo = { kind: flavor.kind, name: facts.name ?? (flavor.kind === "pelican" ? "Pelican" : "Pterodactyl"), version: facts.version, php }
    const rows = yield* Effect.serviceOption(CoreRows)
    const base = options.url.replace(/\/+$/, "")
    const window = Duration.seconds(options.cacheSeconds)
    // Counted in this closure (one panel service per process): read by `stats`.
    const counters = { hits: 0, misses: 0, panelRequests: 0 }

    const unavailable = (reason: string) => new PanelUnavailable({ url: base, reason })

    const ask = (path: string, headers: Readonly<Record<string, string>>): Effect.Effect<Answer, PanelUnavailable> =>
      Effect.tryPromise({
        try: async (signal) => {
          counters.panelRequests++
          const response = await fetch(`${base}${path}`, {
            headers: { ...headers, accept: "application/json", "x-requested-with": "XMLHttpRequest" },
            redirect: "manual",
            signal
          })
          // Set-Cookie of the answer is dropped: the browser's session is the panel's to rotate, not Host's.
          const text = await response.text()
          let body: unknown = undefined
          try {
            body = text === "" ? undefined : JSON.parse(text)
          } catch {
            body = undefined
          }
          return { status: response.status, body }
        },
        catch: (error) => unavailable(error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error))
      }).pipe(
        Effect.timeoutFail({ duration: requestTimeout, onTimeout: () => unavailable("no answer within 5 s") }),
        // 5xx, and 429 (the panel's client API rate limit): the panel cannot say who the caller is right now,
        // which is not "signed out" (docs/panels.md "Identity").
        Effect.filterOrFail((answer) => answer.status < 500 && answer.status !== 429, (answer) => unavailable(`it answered ${answer.status}`))
      )

    const twoFactorPending = (answer: Answer) =>
      answer.status === 400 && JSON.stringify(answer.body ?? "").includes("TwoFactorAuthRequired")

    const identity = yield* Cache.makeWith({
      capacity: 100_000,
      lookup: (key: Key): Effect.Effect<Option.Option<PanelUser>, PanelUnavailable> =>
        Effect.gen(function*() {
          const account = yield* ask("/api/client/account", key.credential.headers)
          if (account.status !== 200) return Option.none()
          const user = flavor.decodeUser(account.body)
          if (Option.isNone(user) || !flavor.twoFactorProbe) return user
          const probe = yield* ask("/api/client/permissions", key.credential.headers)
          return twoFactorPending(probe) || probe.status === 401 || probe.status === 403 ? Option.none() : user
        }),
      timeToLive: (exit) => Exit.isSuccess(exit) ? (Option.isSome(exit.value) ? window : failureWindow) : Duration.zero
    })

    const servers = yield* Cache.makeWith({
      capacity: 100_000,
      lookup: (key: Key): Effect.Effect<Option.Option<{ server: PanelServer; owner: boolean; permissions: ReadonlyArray<string> }>, PanelUnavailable> =>
        Effect.gen(function*() {
          const answer = yield* ask(`/api/client/servers/${encodeURIComponent(key.subject)}`, key.credential.headers)
          if (answer.status !== 200) return Option.none()
          return Option.map(Schema.decodeUnknownOption(ServerItem)(answer.body), (item) => {
            const owner = item.meta?.is_server_owner ?? item.attributes.server_owner ?? false
            return {
              server: serverOf(item.attributes),
              owner,
              permissions: owner ? ["*"] : (item.meta?.user_permissions ?? [])
            }
          })
        }),
      timeToLive: (exit) => Exit.isSuccess(exit) && Option.isSome(exit.value) ? window : (Exit.isSuccess(exit) ? failureWindow : Duration.zero)
    })

    const serverOf = (attributes: { readonly uuid: string; readonly identifier?: string | undefined; readonly name: string }): PanelServer => ({
      uuid: attributes.uuid,
      name: attributes.name,
      identifier: attributes.identifier ?? attributes.uuid.slice(0, 8),
      ownerId: -1,
      subusers: []
    })

    const lists = yield* Cache.makeWith({
      capacity: 10_000,
      lookup: (key: Key): Effect.Effect<ReadonlyArray<{ server: PanelServer; owner: boolean }>, PanelUnavailable> =>
        Effect.gen(function*() {
          const found: Array<{ server: PanelServer; owner: boolean }> = []
          for (let page = 1; page <= 1000; page++) {
            const type = key.subject === "admin" ? "&type=admin-all" : ""
            const answer = yield* ask(`/api/client?per_page=100&page=${page}${type}`, key.credential.headers)
            if (answer.status !== 200) break
            const list = Schema.decodeUnknownOption(ServerList)(answer.body)
            if (Option.isNone(list)) break
            for (const item of list.value.data) found.push({ server: serverOf(item.attributes), owner: item.attributes.server_owner ?? false })
            const pagination = list.value.meta?.pagination
            if (pagination === undefined || pagination.current_page >= pagination.total_pages) break
          }
          return found
        }),
      timeToLive: (exit) => Exit.isSuccess(exit) ? window : Duration.zero
    })

    /** The credential of a request: Bearer, else the panel's session cookie with any remember-me cookie. */
    const credentialOf = (credentials: RequestCredentials): PanelCredential | undefined => {
      const bearer = bearerOf(credentials.authorization)
      if (bearer !== undefined) {
        return { key: createHash("sha256").update(`bearer ${bearer}`).digest("hex"), headers: { authorization: `Bearer ${bearer}` } }
      }
      const session = cookieValue(credentials.cookie, facts.cookie)
      if (session === undefined) return undefined
      const forwarded = [`${facts.cookie}=${session}`]
      for (const part of (credentials.cookie ?? "").split(";")) {
        const name = part.slice(0, part.indexOf("=")).trim()
        if (name.startsWith("remember_web_")) forwarded.push(part.trim())
      }
      const cookie = forwarded.join("; ")
      return { key: createHash("sha256").update(`cookie ${cookie}`).digest("hex"), headers: { cookie } }
    }

    // A failure is not kept (timeToLive zero, and dropped at once: a zero window could still match a call
    // in the same millisecond); the callers waiting on that one request share it.
    const counted = <A>(either: Either.Either<A, A>): A => {
      if (Either.isLeft(either)) {
        counters.hits++
        return either.left
      }
      counters.misses++
      return either.right
    }

    const authenticate = (credentials: RequestCredentials): Effect.Effect<RequestAuth, PanelUnavailable> => {
      const credential = credentialOf(credentials)
      if (credential === undefined) return Effect.succeed(anonymous)
      const key = new Key(credential, "account")
      return Effect.map(identity.getEither(key).pipe(Effect.tapError(() => identity.invalidate(key))), (either) => {
        const user = counted(either)
        if (Option.isNone(user)) return "authorization" in credential.headers ? invalidToken : anonymous
        return {
          user: user.value,
          via: "authorization" in credential.headers ? "token" as const : "session" as const,
          session: undefined,
          invalidToken: false,
          credential
        }
      })
    }

    const serverAccess = (auth: RequestAuth, id: string): Effect.Effect<ServerAccess | undefined, PanelUnavailable> => {
      const user = auth.user
      if (user === undefined || auth.credential === undefined || id === "") return Effect.sync((): ServerAccess | undefined => undefined)
      const key = new Key(auth.credential, id)
      return Effect.map(servers.getEither(key).pipe(Effect.tapError(() => servers.invalidate(key))), (either) => {
        const found = counted(either)
        if (Option.isNone(found)) return undefined
        const { owner, permissions, server } = found.value
        return {
          server: { ...server, ownerId: owner ? user.id : server.ownerId },
          role: user.admin ? "admin" as const : owner ? "owner" as const : "subuser" as const,
          permissions: user.admin ? ["*", ...permissions.filter((entry) => entry !== "*")] : permissions
        }
      })
    }

    const serversOf = (auth: RequestAuth): Effect.Effect<ReadonlyArray<ServerAccess>, PanelUnavailable> => {
      const user = auth.user
      if (user === undefined || auth.credential === undefined) return Effect.succeed([])
      const key = new Key(auth.credential, user.admin ? "admin" : "user")
      return Effect.map(lists.getEither(key).pipe(Effect.tapError(() => lists.invalidate(key))), (either) =>
        counted(either).map(({ owner, server }): ServerAccess => ({
          server: { ...server, ownerId: owner ? user.id : server.ownerId },
          role: user.admin ? "admin" : owner ? "owner" : "subuser",
          // The list does not carry a subuser's permissions: the server's own answer does (serverAccess).
          permissions: user.admin || owner ? ["*"] : []
        })))
    }

    /** Host-held grants (Pterodactyl): does `username` hold `permission` on `serverUuid`? */
    const granted = (username: string, permission: string, serverUuid: string) =>
      Option.match(rows, {
        onNone: () => Effect.succeed(false),
        onSome: (store) =>
          grantsOn(serverUuid).pipe(
            Effect.map((users) => (users[username] ?? []).includes(permission)),
            Effect.provideService(CoreRows, store),
            Effect.orElseSucceed(() => false)
          )
      })

    const can = (auth: RequestAuth, permission: string, serverUuid?: string, extensionId?: string): Effect.Effect<boolean, PanelUnavailable> =>
      Effect.gen(function*() {
        const user = auth.user
        if (user === undefined) return false
        if (user.admin) return true
        const accesses = serverUuid === undefined
          ? yield* serversOf(auth)
          : Option.toArray(Option.fromNullable(yield* serverAccess(auth, serverUuid)))
        if (accesses.some((access) => access.role === "owner")) return true
        if (flavor.panelGrants) {
          if (extensionId === undefined) return false
          const name = pelicanPermissionName(extensionId, permission)
          if (serverUuid !== undefined) return accesses.some((access) => panelPermits(access.permissions, name))
          for (const access of accesses) {
            const full = yield* serverAccess(auth, access.server.uuid)
            if (full !== undefined && panelPermits(full.permissions, name)) return true
          }
          return false
        }
        // A grant counts only while the panel still gives this user access to the server as a subuser.
        if (serverUuid !== undefined) return accesses.length > 0 && (yield* granted(user.username, permission, accesses[0]!.server.uuid))
        for (const access of accesses) if (yield* granted(user.username, permission, access.server.uuid)) return true
        return false
      })

    /** The panel's subuser list of a server, asked with the caller's credential (owners and admins may read it). */
    const subusers = (auth: RequestAuth, serverId: string) =>
      Effect.gen(function*() {
        if (auth.user === undefined || auth.credential === undefined) return undefined
        const server = yield* serverAccess(auth, serverId)
        if (server === undefined) return undefined
        const answer = yield* ask(`/api/client/servers/${encodeURIComponent(server.server.uuid)}/users`, auth.credential.headers)
        if (answer.status !== 200) return undefined
        return Option.getOrUndefined(Option.map(Schema.decodeUnknownOption(SubuserList)(answer.body), (list) =>
          list.data.map(({ attributes: a }) => ({ username: a.username, email: a.email, uuid: a.uuid, permissions: a.permissions }))))
      })

    const access: PanelAccess = {
      hostGrants: !flavor.panelGrants,
      subusers,
      csrf: "panel",
      origin: options.origin,
      peek: () => undefined,
      authenticate,
      serverAccess,
      serversOf,
      can
    }

    /** The servers of the panel by its application API (for ServerCreated/ServerDeleted), or none without a key. */
    const applicationServers = Effect.gen(function*() {
      const found: Array<PanelServer> = []
      for (let page = 1; page <= 1000; page++) {
        const answer = yield* ask(`/api/application/servers?per_page=100&page=${page}`, { authorization: `Bearer ${options.applicationKey}` })
        if (answer.status !== 200) return yield* unavailable(`the application API answered ${answer.status}`)
        const list = Schema.decodeUnknownOption(ApplicationServerList)(answer.body)
        if (Option.isNone(list)) return yield* unavailable("the application API's server list did not decode")
        for (const item of list.value.data) {
          found.push({ uuid: item.attributes.uuid, name: item.attributes.name, identifier: item.attributes.identifier, ownerId: item.attributes.user ?? -1, subusers: [] })
        }
        const pagination = list.value.meta?.pagination
        if (pagination === undefined || pagination.current_page >= pagination.total_pages) break
      }
      return found
    })

    const emptyDirectory = makeDirectory({ users: [], servers: [] })
    const directoryOf = (list: ReadonlyArray<PanelServer>) => ({ ...emptyDirectory, servers: list })
    let directory = emptyDirectory
    const reload = options.applicationKey === ""
      ? Effect.sync(() => ({ info, directory }))
      : applicationServers.pipe(
        Effect.map((list) => {
          directory = directoryOf(list)
          return { info, directory }
        }),
        Effect.mapError((error) => new ConfigInvalid({ source: "panel.application_key", problems: [problem("panel.application_key", error.message)] }))
      )

    const service: PanelService = {
      info,
      directory,
      reload,
      reloadEvery: options.applicationKey === "" ? undefined : Duration.seconds(Math.max(1, options.cacheSeconds)),
      access: () => access,
      stats: Effect.sync(() => ({ ...counters }))
    }
    return service
  })

/** The Panel of `panel.driver` in config (docs/panels.md "Drivers"). */
export const layerFromConfig = Layer.effect(
  Panel,
  Effect.gen(function*() {
    const { baseUrlConfigured, config } = yield* HostConfig
    const panel = config.panel
    if (panel.driver === "embedded") return yield* embeddedService
    const origin = baseUrlConfigured ? new URL(config.base_url).origin : undefined
    return yield* makeRealPanel({
      kind: panel.driver,
      url: panel.url,
      root: panel.root,
      cacheSeconds: panel.cache_seconds,
      applicationKey: panel.application_key,
      php: panel.php,
      origin
    })
  })
)
