import { Effect } from "effect"
import * as Servers from "../../usecases/Servers.js"
import { HttpFailure, notFound } from "../Errors.js"
import { respond } from "../api/Respond.js"
import { ServerBody, ServerRemovedBody } from "../contracts/Admin.js"
import { AdminActor } from "../contracts/Security.js"
import { jsonBody } from "./Decode.js"

// Servers of the embedded panel (docs/http.md "Admin JSON API (`/admin/host/api`, an admin's token or session)"): added and removed by an admin.

/** `POST /admin/host/api/servers` `{uuid, name, owner}`: adds a server (ServerCreated follows). */
export const createServer = Effect.gen(function*() {
  yield* AdminActor
  const body = yield* jsonBody(["admin", "createServer"], "{uuid, name, owner}")
  const server = yield* Servers.createServer(body).pipe(
    Effect.catchTag("PanelServerConflict", (error) => new HttpFailure({ status: 409, code: "Conflict", detail: error.message }))
  )
  return yield* respond(ServerBody, { data: server }, { status: 201 })
})

/** `DELETE /admin/host/api/servers/{uuid}`: removes a server (ServerDeleted follows). */
export const deleteServer = ({ uuid }: { readonly uuid: string }) =>
  Effect.gen(function*() {
    yield* AdminActor
    const removed = yield* Servers.deleteServer(uuid).pipe(
      Effect.catchTag("PanelServerConflict", (error) => notFound(error.message))
    )
    return yield* respond(ServerRemovedBody, { data: removed })
  })
