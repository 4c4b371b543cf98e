import { FileSystem } from "@effect/platform"
import { Data, Effect, Either, Schema } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import { statIfExists } from "../config/LocalFiles.js"

// The marker an interrupted `framework:uninstall --confirm` leaves, kept apart from the uninstall itself so
// that every command can check it before opening the database without loading the lifecycle code
// (cold start, docs/architecture.md).

/** A confirmed uninstall was cut short: only `framework:uninstall --confirm` may run until it is finished. */
export class UninstallInterrupted extends Data.TaggedError("UninstallInterrupted")<{
  readonly marker: string
  readonly startedAt: string
}> {
  override get message() {
    return `a framework:uninstall started at ${this.startedAt} was interrupted (${this.marker} exists); ` +
      "the panel is half removed\nhint: run host framework:uninstall --confirm to finish it"
  }
}

export const Marker = Schema.Struct({ startedAt: Schema.String, keepData: Schema.Boolean })

export const markerFile = Effect.map(HostConfig, ({ paths }) => `${paths.storage}/uninstall.json`)

/** Fails with UninstallInterrupted while an interrupted uninstall's marker exists. */
export const refuseWhileUninstalling = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const marker = yield* markerFile
  if ((yield* statIfExists(marker)) === undefined) return
  const text = yield* fs.readFileString(marker).pipe(Effect.orElseSucceed(() => ""))
  const decoded = Schema.decodeUnknownEither(Schema.parseJson(Marker))(text)
  return yield* new UninstallInterrupted({ marker, startedAt: Either.isRight(decoded) ? decoded.right.startedAt : "an unknown time" })
})

