import { HttpRouter, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { frameworkVersion } from "../config/HostConfig.js"
import { DoctorUnknownExtension, runDoctor } from "../lifecycle/Doctor.js"
import { runHealthChecks } from "../runtime/Backend.js"
import { LiveRuntime } from "../runtime/LiveState.js"
import { adminActor } from "./AdminApi.js"
import { HttpFailure, notFound } from "./Errors.js"
import { runtimeVersions } from "../system/RuntimeVersions.js"

// `GET /admin/host/api/extensions/{vendor}/{name}/doctor` (docs/http.md, docs/admin.md "Doctor"): the
// report `host doctor <id>` prints, over the server's current generation (the one serving requests),
// so the detail screen shows what this server sees rather than a second boot.

/** Node's HTTP client (and undici under it), loaded on the first doctor request, not when the server starts. */
const nodeHttpClient = Layer.unwrapEffect(
  Effect.map(Effect.promise(() => import("@effect/platform-node/NodeHttpClient")), (module) => module.layer)
)

export const extensionDoctor = Effect.gen(function*() {
  yield* adminActor
  const { name, vendor } = yield* HttpRouter.params
  const id = `${vendor}/${name}`
  const live = yield* (yield* LiveRuntime).current
  if (live === undefined) return yield* new HttpFailure({ status: 503, code: "NotReady", detail: "the runtime is still booting" })
  const loaded = live.generation.extensions.get(id)
  const health = loaded === undefined ? [] : yield* runHealthChecks({ ...live.generation, extensions: new Map([[id, loaded]]) })
  const report = yield* runDoctor(id, {
    generation: live.generation,
    health,
    versions: runtimeVersions(frameworkVersion, live.panelInfo)
  }).pipe(
    Effect.catchTag("DoctorUnknownExtension", (error: DoctorUnknownExtension) => notFound(error.message)),
    Effect.provide(nodeHttpClient)
  )
  return yield* HttpServerResponse.json({ data: report })
})
