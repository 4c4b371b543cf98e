import { Clock, Context, DateTime, Effect, Either, Exit, Layer, ParseResult, Schema, Tracer } from "effect"
import { appendFileSync } from "node:fs"
import { onFirstCall } from "../domain/OnFirstCall.js"

// HOST_DEBUG, the one debug variable (docs/operations.md, "The debug variable"): a JSON object that lets
// the crash, concurrency and scheduling suites interrupt, observe and time real `host` processes. The CLI
// decodes it once, where the process starts (src/cli/main.ts); below that the code only sees the
// services made from it here — `Faults` (a no-op unless asked) and the clock — never the environment.

export const DebugSettings = Schema.Struct({
  /** A step name: the process kills itself (SIGKILL) when an operation reaches that step. */
  crash_at: Schema.optional(Schema.NonEmptyString),
  /** A file: `begin|end <pid> <lock>` is appended when a lock is taken and just before it is released. */
  lock_log: Schema.optional(Schema.NonEmptyString),
  /** An ISO-8601 time the process's clock starts at (and runs on from): the tasks of a chosen minute run. */
  now: Schema.optional(Schema.DateTimeUtc),
  /** How often `host serve` checks Host's include in a real panel (self-heal), instead of every 5 minutes. */
  panel_heal_ms: Schema.optional(Schema.Int.pipe(Schema.between(10, 3_600_000))),
  /** A file: each span the run ends is appended as one JSON line, to see what a command spends its time on. */
  spans: Schema.optional(Schema.NonEmptyString)
})
export type DebugSettings = typeof DebugSettings.Type

const decodeSettings = onFirstCall(() => Schema.decodeUnknownEither(Schema.parseJson(DebugSettings), { onExcessProperty: "error" }))

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** The keys that name a file the run appends to. */
const fileKeys = ["lock_log", "spans"] as const

/** Why a file a key names cannot be appended to (it is made if missing), or undefined when all can. */
const unwritableFile = (settings: DebugSettings): string | undefined => {
  for (const key of fileKeys) {
    const file = settings[key]
    if (file === undefined) continue
    try {
      appendFileSync(file, "")
    } catch (error) {
      return `HOST_DEBUG is not valid: ${key}: cannot write ${file} (${reasonOf(error)})`
    }
  }
  return undefined
}

/**
 * HOST_DEBUG decoded: empty when unset; a value that does not decode, or a file (`lock_log`, `spans`) that
 * cannot be written, is refused with the reason, before the command does anything.
 */
export const debugSettingsFrom = (env: Readonly<Record<string, string | undefined>>): Either.Either<DebugSettings, string> => {
  const text = env.HOST_DEBUG
  if (text === undefined || text.trim() === "") return Either.right({})
  return Either.flatMap(
    Either.mapLeft(decodeSettings(text), (error) => `HOST_DEBUG is not valid: ${ParseResult.TreeFormatter.formatErrorSync(error)}`),
    (settings) => {
      const problem = unwritableFile(settings)
      return problem === undefined ? Either.right(settings) : Either.left(problem)
    }
  )
}

/** The points where a test may interrupt or observe an operation. */
export interface FaultsService {
  /** An operation reached `step` (journaled file switch, uninstall): a crash test may end the process here. */
  readonly reached: (step: string) => Effect.Effect<void>
  /** The lock `name` was taken (`begin`) or is about to be given back (`end`). */
  readonly lockTraced: (mark: "begin" | "end", name: string) => Effect.Effect<void>
}

export class Faults extends Context.Tag("host/Faults")<Faults, FaultsService>() {}

/** What runs when no fault is asked for: nothing. */
export const noFaults: FaultsService = { reached: () => Effect.void, lockTraced: () => Effect.void }

