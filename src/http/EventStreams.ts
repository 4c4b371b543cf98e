import { Context, DateTime, Effect, Runtime, Stream } from "effect"
import { Readable } from "node:stream"
import type { LiveGeneration, LiveRuntimeService } from "../runtime/LiveState.js"
import { writeEventStreamsReport } from "../runtime/ReplicaFiles.js"

// The open `/api/client/host/events` streams of one server (docs/http.md "Live updates: caps").
//
// One subscription to the runtime's `changes` (one fiber) and one keep-alive timer serve every stream: a stream is a plain
// Node Readable the response is piped from, registered here, so it costs its socket and a few hundred
// bytes rather than fibers, queues and a timer of its own (docs/decisions.md "Event streams": the Effect
// Stream per connection — merge, async queue, tick schedule — cost about 170 KB each).
//
// Caps: at most `perUser` streams per user — a new one ends that user's oldest, telling its browser to
// come back in a minute rather than at once — and at most `total` in all (the caller answers 503).

const encoder = new TextEncoder()
const keepAliveFrame = encoder.encode(": keep-alive\n\n")
const retryFrame = encoder.encode("retry: 2000\n\n")
/** Sent to a stream ended for a newer one of its user: its EventSource waits a minute before reconnecting. */
const displacedFrame = encoder.encode("retry: 60000\n\n")
/** A client that leaves this much unread is too slow to keep: its stream is dropped (it reconnects). */
const maxUnreadBytes = 64 * 1024

export const streamsPerUser = 8
export const keepAliveMillis = 15_000

interface Entry {
  readonly user: string
  readonly readable: Readable
  /** The generation this stream was last told about: the runtime's `changes` may still carry the one it started with. */
  generation: number
}

export interface EventStreamsService {
  /** A new stream for `user` starting with the `generation` event of `first`, or undefined when the total cap is reached. */
  readonly open: (user: string, first: LiveGeneration) => Readable | undefined
  /** Streams open now. */
  readonly count: () => number
  readonly cap: number
  readonly perUser: number
  /** Ends every stream (the server is closing). */
  readonly endAll: () => void
}

export class EventStreams extends Context.Tag("host/http/EventStreams")<EventStreams, EventStreamsService>() {}

/** The open streams, as a set and by user; `changed` is told whenever the count moves. */
interface Streams {
  readonly all: Set<Entry>
  readonly byUser: Map<string, Array<Entry>>
  readonly changed: () => void
}

interface Caps {
  readonly total: number
  readonly perUser: number
}

/** Forgets a stream (once: both its own close and `end` arrive here). */
const remove = (streams: Streams, entry: Entry) => {
  if (!streams.all.delete(entry)) return
  const list = streams.byUser.get(entry.user)
  if (list !== undefined) {
    const index = list.indexOf(entry)
    if (index >= 0) list.splice(index, 1)
    if (list.length === 0) streams.byUser.delete(entry.user)
  }
  streams.changed()
}

/** Ends a stream from this side, after an optional last frame. */
const end = (streams: Streams, entry: Entry, last?: Uint8Array) => {
  remove(streams, entry)
  if (last !== undefined) entry.readable.push(last)
  entry.readable.push(null)
}

const endAll = (streams: Streams) => {
  for (const entry of [...streams.all]) end(streams, entry)
}

/** Queues a frame, or drops a client too slow to read (docs/http.md "Live updates: caps"). */
const send = (entry: Entry, frame: Uint8Array) => {
  if (entry.readable.readableLength > maxUnreadBytes) {
    entry.readable.destroy()
    return
  }
  entry.readable.push(frame)
}

const broadcast = (streams: Streams, frame: Uint8Array) => {
  for (const entry of streams.all) send(entry, frame)
}

/** Tells every stream not yet told about `live`; the frame is built once for all of them. */
const announce = (streams: Streams, frameOf: (live: LiveGeneration) => Uint8Array, live: LiveGeneration) => {
  const frame = frameOf(live)
  for (const entry of streams.all) {
    if (entry.generation >= live.generation.number) continue
    entry.generation = live.generation.number
    send(entry, frame)
  }
}

