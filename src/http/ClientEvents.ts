import { HttpServerResponse } from "@effect/platform"
import { Deferred, Duration, Effect, Option, Stream } from "effect"
import { extensionMetadata } from "../runtime/ClientView.js"
import { LiveRuntime, type LiveGeneration } from "../runtime/LiveState.js"
import { authenticate, requireUser, ServerClosing } from "./Context.js"

// GET /api/client/host/events (docs/frontend.md "Live updates"): Server-Sent Events for the bridge. A
// `generation` event `{generation, extensions}` goes out on connect and after every runtime swap (the
// runtime notices changes by any process within about a second), with a keep-alive comment every 15 s
// so proxies keep the connection open. The stream ends when the server closes; the browser reconnects
// by itself (`retry: 2000`) and the event it gets first catches it up.

const encoder = new TextEncoder()
const frames = new WeakMap<LiveGeneration, Uint8Array>()

/** The `generation` event of a generation (extensions in boot order, as the page loads them). */
export const generationFrame = (live: LiveGeneration): Uint8Array => {
  let frame = frames.get(live)
  if (frame === undefined) {
    const data = JSON.stringify({
      generation: live.generation.number,
      extensions: [...live.generation.extensions.values()].map(extensionMetadata)
    })
    frame = encoder.encode(`id: ${live.generation.number}\nevent: generation\ndata: ${data}\n\n`)
    frames.set(live, frame)
  }
  return frame
}

export const keepAliveInterval = Duration.seconds(15)

export const events = Effect.gen(function*() {
  const { auth, live } = yield* authenticate
  yield* requireUser(auth)
  const runtime = yield* LiveRuntime
  const closing = yield* Effect.serviceOption(ServerClosing)
  const swaps = Stream.async<Uint8Array>((emit) => {
    // Subscribed before the first frame is taken, so no swap can fall between them.
    const off = runtime.onSwap((next) => void emit.single(generationFrame(next)))
    void emit.single(generationFrame(runtime.current() ?? live))
    return Effect.sync(off)
  })
  const keepAlive = Stream.tick(keepAliveInterval).pipe(Stream.drop(1), Stream.map(() => encoder.encode(": keep-alive\n\n")))
  const body = Stream.concat(Stream.make(encoder.encode("retry: 2000\n\n")), Stream.merge(swaps, keepAlive))
  const ended = Option.match(closing, { onNone: () => body, onSome: (deferred) => Stream.interruptWhen(body, Deferred.await(deferred)) })
  return HttpServerResponse.stream(ended, {
    contentType: "text/event-stream",
    headers: { "cache-control": "no-cache, no-transform", "x-accel-buffering": "no", connection: "close" }
  })
})
