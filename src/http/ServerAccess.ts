import { Effect, Schema } from "effect"
import { parseJsonWithinDepth } from "../domain/JsonDepth.js"
import { grantsOn, setGrant } from "../panel/Grants.js"
import { declaredPayload } from "./api/Payload.js"
import { respond } from "./api/Respond.js"
import { AccessListingBody, GrantResult } from "./contracts/Client.js"
import { ServerOwner } from "./contracts/Security.js"
import { badRequest, HttpFailure, jsonBodyRefused, notFound, panelUnavailable } from "./Errors.js"

// Extension access on one server (docs/http.md "Extension access"): the subusers the panel reports with the
// extension permissions Host grants them, for the server's owner or an administrator.
//   GET    /api/client/host/servers/{server}/access
//   PUT    /api/client/host/servers/{server}/access   {user, permission}   give a grant
//   DELETE /api/client/host/servers/{server}/access   {user, permission}   take it back
// Where the panel carries extension permissions itself (embedded panel.yaml, Pelican's subuser
// permissions) the list shows them and writing answers 409.


/**
 * The caller and the server (its owner or an administrator: http/contracts/Security.ts OwnsServer answered
 * 404 to who cannot see it and 403 to a subuser, and checked CSRF), with its subusers and the permissions
 * the enabled extensions declare.
 */
const ownerOrAdmin = Effect.gen(function*() {
  const { auth, live, request, server: access, serverId: id } = yield* ServerOwner
  const subusers = yield* live.access.subusers(auth, id).pipe(Effect.mapError(panelUnavailable))
  if (subusers === undefined) return yield* notFound(`server ${id} not found`)
  const permissions = [...live.generation.extensions.values()].flatMap((extension) =>
    extension.manifest.permissions.map((permission) => ({ extension: extension.id, permission })))
  return { auth, live, request, access, subusers, permissions }
})

const listing = Effect.gen(function*() {
  const { access, live, permissions, subusers } = yield* ownerOrAdmin
  const grants = live.access.hostGrants ? yield* grantsOn(access.server.uuid) : {}
  const names = new Set(permissions.map((entry) => entry.permission))
  return {
    server: { uuid: access.server.uuid, identifier: access.server.identifier ?? null, name: access.server.name },
    grants_kept_by: live.access.hostGrants ? "host" as const : "panel" as const,
    permissions,
    subusers: subusers.map((subuser) => ({
      username: subuser.username,
      email: subuser.email,
      uuid: subuser.uuid ?? null,
      panel_permissions: subuser.permissions,
      // Host-held grants (only of permissions an enabled extension declares), else the panel's own.
      grants: live.access.hostGrants
        ? (grants[subuser.username] ?? []).filter((permission) => names.has(permission))
        : subuser.permissions.filter((permission) => names.has(permission))
    }))
  }
})

export const list = Effect.flatMap(listing, (data) => respond(AccessListingBody, { data }))

// Each body decoded by the schema its endpoint declares (api/Payload.ts), bounded in depth first.
const decodeGrant = Schema.decodeUnknown(parseJsonWithinDepth(declaredPayload("client", "accessGrant")))
const decodeRevoke = Schema.decodeUnknown(parseJsonWithinDepth(declaredPayload("client", "accessRevoke")))

const write = (granted: boolean) =>
  Effect.gen(function*() {
    const { access, live, permissions, request, subusers } = yield* ownerOrAdmin
    if (!live.access.hostGrants) {
      return yield* new HttpFailure({
        status: 409,
        code: "GrantsKeptByPanel",
        detail: "this panel carries extension permissions in its own subuser permissions: change them in the panel"
      })
    }
    const body = yield* Effect.flatMap(request.text, (granted ? decodeGrant : decodeRevoke)).pipe(
      Effect.mapError((error) => jsonBodyRefused(`{"user": "<panel username>", "permission": "<area>.<action>"}`, error))
    )
    if (!subusers.some((subuser) => subuser.username === body.user)) {
      return yield* notFound(`${body.user} is not a subuser of ${access.server.name} in the panel`)
    }
    if (granted && !permissions.some((entry) => entry.permission === body.permission)) {
      return yield* badRequest(`permission: no enabled extension declares "${body.permission}" (backend.permissions)`)
    }
    const changed = yield* setGrant(access.server.uuid, body.user, body.permission, granted)
    return yield* respond(GrantResult, { data: { server: access.server.uuid, user: body.user, permission: body.permission, granted, changed } })
  })

export const grant = write(true)
export const revoke = write(false)
