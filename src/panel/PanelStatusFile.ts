import { FileSystem, Path } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { writeFileAtomic } from "../system/AtomicFile.js"

// `storage/host/panel-status.json`: what `host serve` knows about the real panel, for `host panel:status`
// and `host status` to read (docs/panels.md, "Upgrading the panel"): the self-heal's counts. (The driver's
// identity-cache counters are the replica's own file, storage/host/replica/panel.json.)

const Count = Schema.Int.pipe(Schema.nonNegative())

export const SelfHealReport = Schema.Struct({
  enabled: Schema.Boolean,
  /** How often the include was checked since the server started. */
  checks: Count,
  /** How often it was missing or different and was put back (since the file was first written). */
  heals: Count,
  lastCheckAt: Schema.NullOr(Schema.String),
  lastHealAt: Schema.NullOr(Schema.String),
  /** The include's state at the last check: intact, absent, modified, tampered (never written), error. */
  lastState: Schema.String,
  lastError: Schema.NullOr(Schema.String)
})
export type SelfHealReport = typeof SelfHealReport.Type

export const PanelStatusFile = Schema.Struct({
  updatedAt: Schema.String,
  pid: Schema.optional(Schema.Int),
  selfHeal: Schema.optional(SelfHealReport)
})
export type PanelStatusFile = typeof PanelStatusFile.Type

const decode = Schema.decodeUnknownOption(Schema.parseJson(PanelStatusFile))

export const panelStatusPath = (storage: string, path: Path.Path) => path.join(storage, "panel-status.json")

/** The file's content, or none when it is missing or not in this shape. */
export const readPanelStatus = (storage: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const text = yield* fs.readFileString(panelStatusPath(storage, path)).pipe(Effect.option)
    return Option.flatMap(text, (t) => decode(t))
  })

/**
 * Rewrites the file with `update` applied (through a temporary file and a rename). Keys this schema does
 * not know (another writer's) are kept as they were.
 */
export const updatePanelStatus = (storage: string, update: (current: Option.Option<PanelStatusFile>) => PanelStatusFile) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const file = panelStatusPath(storage, path)
    const raw = yield* fs.readFileString(file).pipe(
      Effect.flatMap((text) => Effect.try(() => JSON.parse(text) as unknown)),
      Effect.map((parsed) => (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? parsed as Record<string, unknown> : {})),
      Effect.orElseSucceed(() => ({}) as Record<string, unknown>)
    )
    const next = { ...raw, ...update(yield* readPanelStatus(storage)) }
    yield* writeFileAtomic(file, `${JSON.stringify(next, null, 2)}\n`)
  })
