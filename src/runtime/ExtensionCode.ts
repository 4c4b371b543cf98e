import { Data, Duration, Effect } from "effect"

// The one way Host calls into an extension's backend code (docs/backend.md): an entrypoint's methods
// while a generation boots, console commands, scheduled tasks, health checks and event listeners. The code
// may be sync or async, may throw anything and may never answer; every such outcome becomes one typed
// failure naming the extension and the call, and each caller decides what it means (the runtime
// quarantines, a command exits 1, a health check reports an error).

export class ExtensionCodeFailed extends Data.TaggedError("ExtensionCodeFailed")<{
  readonly extensionId: string
  readonly what: string
  readonly detail: string
}> {
  override get message() {
    return `${this.what} of ${this.extensionId} failed: ${this.detail}`
  }
}

/** What extension code threw, in words: an Error's (or error-like object's) message, a string, or its JSON. */
export const describeThrown = (error: unknown): string => {
  if (error instanceof Error) return error.message
  if (typeof error === "string") return error
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") return error.message
  return JSON.stringify(error) ?? String(error)
}

/** Calls extension code (sync or async) with a time limit; a throw, a rejection or a timeout becomes ExtensionCodeFailed. */
export const callExtensionCode = <A>(
  extensionId: string,
  what: string,
  call: () => A | Promise<A>,
  timeout: Duration.DurationInput
) =>
  Effect.tryPromise({
    try: async () => await call(),
    catch: (error) => new ExtensionCodeFailed({ extensionId, what, detail: describeThrown(error) })
  }).pipe(
    Effect.timeoutFail({
      duration: timeout,
      onTimeout: () => new ExtensionCodeFailed({ extensionId, what, detail: `no answer within ${Duration.format(timeout)}` })
    })
  )
