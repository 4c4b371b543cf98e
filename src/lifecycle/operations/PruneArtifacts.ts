import { Effect } from "effect"
import { ArtifactStore } from "../../archive/ArtifactStore.js"
import { ExtensionsRepo } from "../../store/ExtensionsRepo.js"
import { type OperationOptions, withLockHeld } from "../Operation.js"

/**
 * Drops every artifact no installed record references (kept by plans never applied, or left by a
 * crash between commit and clean-up) and the temporary files of puts older than an hour, under the
 * lock so that no install records one meanwhile (docs/operations.md "Artifacts").
 */
export const pruneArtifacts = (options: OperationOptions) =>
  withLockHeld(
    "artifacts:prune",
    options,
    Effect.gen(function*() {
      const artifacts = yield* ArtifactStore
      const referenced = new Set((yield* Effect.flatMap(ExtensionsRepo, (extensions) => extensions.list)).map((record) => record.source.sha256))
      const stored = yield* artifacts.list
      const removed = stored.filter((artifact) => !referenced.has(artifact.sha256))
      for (const artifact of removed) yield* artifacts.remove(artifact.sha256)
      const temporary = yield* artifacts.sweepTemporary(60 * 60 * 1000)
      return { removed, kept: stored.length - removed.length, temporary }
    })
  )
