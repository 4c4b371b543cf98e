import { Effect, Layer, Option } from "effect"
import { frameworkVersion, HostConfig } from "../config/HostConfig.js"
import { DoctorUnknownExtension, runDoctor } from "../lifecycle/Doctor.js"
import { Panel } from "../panel/Panel.js"
import { bootForCli, runHealthChecks } from "../runtime/Backend.js"
import { LiveRuntime } from "../runtime/LiveState.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { RuntimeNotReady } from "./Errors.js"
import { runtimeVersions } from "../system/RuntimeVersions.js"

// The doctor report (docs/operations.md "host doctor"), for both front doors: `host doctor [<id>]` boots
// the enabled extensions as `host status --health` does; the admin detail screen's Doctor section reads
// the server's current generation (the one serving requests), so it shows what this server sees rather
// than a second boot. Both hand lifecycle/Doctor.ts the same facts.

/** Node's HTTP client (node:http), loaded on the first doctor request, not when the server starts. */
const nodeHttpClient = Layer.unwrapEffect(
  Effect.map(Effect.promise(() => import("@effect/platform-node/NodeHttpClient")), (module) => module.layer)
)

export const extensionDoctor = (id: string) =>
  Effect.gen(function*() {
    const live = yield* (yield* LiveRuntime).current
    if (live === undefined) return yield* new RuntimeNotReady()
    const loaded = live.generation.extensions.get(id)
    const health = loaded === undefined ? [] : yield* runHealthChecks({ ...live.generation, extensions: new Map([[id, loaded]]) })
    return yield* runDoctor(id, { generation: live.generation, health, versions: runtimeVersions(frameworkVersion, live.panelInfo) }).pipe(Effect.provide(nodeHttpClient))
  })

/** `host doctor [<id>]`: boots the enabled extensions, runs their health checks, and reports (the HTTP client is the caller's). */
export const cliDoctor = (only: string | undefined) =>
  Effect.gen(function*() {
    const { config } = yield* HostConfig
    const panel = yield* Panel
    // An id that is not installed is said before the extensions are booted for nothing.
    if (only !== undefined && Option.isNone(yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.find(only)))) {
      return yield* new DoctorUnknownExtension({ extensionId: only })
    }
    const generation = yield* bootForCli
    const health = yield* runHealthChecks(generation)
    return yield* runDoctor(only, { generation, health, versions: runtimeVersions(config.version, panel.info) })
  })