/**
 * Opens one stream within the caps: the user's oldest streams make room first (told to wait a minute),
 * then the total cap may still refuse (undefined).
 */
const open = (
  streams: Streams,
  caps: Caps,
  frameOf: (live: LiveGeneration) => Uint8Array,
  user: string,
  first: LiveGeneration
): Readable | undefined => {
  const mine = streams.byUser.get(user) ?? []
  while (mine.length >= caps.perUser) end(streams, mine[0]!, displacedFrame)
  if (streams.all.size >= caps.total) return undefined
  const readable = new Readable({ read() {} })
  const entry: Entry = { user, readable, generation: first.generation.number }
  streams.all.add(entry)
  mine.push(entry)
  streams.byUser.set(user, mine)
  // The client went away (the response's pipeline destroys this) or the stream was ended here.
  readable.once("close", () => remove(streams, entry))
  readable.push(retryFrame)
  readable.push(frameOf(first))
  streams.changed()
  return readable
}

/**
 * The count for `host status`, written by `run` at most once per `reportMillis` and once more when it
 * settles; `flush` writes it now (the scope is closing).
 */
const makeReporter = (
  run: (effect: Effect.Effect<void, never, ReportContext>) => unknown,
  count: () => number,
  caps: Caps,
  reportMillis: number
) => {
  let timer: ReturnType<typeof setTimeout> | undefined
  let reported = -1
  const write = () => {
    timer = undefined
    const open = count()
    if (open === reported) return
    reported = open
    run(
      Effect.flatMap(DateTime.now, (now) =>
        writeEventStreamsReport({ pid: process.pid, open, cap: caps.total, per_user: caps.perUser, updated_at: DateTime.formatIso(now) })).pipe(
          Effect.catchAll((error) => Effect.logWarning(`could not write the event stream count: ${error.message}`))
        )
    )
  }
  return {
    changed: () => {
      timer ??= setTimeout(write, reportMillis)
      timer.unref?.()
    },
    flush: () => {
      if (timer !== undefined) clearTimeout(timer)
      write()
    }
  }
}

type ReportContext = Effect.Effect.Context<ReturnType<typeof writeEventStreamsReport>>

/**
 * The registry of a server, until the scope closes. `frameOf` is the `generation` event of a generation;
 * the count is written to the replica directory for `host status` when it changes (debounced).
 */
export const makeEventStreams = (options: {
  readonly runtime: Pick<LiveRuntimeService, "changes">
  readonly frameOf: (live: LiveGeneration) => Uint8Array
  readonly total: number
  readonly perUser?: number
  readonly keepAliveMillis?: number
  readonly reportMillis?: number
}) =>
  Effect.gen(function*() {
    const caps: Caps = { total: options.total, perUser: options.perUser ?? streamsPerUser }
    const all = new Set<Entry>()
    const reporter = makeReporter(
      Runtime.runFork(yield* Effect.runtime<ReportContext>()),
      () => all.size,
      caps,
      options.reportMillis ?? 500
    )
    const streams: Streams = { all, byUser: new Map(), changed: reporter.changed }

    // A stream opened after a swap but before this fiber saw it already started with that generation: it is skipped.
    yield* options.runtime.changes.pipe(
      Stream.runForEach((next) => Effect.sync(() => announce(streams, options.frameOf, next))),
      Effect.forkScoped
    )
    const keepAlive = setInterval(() => broadcast(streams, keepAliveFrame), options.keepAliveMillis ?? keepAliveMillis)
    keepAlive.unref()

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        clearInterval(keepAlive)
        endAll(streams)
        reporter.flush()
      })
    )
    const service: EventStreamsService = {
      cap: caps.total,
      perUser: caps.perUser,
      count: () => all.size,
      open: (user, first) => open(streams, caps, options.frameOf, user, first),
      endAll: () => endAll(streams)
    }
    return service
  })
