import { Effect, Layer, Logger } from "effect"
import { Progress } from "../kernel/Events.js"

// What only the CLI adds to the composition in src/HostLive.ts: where logs and progress lines go.

export { configLayer, dataLayer, type Invocation, platformLayer, registryLayer, repositoriesLayer, storeLayer } from "../HostLive.js"

/** Logs go to stderr as `warning: …` lines, so stdout stays the command's output (and pure JSON). */
export const stderrLogger = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ logLevel, message }) => {
    const text = (Array.isArray(message) ? message : [message]).map(String).join(" ")
    process.stderr.write(`${logLevel._tag.toLowerCase()}: ${text}\n`)
  })
)

/** Prints each step of a long operation on stderr, so stdout stays the result. */
export const progressLayer = Layer.succeed(Progress, {
  step: (message: string) => Effect.sync(() => process.stderr.write(`  - ${message}\n`))
})
