import { FileSystem, Path } from "@effect/platform"
import { Context, Duration, Effect, Layer, Schema } from "effect"
import { type Document, parse as parseYaml, parseDocument } from "yaml"
import { HostConfig } from "../config/HostConfig.js"
import { ConfigInvalid } from "../domain/Errors.js"
import { problem, problemsFromParseError } from "../domain/Problems.js"
import { OperationLocks } from "../store/OperationLock.js"
import { embeddedAccess, type IdentityStats, type PanelAccess } from "./Access.js"
import type { PanelDirectory, PanelServer, PanelUser, PanelUserId, ServerAccess } from "./Directory.js"
import { writeFileAtomic } from "../system/AtomicFile.js"
import { sha256Hex } from "../system/Hash.js"

// The panel Host is installed into (docs/http.md "Authentication (embedded panel)"): its name and versions (for `requires.panel`/`php`),
// its users with their hashed API tokens, its servers with owners and subusers, and the permission
// rules between them. The default is the embedded reference panel, described by `config/panel.yaml`:
//
//   panel:   {name, version, php}
//   users:   [{id, username, email, admin, token_sha256, permissions?}]
//   servers: [{uuid, name, owner, subusers: [{user, permissions}]}]
//
// `owner` and `subusers[].user` name a user by id or username. `users[].permissions` (ours) grants
// permissions on every server the user can see; `*` in a permission list grants everything.

const UserRef = Schema.Union(Schema.Int, Schema.NonEmptyString)

const Sha256Hex = Schema.String.pipe(
  Schema.filter((hash) => /^[0-9a-f]{64}$/.test(hash) || "must be a lowercase sha256 hex digest (64 characters)")
)

export const PanelUserDocument = Schema.Struct({
  id: Schema.Int,
  username: Schema.NonEmptyString,
  email: Schema.optionalWith(Schema.String, { default: () => "" }),
  admin: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  token_sha256: Schema.optional(Schema.NullOr(Sha256Hex)),
  permissions: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] })
})

export const PanelServerDocument = Schema.Struct({
  uuid: Schema.NonEmptyString,
  name: Schema.NonEmptyString,
  owner: UserRef,
  subusers: Schema.optionalWith(
    Schema.Array(Schema.Struct({ user: UserRef, permissions: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }) })),
    { default: () => [] }
  )
})

export const PanelFile = Schema.Struct({
  panel: Schema.optional(Schema.Struct({
    name: Schema.optional(Schema.String),
    version: Schema.optional(Schema.String),
    php: Schema.optional(Schema.String)
  })),
  users: Schema.optionalWith(Schema.Array(PanelUserDocument), { default: () => [] }),
  servers: Schema.optionalWith(Schema.Array(PanelServerDocument), { default: () => [] })
})
export type PanelFile = typeof PanelFile.Type

export interface PanelInfo {
  /** Which panel this is: the bridge picks its slot map by it (docs/panels.md "Slot maps"). */
  readonly kind: PanelKind
  readonly name: string
  /** Unknown when the panel does not report it (then `requires.panel` is a warning, not a check). */
  readonly version: string | undefined
  readonly php: string | undefined
}

export type { PanelDirectory, PanelServer, PanelUser, PanelUserId, ServerAccess } from "./Directory.js"

export const hashToken = (token: string): string => sha256Hex(token)

const grants = (permissions: ReadonlyArray<string>, permission: string) =>
  permissions.includes("*") || permissions.includes(permission)

export const makeDirectory = (file: PanelFile): PanelDirectory => {
  const users: ReadonlyArray<PanelUser> = file.users.map((user) => ({
    id: user.id,
    username: user.username,
    email: user.email,
    admin: user.admin,
    permissions: user.permissions,
    credentialStamp: sha256Hex(user.token_sha256 ?? "").slice(0, 16)
  }))
  const byId = new Map<PanelUserId, PanelUser>(users.map((user) => [user.id, user]))
  const byName = new Map(users.map((user) => [user.username, user]))
  const byHash = new Map<string, PanelUser>()
  for (const user of file.users) {
    if (user.token_sha256 !== undefined && user.token_sha256 !== null) byHash.set(user.token_sha256, byId.get(user.id)!)
  }
  const resolveRef = (ref: number | string): PanelUserId | undefined =>
    typeof ref === "number" ? ref : (byName.get(ref)?.id ?? (/^\d+$/.test(ref) ? Number(ref) : undefined))
  const servers: ReadonlyArray<PanelServer> = file.servers.map((server) => ({
    uuid: server.uuid,
    name: server.name,
    ownerId: resolveRef(server.owner) ?? -1,
    subusers: server.subusers.flatMap((subuser) => {
      const userId = resolveRef(subuser.user)
      return userId === undefined ? [] : [{ userId, permissions: subuser.permissions }]
    })
  }))
  const serverByUuid = new Map(servers.map((server) => [server.uuid, server]))
  const accessTo = (user: PanelUser, server: PanelServer): ServerAccess | undefined => {
    if (user.admin) return { server, role: "admin", permissions: ["*"] }
    if (server.ownerId === user.id) return { server, role: "owner", permissions: ["*"] }
    const subuser = server.subusers.find((entry) => entry.userId === user.id)
    return subuser === undefined ? undefined : { server, role: "subuser", permissions: subuser.permissions }
  }
  const serverAccess = (user: PanelUser, uuid: string) => {
    const server = serverByUuid.get(uuid)
    return server === undefined ? undefined : accessTo(user, server)
  }
  const serversOf = (user: PanelUser) => servers.flatMap((server) => accessTo(user, server) ?? [])
  return {
    users,
    servers,
    userById: (id) => byId.get(id),
    userByToken: (token) => byHash.get(hashToken(token)),
    userByName: (username) => byName.get(username),
    serverAccess,
    serversOf,
    can: (user, permission, serverUuid) => {
      if (user.admin || grants(user.permissions, permission)) return true
      if (serverUuid !== undefined) {
        const access = serverAccess(user, serverUuid)
        return access !== undefined && grants(access.permissions, permission)
      }
      return serversOf(user).some((access) => grants(access.permissions, permission))
    }
  }
}

