import { Effect, FiberRef, HashSet, Layer, Logger } from "effect"
import { dataLayer, type Invocation, moduleLoaderLayer, registryLayer } from "../CompositionRoot.js"
import { Progress } from "../kernel/Events.js"

// What only the CLI adds to the composition in src/CompositionRoot.ts: where logs and progress lines go.

export { configLayer, dataLayer, type Invocation, platformLayer, registryLayer, repositoriesLayer, operationsLayer } from "../CompositionRoot.js"

/** Logs go to stderr as `warning: …` lines, so stdout stays the command's output (and pure JSON). */
const stderrLoggerOf = Logger.make(({ logLevel, message }) => {
  const text = (Array.isArray(message) ? message : [message]).map(String).join(" ")
  process.stderr.write(`${logLevel._tag.toLowerCase()}: ${text}\n`)
})

/**
 * Runs `effect` with its logs on stderr instead of the default logger: a fiber ref set for the run, not a
 * layer (each layer is a memoised build of its own, docs/decisions.md "P1: the stack's floor").
 */
export const withStderrLogger = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.locallyWith(effect, FiberRef.currentLoggers, (loggers) => HashSet.add(HashSet.remove(loggers, Logger.defaultLogger), stderrLoggerOf))

/** Prints each step of a long operation on stderr, so stdout stays the result. */
export const progressLayer = Layer.succeed(Progress, {
  step: (message: string) => Effect.sync(() => process.stderr.write(`  - ${message}\n`))
})

/**
 * What a plan that changes nothing is made with (`reconcile --dry-run`, `--out`, the upgrade preflight):
 * the planner over what it reads — the data layer, the panel, the module loader, the artifact store and
 * the registry — without the lifecycle operations and listeners of `operationsLayer`, whose modules a run that
 * applies nothing would only load and build (docs/decisions.md "A plan that changes nothing builds only
 * what planning reads"). Its modules are imported when the layer is built, as `operationsLayer`'s are: every
 * command loads this module.
 */
export const planningLayer = (invocation: Invocation) =>
  Layer.unwrapEffect(
    Effect.map(
      Effect.promise(() =>
        Promise.all([
          import("../reconcile/Planner.js"),
          import("../panel/RealPanel.js"),
          import("../archive/ArtifactStore.js")
        ])
      ),
      ([{ Planner }, PanelDrivers, ArtifactStore]) =>
        Planner.Default.pipe(
          Layer.provideMerge(
            Layer.mergeAll(PanelDrivers.layerFromConfig, moduleLoaderLayer(invocation), ArtifactStore.layer, registryLayer(invocation))
          ),
          Layer.provideMerge(dataLayer(invocation))
        )
    )
  )
