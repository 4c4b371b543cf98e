import { Clock, Effect, Stream } from "effect"
import { mkdirSync, watch, writeFileSync, renameSync } from "node:fs"
import { join } from "node:path"

// The nudge from `host dev --watch` to a running `host serve` on the same panel root (docs/authoring.md,
// "Dev loop"). The dev process records the change in the database first (the linked extension's
// updated_at), then rewrites `storage/host/dev-signal`; the server watches that folder with the
// kernel's file notification and re-reads the state at once, instead of at its next poll. Only
// someone who can write the panel's storage can send it, and all it does is make the server look now
// at what it would have seen at its next poll anyway.

export const devSignalName = "dev-signal"

/** Tells a server watching `storage` to re-read the installed state now. */
export const sendDevSignal = (storage: string) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.sync(() => {
      mkdirSync(storage, { recursive: true })
      const temporary = join(storage, `.${devSignalName}.${process.pid}`)
      writeFileSync(temporary, `${now}\n`)
      renameSync(temporary, join(storage, devSignalName))
    }))

/** One element per signal received (bursts are not merged: each is a cheap re-read). Ends never. */
export const devSignals = (storage: string): Stream.Stream<void> =>
  Stream.asyncScoped<void>((emit) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        mkdirSync(storage, { recursive: true })
        const watcher = watch(storage, (_event, file) => {
          if (file !== null && String(file) === devSignalName) void emit.single(undefined)
        })
        watcher.on("error", () => undefined)
        return watcher
      }),
      (watcher) => Effect.sync(() => watcher.close())
    )
  )