export interface PanelService {
  /** Its name, version and kind (`kind` picks the bridge's slot map and names the driver in status; code above panel/ never branches on it). */
  readonly info: PanelInfo
  /** Users and servers as read when the layer was built. */
  readonly directory: PanelDirectory
  /** Reads config/panel.yaml again (a running server picks up `host panel:token` this way). */
  readonly reload: Effect.Effect<{ readonly info: PanelInfo; readonly directory: PanelDirectory }, ConfigInvalid>
  /** How often a server reloads without a change of config/panel.yaml (a real panel's server list); none: only on change. */
  readonly reloadEvery: Duration.Duration | undefined
  /** How requests are checked against the panel, for one reading of its directory (docs/panels.md "Drivers"). */
  readonly access: (directory: PanelDirectory) => PanelAccess
  /** Identity-cache counters; none on the embedded panel, which asks nobody (so nothing is reported). */
  readonly stats: Effect.Effect<IdentityStats> | undefined
}

export type PanelKind = "embedded" | "pterodactyl" | "pelican"

export class Panel extends Context.Tag("host/Panel")<Panel, PanelService>() {}

const source = "config/panel.yaml"
const fallbackInfo: PanelInfo = { kind: "embedded", name: "Host reference panel", version: undefined, php: undefined }

/** Reads and decodes `<root>/config/panel.yaml` (absent: an empty panel). */
export const readPanelFile = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const { paths } = yield* HostConfig
  const file = path.join(paths.root, "config", "panel.yaml")
  if (!(yield* fs.exists(file).pipe(Effect.orElseSucceed(() => false)))) {
    return yield* Schema.decodeUnknown(PanelFile)({}).pipe(Effect.orDie)
  }
  const text = yield* fs.readFileString(file).pipe(
    Effect.mapError((error) => new ConfigInvalid({ source, problems: [problem("(file)", error.message)] }))
  )
  const raw = yield* Effect.try({
    try: () => parseYaml(text) as unknown,
    catch: (error) => new ConfigInvalid({ source, problems: [problem("(yaml)", error instanceof Error ? error.message : String(error))] })
  })
  return yield* Schema.decodeUnknown(PanelFile)(raw ?? {}, { errors: "all" }).pipe(
    Effect.mapError((error) => new ConfigInvalid({ source, problems: problemsFromParseError(error) }))
  )
})

/**
 * Edits config/panel.yaml (comments and layout kept): read, `edit`, then written atomically — all under
 * the `panel-file` lock, so the admin API and `host panel:token` in other processes never overwrite each
 * other's change. `edit` sees the file as it is once the lock is held.
 */
export const editPanelFile = <A, E, R>(
  edit: (document: Document, panel: PanelFile) => Effect.Effect<A, E, R>
) =>
  Effect.scoped(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const { paths } = yield* HostConfig
    const locks = yield* OperationLocks
    yield* locks.acquireNamed("panel-file", { operation: `edit ${source}`, holder: "panel", timeout: Duration.seconds(10) })
    const file = path.join(paths.root, "config", "panel.yaml")
    const fail = (message: string) => new ConfigInvalid({ source, problems: [problem("(file)", message)] })
    const panel = yield* readPanelFile
    const text = (yield* fs.exists(file).pipe(Effect.orElseSucceed(() => false)))
      ? yield* fs.readFileString(file).pipe(Effect.mapError((error) => fail(error.message)))
      : ""
    const document = parseDocument(text)
    const result = yield* edit(document, panel)
    yield* writeFileAtomic(file, document.toString()).pipe(Effect.mapError((error) => fail(error.message)))
    return result
  }))

const infoOf = (file: PanelFile): PanelInfo => ({
  kind: "embedded",
  name: file.panel?.name ?? fallbackInfo.name,
  version: file.panel?.version,
  php: file.panel?.php
})

export const readPanelInfo = Effect.map(readPanelFile, infoOf)

/** The embedded reference panel. */
export const embeddedService = Effect.gen(function*() {
    const context = yield* Effect.context<FileSystem.FileSystem | Path.Path | HostConfig>()
    const reload = readPanelFile.pipe(
      Effect.map((file) => ({ info: infoOf(file), directory: makeDirectory(file) })),
      Effect.provide(context)
    )
    const current = yield* reload
    return {
      ...current,
      reload,
      reloadEvery: undefined,
      access: embeddedAccess,
      stats: undefined
    } satisfies PanelService
  })

export const layerEmbedded = Layer.effect(Panel, embeddedService)
