import { FileSystem, Path } from "@effect/platform"
import { Context, Effect, Option, Schema } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import type { InstalledExtension } from "../domain/Installed.js"
import { writeFileAtomic } from "../system/AtomicFile.js"

// What the live runtime asks of this root's files before it builds a generation (docs/operations.md
// "Running replicas"): bring the installed trees to the records. The work (unpacking archives, fetching
// registry sources) is the lifecycle's (lifecycle/Converge.ts); the runtime only needs its answer, and
// writes down what this replica could not get (`storage/host/replica/state.json`) for `host status`.

export interface ConvergeOutcome {
  /** Extensions whose tree was put in place or removed now (their loaded modules are stale). */
  readonly changed: ReadonlyArray<string>
  /** Enabled extensions this root cannot get, with the reason: unavailable here, served elsewhere. */
  readonly unavailable: ReadonlyMap<string, string>
  /** True when another process on this host held the operation lock, so nothing was touched: try again soon. */
  readonly deferred: boolean
}

export class ReplicaFiles extends Context.Tag("host/runtime/ReplicaFiles")<ReplicaFiles, {
  /** Converges the trees of `installed` (the records, as just read) on this root. Never fails: problems are reasons. */
  readonly converge: (installed: ReadonlyArray<InstalledExtension>) => Effect.Effect<ConvergeOutcome>
}>() {}

/** `storage/host/replica`: this root's own replica state (tree marks, unpacking, the server's report). */
export const replicaDirectory = Effect.map(HostConfig, ({ paths }) => `${paths.storage}/replica`)

/** What the server on this root last reported: its pid, the state generation it converged to, and what it lacks. */
export const ReplicaReport = Schema.Struct({
  pid: Schema.Number,
  state_generation: Schema.Number,
  runtime_generation: Schema.Number,
  updated_at: Schema.String,
  unavailable: Schema.Array(Schema.Struct({ id: Schema.String, reason: Schema.String }))
})
export type ReplicaReport = typeof ReplicaReport.Type

const reportFile = Effect.flatMap(Path.Path, (path) => Effect.map(replicaDirectory, (directory) => path.join(directory, "state.json")))

export const writeReplicaReport = (report: ReplicaReport) =>
  Effect.gen(function*() {
    const file = yield* reportFile
    yield* writeFileAtomic(file, JSON.stringify(report, null, 2))
  })

/** The report of the server on this root, if one ever ran here. */
export const readReplicaReport = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const text = yield* Effect.option(fs.readFileString(yield* reportFile))
  return Option.flatMap(text, Schema.decodeUnknownOption(Schema.parseJson(ReplicaReport)))
})

/**
 * A real panel's identity-cache counters as the server on this root last wrote them
 * (`storage/host/replica/panel.json`, docs/panels.md "Identity cache counters"), for `host panel:status`.
 */
export const PanelStatsReport = Schema.Struct({
  pid: Schema.Number,
  driver: Schema.String,
  identity_cache: Schema.Struct({ hits: Schema.Number, misses: Schema.Number, panel_requests: Schema.Number }),
  updated_at: Schema.String
})
export type PanelStatsReport = typeof PanelStatsReport.Type

/**
 * One JSON file of this root's replica folder that the server writes and the CLI reads: written whole
 * (temporary file, then rename), read as `Option` (missing or not in its shape: none).
 */
const replicaJsonFile = <A, I>(name: string, schema: Schema.Schema<A, I>) => {
  const file = Effect.flatMap(Path.Path, (path) => Effect.map(replicaDirectory, (directory) => path.join(directory, name)))
  const encode = Schema.encodeSync(Schema.parseJson(schema))
  const write = (value: A) =>
    Effect.gen(function*() {
      const target = yield* file
      yield* writeFileAtomic(target, encode(value))
    })
  const read = Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* Effect.option(fs.readFileString(yield* file))
    return Option.flatMap(text, Schema.decodeUnknownOption(Schema.parseJson(schema)))
  })
  return { write, read } as const
}

const panelStats = replicaJsonFile("panel.json", PanelStatsReport)

export const writePanelStats = panelStats.write

/** The counters the server on this root last wrote, if it runs a real panel driver. */
export const readPanelStats = panelStats.read

/**
 * The open `/api/client/host/events` streams of the server on this root (docs/http.md "Live updates:
 * caps"), written by the server when the count changes (at most about once a second) for `host status`.
 * A file of its own beside `state.json`, so the count changing often never rewrites the replica report.
 */
export const EventStreamsReport = Schema.Struct({
  pid: Schema.Number,
  open: Schema.Number,
  cap: Schema.Number,
  per_user: Schema.Number,
  updated_at: Schema.String
})
export type EventStreamsReport = typeof EventStreamsReport.Type

const eventStreams = replicaJsonFile("streams.json", EventStreamsReport)

export const writeEventStreamsReport = eventStreams.write

export const readEventStreamsReport = eventStreams.read
