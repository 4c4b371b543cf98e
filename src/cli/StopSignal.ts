import { Effect } from "effect"

/** Resolves with the signal's name at the first SIGINT (Ctrl-C) or SIGTERM: watches end cleanly on it. */
export const untilStopSignal = Effect.async<string>((resume) => {
  const stop = (signal: string) => () => resume(Effect.succeed(signal))
  const onInt = stop("SIGINT")
  const onTerm = stop("SIGTERM")
  process.once("SIGINT", onInt)
  process.once("SIGTERM", onTerm)
  return Effect.sync(() => {
    process.off("SIGINT", onInt)
    process.off("SIGTERM", onTerm)
  })
})
