import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { extensionMetadata } from "../runtime/ClientView.js"
import { LiveRuntime, type LiveGeneration } from "../runtime/LiveState.js"
import { authenticate, requireUser } from "./Context.js"
import { HttpFailure } from "./Errors.js"
import { EventStreams } from "./EventStreams.js"

// GET /api/client/host/events (docs/frontend.md "Live updates"): Server-Sent Events for the bridge. A
// `generation` event `{generation, extensions}` goes out on connect and after every runtime swap (the
// runtime notices changes by any process within about a second), with a keep-alive comment every 15 s
// so proxies keep the connection open. The stream ends when the server closes; the browser reconnects
// by itself (`retry: 2000`) and the event it gets first catches it up. The streams themselves, their caps
// and their shared timer live in http/EventStreams.ts.

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

/**
 * Opens a stream in the server's registry (http/EventStreams.ts): a user's ninth ends their oldest, and
 * past `limits.event_streams` in all the answer is 503 `TooManyStreams` (docs/http.md "Live updates: caps").
 */
export const events = Effect.gen(function*() {
  const { auth, live } = yield* authenticate
  const user = yield* requireUser(auth)
  const runtime = yield* LiveRuntime
  const streams = yield* EventStreams
  const readable = streams.open(String(user.id), (yield* runtime.current) ?? live)
  if (readable === undefined) {
    return yield* new HttpFailure({
      status: 503,
      code: "TooManyStreams",
      detail: `the server has ${streams.count()} live-update streams open, its limit (limits.event_streams: ${streams.cap}); try again later`,
      headers: { "retry-after": "30" }
    })
  }
  return HttpServerResponse.raw(readable, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform", "x-accel-buffering": "no", connection: "close" }
  })
})
