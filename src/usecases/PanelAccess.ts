import { Effect } from "effect"
import { ConfigInvalid } from "../domain/Errors.js"
import { problem } from "../domain/Problems.js"
import { grantsOn, setGrant } from "../panel/Grants.js"
import { Panel } from "../panel/Panel.js"
import { issueToken } from "../panel/Tokens.js"

// Who may do what on the panel, as the CLI sets it (docs/panels.md "Extension permissions"): the
// extension-permission grants Host keeps for a real panel's subusers, and API tokens of the embedded
// panel's users.

const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * The server's uuid: found in the panel's server list (by uuid, or by short id when the panel's
 * application API lets Host list them), else the argument when it has a uuid's shape.
 */
const resolveServer = (id: string) =>
  Effect.gen(function*() {
    const panel = yield* Panel
    const { directory } = yield* panel.reload.pipe(Effect.orElseSucceed(() => ({ directory: panel.directory })))
    const found = directory.servers.find((server) => server.uuid === id || server.identifier === id)
    if (found !== undefined) return found.uuid
    if (uuidShape.test(id)) return id.toLowerCase()
    return yield* new ConfigInvalid({
      source: "arguments",
      problems: [problem("<server>", `"${id}" is not a server the panel lists; give the server's full uuid`)]
    })
  })

/** `permissions:grant|revoke`: whether the grant changed, on the server's uuid. */
export const setPermissionGrant = (request: { readonly server: string; readonly user: string; readonly permission: string; readonly granted: boolean }) =>
  Effect.gen(function*() {
    const uuid = yield* resolveServer(request.server)
    const changed = yield* setGrant(uuid, request.user, request.permission, request.granted)
    return { uuid, changed }
  })

/** `permissions:list`: each user's granted permissions on the server, by username. */
export const permissionGrants = (server: string) =>
  Effect.gen(function*() {
    const uuid = yield* resolveServer(server)
    const grants = yield* grantsOn(uuid)
    const entries = Object.entries(grants).sort(([a], [b]) => a.localeCompare(b)).map(([user, permissions]) => ({ user, permissions }))
    return { server: uuid, grants: entries }
  })

/** `panel:token`: a new API token for a user of the embedded panel (only its sha256 is kept). */
export const issueApiToken = (username: string) => issueToken(username)
