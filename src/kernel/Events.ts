import { Context, Effect, Layer, Ref } from "effect"
import type { LifecycleEvent } from "../domain/Events.js"

// The in-process event bus: operations publish after they commit; the runtime attaches extension
// listeners. A failing listener is logged and never undoes the operation.

export type EventListener = (event: LifecycleEvent) => Effect.Effect<void, unknown>

export class LifecycleEvents extends Context.Tag("host/LifecycleEvents")<
  LifecycleEvents,
  {
    readonly publish: (event: LifecycleEvent) => Effect.Effect<void>
    readonly subscribe: (listener: EventListener) => Effect.Effect<void>
  }
>() {}

export const make = Effect.gen(function*() {
  const listeners = yield* Ref.make<ReadonlyArray<EventListener>>([])
  return {
    publish: (event: LifecycleEvent) =>
      Effect.flatMap(Ref.get(listeners), (all) =>
        Effect.forEach(all, (listener) =>
          listener(event).pipe(
            Effect.catchAllCause((cause) => Effect.logWarning(`a listener of ${event._tag} failed`, cause))
          ), { discard: true })),
    subscribe: (listener: EventListener) => Ref.update(listeners, (all) => [...all, listener])
  }
})

export const layer = Layer.effect(LifecycleEvents, make)

/** Progress of a long operation, one line per step (the CLI prints them to stderr). */
export class Progress extends Context.Tag("host/Progress")<Progress, { readonly step: (message: string) => Effect.Effect<void> }>() {
  static readonly silent = Layer.succeed(Progress, { step: () => Effect.void })
}
