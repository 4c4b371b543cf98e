import { Data, Effect, Schema } from "effect"
import { isMap, isSeq } from "yaml"
import { editPanelFile } from "./Panel.js"

// Servers of the embedded panel, added or removed through the admin API: written to config/panel.yaml
// (comments and layout kept, atomically). The running server then announces ServerCreated / ServerDeleted.

export class PanelServerConflict extends Data.TaggedError("PanelServerConflict")<{
  readonly detail: string
}> {
  override get message() {
    return this.detail
  }
}

export const NewServer = Schema.Struct({
  uuid: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/)),
  name: Schema.NonEmptyString,
  owner: Schema.NonEmptyString
})
export type NewServer = typeof NewServer.Type

export const addServer = (server: NewServer) =>
  editPanelFile((document, panel) =>
    Effect.gen(function*() {
      if (panel.servers.some((existing) => existing.uuid === server.uuid)) {
        return yield* new PanelServerConflict({ detail: `a server ${server.uuid} already exists` })
      }
      if (!panel.users.some((user) => user.username === server.owner)) {
        return yield* new PanelServerConflict({ detail: `no panel user "${server.owner}" to own the server` })
      }
      if (!isSeq(document.get("servers"))) document.set("servers", document.createNode([]))
      document.addIn(["servers"], document.createNode({ uuid: server.uuid, name: server.name, owner: server.owner }))
      return server
    })
  ).pipe(Effect.withSpan("Servers.add"))

export const removeServer = (uuid: string) =>
  editPanelFile((document) =>
    Effect.gen(function*() {
      const servers = document.get("servers")
      const index = isSeq(servers) ? servers.items.findIndex((item) => isMap(item) && String(item.get("uuid")) === uuid) : -1
      if (index < 0) return yield* new PanelServerConflict({ detail: `no server ${uuid}` })
      document.deleteIn(["servers", index])
    })
  ).pipe(Effect.withSpan("Servers.remove"))
