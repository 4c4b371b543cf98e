import { Command, Options } from "@effect/cli"
import { Console, Duration, Effect, Layer, Option, Stream } from "effect"
import { join } from "node:path"
import { HostConfig } from "../../config/HostConfig.js"
import { listen } from "../../http/Server.js"
import * as Converge from "../../lifecycle/Converge.js"
import * as LiveState from "../../runtime/LiveState.js"
import { Reconciler } from "../../reconcile/Reconciler.js"
import { runEveryMinute } from "../../runtime/Scheduler.js"
import { WebhookDeliveries } from "../../store/WebhookDeliveries.js"
import { serverStarted } from "../CodeCache.js"
import { CliInvocation } from "../Invocation.js"
import { operationsLayer } from "../Runtime.js"
import { untilStopSignal } from "../StopSignal.js"

// `host serve`: the panel's HTTP server with the extension runtime (docs/http.md). Listens on
// config server.host / server.port (HOST_PORT), or --listen / --port; port 0 picks a free port. Once
// bound it prints one line, `Listening on http://HOST:PORT`, on stdout; /host/ready answers 200 once
// the first runtime generation has booted. SIGINT / SIGTERM stop it gracefully. HOST_HTTP_FAST_PATH=0
// turns off the precomputed answers of the hot client endpoints (for benchmarks).

export const serveCommand = Command.make(
  "serve",
  {
    port: Options.integer("port").pipe(Options.optional, Options.withDescription("port to listen on (0: any free port)")),
    listenHost: Options.text("listen").pipe(Options.optional, Options.withDescription("address to listen on (default server.host)")),
    poll: Options.integer("poll-ms").pipe(
      Options.withDefault(500),
      Options.withDescription("how often to read the state generation for changes made by other processes or replicas (ms)")
    )
  },
  ({ listenHost, poll, port }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      // The live runtime converges this root's files first (from the recorded registry source when needed).
      const live = LiveState.layer({ pollInterval: Duration.millis(Math.max(50, poll)) }).pipe(
        Layer.provide(Converge.layer)
      )
      yield* Effect.scoped(
        Effect.gen(function*() {
          const { config, paths } = yield* HostConfig
          const address = yield* listen({
            host: Option.getOrElse(listenHost, () => config.server.host),
            port: Option.getOrElse(port, () => config.server.port),
            publicDirectories: [paths.publicAssets, join(invocation.frameworkRoot, "dist", "public", "host")],
            frameworkRoot: invocation.frameworkRoot,
            env: invocation.env,
            fastPath: invocation.env.HOST_HTTP_FAST_PATH !== "0"
          })
          const runtime = yield* LiveState.LiveRuntime
          yield* runtime.useListenUrl(address.url)
          yield* Console.log(`Listening on ${address.url}`)
          // Once the first generation is up, the start is compiled: bin/host.js may write its code cache.
          yield* Effect.forkScoped(Stream.runDrain(Stream.take(runtime.changes, 1)).pipe(Effect.andThen(Effect.sync(serverStarted))))
          // Scheduled tasks: each minute is claimed once per database, so replicas run a task once.
          yield* Effect.forkScoped(runEveryMinute(Effect.map(runtime.current, (live) => live?.generation)))
          // A real panel: put Host's include back after the panel's upgrade removed it (docs/panels.md).
          if (config.panel.driver !== "embedded" && config.panel.self_heal) {
            const { selfHealInterval, selfHealLoop } = yield* Effect.promise(() => import("../../panel/PanelSelfHeal.js"))
            const { PanelInstall } = yield* Effect.promise(() => import("../../panel/PanelInstall.js"))
            const interval = invocation.debug?.panel_heal_ms === undefined ? selfHealInterval : Duration.millis(invocation.debug.panel_heal_ms)
            yield* Effect.forkScoped(selfHealLoop(interval).pipe(Effect.provide(PanelInstall.Default)))
          }
          const signal = yield* untilStopSignal
          yield* Effect.logInfo(`${signal}: stopping`)
        })
      ).pipe(
        Effect.provide(
          Layer.mergeAll(live, Reconciler.Default, WebhookDeliveries.Default).pipe(
            Layer.provideMerge(operationsLayer(invocation, { listeners: false }))
          )
        )
      )
    })
).pipe(Command.withDescription("Serve the panel with its extensions (HTTP API, extension routes, live runtime)"))
