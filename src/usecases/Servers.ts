import { Effect } from "effect"
import { addServer, type NewServer, removeServer } from "../panel/Servers.js"
import { swapRuntime } from "./Operations.js"

// Servers of the embedded panel (config/panel.yaml), added and removed by an admin; the runtime swaps
// so extensions get ServerCreated / ServerDeleted.

export const createServer = (server: NewServer) => Effect.tap(addServer(server), () => swapRuntime)

export const deleteServer = (uuid: string) =>
  Effect.tap(removeServer(uuid), () => swapRuntime).pipe(Effect.as({ uuid }))
