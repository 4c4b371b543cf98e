import { Effect, Layer } from "effect"
import { runDoctor } from "../lifecycle/Doctor.js"
import { runHealthChecks } from "../runtime/Backend.js"
import { LiveRuntime } from "../runtime/LiveState.js"
import { RuntimeNotReady } from "./Errors.js"
import { versionsOf } from "./Versions.js"

// The admin detail screen's Doctor section (docs/operations.md "host doctor"): the report `host doctor
// <id>` prints, over the server's current generation (the one serving requests), so the screen shows
// what this server sees rather than a second boot.

/** Node's HTTP client (and undici under it), loaded on the first doctor request, not when the server starts. */
const nodeHttpClient = Layer.unwrapEffect(
  Effect.map(Effect.promise(() => import("@effect/platform-node/NodeHttpClient")), (module) => module.layer)
)

export const extensionDoctor = (id: string) =>
  Effect.gen(function*() {
    const live = (yield* LiveRuntime).current()
    if (live === undefined) return yield* new RuntimeNotReady()
    const loaded = live.generation.extensions.get(id)
    const health = loaded === undefined ? [] : yield* runHealthChecks({ ...live.generation, extensions: new Map([[id, loaded]]) })
    return yield* runDoctor(id, { generation: live.generation, health, versions: versionsOf(live.panelInfo) }).pipe(Effect.provide(nodeHttpClient))
  })