/** The faults a decoded HOST_DEBUG asks for; each point without a setting stays a no-op. */
export const faultsFrom = (settings: DebugSettings): FaultsService => {
  const { crash_at: crashAt, lock_log: lockLog } = settings
  return {
    reached: crashAt === undefined ? noFaults.reached : (step) =>
      Effect.sync(() => {
        if (step === crashAt) process.kill(process.pid, "SIGKILL")
      }),
    // Appended synchronously, so the line is on disk before the lock row changes hands.
    lockTraced: lockLog === undefined ? noFaults.lockTraced : (mark, name) =>
      Effect.sync(() => appendFileSync(lockLog, `${mark} ${process.pid} ${name}\n`))
  }
}

export const faultsLayer = (settings: DebugSettings = {}): Layer.Layer<Faults> => Layer.succeed(Faults, faultsFrom(settings))

/**
 * A clock that reads `start` at the moment it is made and runs on from there at the real pace; sleeping
 * is the real clock's, so timeouts and lease renewals behave as usual.
 */
export const clockStartingAt = (start: DateTime.Utc): Clock.Clock => {
  const real = Clock.make()
  const offset = DateTime.toEpochMillis(start) - real.unsafeCurrentTimeMillis()
  const offsetNanos = BigInt(offset) * 1_000_000n
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => real.unsafeCurrentTimeMillis() + offset,
    unsafeCurrentTimeNanos: () => real.unsafeCurrentTimeNanos() + offsetNanos,
    currentTimeMillis: Effect.sync(() => real.unsafeCurrentTimeMillis() + offset),
    currentTimeNanos: Effect.sync(() => real.unsafeCurrentTimeNanos() + offsetNanos),
    sleep: real.sleep
  }
}

/** One line of HOST_DEBUG's `spans` file (docs/operations.md, "The debug variable"). */
export interface SpanLine {
  readonly name: string
  /** The enclosing span's name; null for a span at the top of the run. */
  readonly parent: string | null
  /** When the span started, in milliseconds since the process started. */
  readonly start_ms: number
  readonly duration_ms: number
  readonly failed: boolean
}

const hundredths = (value: number) => Math.round(value * 100) / 100

/**
 * The spans `base` makes, each also appended to `file` as one JSON line (SpanLine) when it ends.
 * Durations come from the span's own times, which are the run's clock; the start is placed on the
 * process's monotonic time, so a HOST_DEBUG `now` shifts neither. Recording never changes what the run
 * does: when an append fails (a full disk), one warning goes to stderr and no more spans are written.
 */
export const spanFileTracer = (file: string, base: Tracer.Tracer): Tracer.Tracer => {
  let stopped = false
  const append = (line: SpanLine) => {
    if (stopped) return
    try {
      // Appended as each span ends, so a run that is killed still leaves the spans it finished.
      appendFileSync(file, `${JSON.stringify(line)}\n`)
    } catch (error) {
      stopped = true
      process.stderr.write(`warning: HOST_DEBUG spans: cannot append to ${file} (${reasonOf(error)}); no more spans are written\n`)
    }
  }
  return Tracer.make({
    context: base.context,
    span: (name, parent, context, links, startTime, kind, options) => {
      const span = base.span(name, parent, context, links, startTime, kind, options)
      const end = span.end.bind(span)
      span.end = (endTime, exit) => {
        end(endTime, exit)
        const duration = Number(endTime - startTime) / 1e6
        append({
          name,
          parent: parent._tag === "Some" && parent.value._tag === "Span" ? parent.value.name : null,
          start_ms: hundredths(performance.now() - duration),
          duration_ms: hundredths(duration),
          failed: Exit.isFailure(exit)
        })
      }
      return span
    }
  })
}

/** The run's tracer when HOST_DEBUG names a `spans` file; otherwise nothing changes. */
export const spansLayer = (settings: DebugSettings = {}): Layer.Layer<never> => {
  const file = settings.spans
  return file === undefined ? Layer.empty : Layer.unwrapEffect(Effect.map(Effect.tracer, (base) => Layer.setTracer(spanFileTracer(file, base))))
}
