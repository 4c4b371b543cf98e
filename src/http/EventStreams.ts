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
    const perUser = options.perUser ?? streamsPerUser
    const all = new Set<Entry>()
    const byUser = new Map<string, Array<Entry>>()
    const run = Runtime.runFork(yield* Effect.runtime<Effect.Effect.Context<ReturnType<typeof writeEventStreamsReport>>>())

    // The count for `host status`: written at most once per `reportMillis`, and once more when it settles.
    let reportTimer: ReturnType<typeof setTimeout> | undefined
    let reported = -1
    const writeReport = () => {
      reportTimer = undefined
      const open = all.size
      if (open === reported) return
      reported = open
      run(
        Effect.flatMap(DateTime.now, (now) =>
          writeEventStreamsReport({ pid: process.pid, open, cap: options.total, per_user: perUser, updated_at: DateTime.formatIso(now) })).pipe(
            Effect.catchAll((error) => Effect.logWarning(`could not write the event stream count: ${error.message}`))
          )
      )
    }
    const changed = () => {
      reportTimer ??= setTimeout(writeReport, options.reportMillis ?? 500)
      reportTimer.unref?.()
    }

    const remove = (entry: Entry) => {
      if (!all.delete(entry)) return
      const list = byUser.get(entry.user)
      if (list !== undefined) {
        const index = list.indexOf(entry)
        if (index >= 0) list.splice(index, 1)
        if (list.length === 0) byUser.delete(entry.user)
      }
      changed()
    }

    const send = (entry: Entry, frame: Uint8Array) => {
      if (entry.readable.readableLength > maxUnreadBytes) {
        entry.readable.destroy()
        return
      }
      entry.readable.push(frame)
    }
    const broadcast = (frame: Uint8Array) => {
      for (const entry of all) send(entry, frame)
    }
    const announce = (live: LiveGeneration) => {
      const frame = options.frameOf(live)
      for (const entry of all) {
        if (entry.generation >= live.generation.number) continue
        entry.generation = live.generation.number
        send(entry, frame)
      }
    }

    // A stream opened after a swap but before this fiber saw it already started with that generation: it is skipped.
    yield* options.runtime.changes.pipe(
      Stream.runForEach((next) => Effect.sync(() => announce(next))),
      Effect.forkScoped
    )
    const keepAlive = setInterval(() => broadcast(keepAliveFrame), options.keepAliveMillis ?? keepAliveMillis)
    keepAlive.unref()

    const end = (entry: Entry, last?: Uint8Array) => {
      remove(entry)
      if (last !== undefined) entry.readable.push(last)
      entry.readable.push(null)
    }

    const service: EventStreamsService = {
      cap: options.total,
      perUser,
      count: () => all.size,
      open: (user, first) => {
        const mine = byUser.get(user) ?? []
        while (mine.length >= perUser) end(mine[0]!, displacedFrame)
        if (all.size >= options.total) return undefined
        const readable = new Readable({ read() {} })
        const entry: Entry = { user, readable, generation: first.generation.number }
        all.add(entry)
        mine.push(entry)
        byUser.set(user, mine)
        // The client went away (the response's pipeline destroys this) or the stream was ended here.
        readable.once("close", () => remove(entry))
        readable.push(retryFrame)
        readable.push(options.frameOf(first))
        changed()
        return readable
      },
      endAll: () => {
        for (const entry of [...all]) end(entry)
      }
    }

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        clearInterval(keepAlive)
        service.endAll()
        if (reportTimer !== undefined) clearTimeout(reportTimer)
        writeReport()
      })
    )
    return service
  })
