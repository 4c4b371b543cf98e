import { FileSystem, Path } from "@effect/platform"
import { Data, Effect, Schema } from "effect"
import { isMap, isSeq, parseDocument } from "yaml"
import { HostConfig } from "../config/HostConfig.js"
import { ConfigInvalid } from "../domain/Errors.js"
import { problem } from "../domain/Problems.js"
import { readPanelFile } from "./Panel.js"

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

const editPanelFile = (edit: (document: ReturnType<typeof parseDocument>) => Effect.Effect<void, PanelServerConflict>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const { paths } = yield* HostConfig
    const file = path.join(paths.root, "config", "panel.yaml")
    const fail = (message: string) => new ConfigInvalid({ source: "config/panel.yaml", problems: [problem("(file)", message)] })
    const text = (yield* fs.exists(file)) ? yield* fs.readFileString(file).pipe(Effect.mapError((error) => fail(error.message))) : ""
    const document = parseDocument(text)
    yield* edit(document)
    const temporary = `${file}.${process.pid}.tmp`
    yield* fs.makeDirectory(path.dirname(file), { recursive: true }).pipe(Effect.mapError((error) => fail(error.message)))
    yield* fs.writeFileString(temporary, document.toString()).pipe(Effect.mapError((error) => fail(error.message)))
    yield* fs.rename(temporary, file).pipe(Effect.mapError((error) => fail(error.message)))
  })

export const addServer = Effect.fn("Servers.add")(function*(server: NewServer) {
  const panel = yield* readPanelFile
  if (panel.servers.some((existing) => existing.uuid === server.uuid)) {
    return yield* new PanelServerConflict({ detail: `a server ${server.uuid} already exists` })
  }
  if (!panel.users.some((user) => user.username === server.owner)) {
    return yield* new PanelServerConflict({ detail: `no panel user "${server.owner}" to own the server` })
  }
  yield* editPanelFile((document) =>
    Effect.sync(() => {
      if (!isSeq(document.get("servers"))) document.set("servers", document.createNode([]))
      document.addIn(["servers"], document.createNode({ uuid: server.uuid, name: server.name, owner: server.owner }))
    })
  )
  return server
})

export const removeServer = Effect.fn("Servers.remove")(function*(uuid: string) {
  yield* editPanelFile((document) =>
    Effect.gen(function*() {
      const servers = document.get("servers")
      const index = isSeq(servers) ? servers.items.findIndex((item) => isMap(item) && String(item.get("uuid")) === uuid) : -1
      if (index < 0) return yield* new PanelServerConflict({ detail: `no server ${uuid}` })
      document.deleteIn(["servers", index])
    })
  )
})
