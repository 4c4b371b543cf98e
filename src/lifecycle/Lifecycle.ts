import { FileSystem, Path } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ArtifactStore } from "../archive/ArtifactStore.js"
import { Faults } from "../config/Debug.js"
import { HostConfig } from "../config/HostConfig.js"
import type { Actor } from "../domain/Installed.js"
import { Panel } from "../panel/Panel.js"
import { Registry } from "../registry/Registry.js"
import { ActivityRepo } from "../store/ActivityRepo.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { MigrationsRepo } from "../store/MigrationsRepo.js"
import { OperationLocks } from "../store/OperationLock.js"
import { SettingsRepo } from "../store/SettingsRepo.js"
import { StateGeneration } from "../store/StateGeneration.js"
import { LifecycleEvents } from "../kernel/Events.js"
import { recover } from "./FileSwitch.js"
import { ModuleLoader } from "../kernel/ModuleLoader.js"
import { type OperationOptions, withLockHeld } from "./Operation.js"
import { configure } from "./operations/Configure.js"
import { toggle, type ToggleOptions } from "./operations/EnableDisable.js"
import { add, type AddOptions, update } from "./operations/Install.js"
import { pruneArtifacts } from "./operations/PruneArtifacts.js"
import { refreshLink } from "./operations/RefreshLink.js"
import { remove, type RemoveOptions } from "./operations/Remove.js"
import type { SourceSpec } from "./Source.js"

// The lifecycle service (docs/architecture.md "One install"): the operations that change what is
// installed, each all-or-nothing under the operation lock:
// stage → check → [one transaction: migrate → switch files → record + activity] → clean up → event.
// A failure rolls the transaction back and puts the files back; a crash is finished or rolled back by
// `recover` from the journal (committed means: the activity row carrying the operation id exists).
// What the operations share is in Operation.ts; each operation's steps are in operations/. This file
// only gathers the services they read and hands every method a closed effect.

export { HeldOperationLock, type OperationOptions, type OperationResult } from "./Operation.js"
export type { AddOptions } from "./operations/Install.js"
export type { RemoveOptions } from "./operations/Remove.js"
export type { ToggleOptions } from "./operations/EnableDisable.js"
export type { RecoveryOutcome } from "./FileSwitch.js"
export type { LifecycleFailure } from "./Errors.js"

/** The services the operations read; the layer supplies them, so a method needs nothing from its caller. */
type OperationContext =
  | FileSystem.FileSystem
  | Path.Path
  | HostConfig
  | SqlClient.SqlClient
  | ExtensionsRepo
  | SettingsRepo
  | MigrationsRepo
  | ActivityRepo
  | OperationLocks
  | StateGeneration
  | LifecycleEvents
  | Panel
  | ModuleLoader
  | Faults
  | ArtifactStore
  | Registry

export class Lifecycle extends Effect.Service<Lifecycle>()("host/Lifecycle", {
  effect: Effect.gen(function*() {
    const context = yield* Effect.context<OperationContext>()
    // The caller's own services (Progress, a HeldOperationLock) stay visible: providing merges.
    const closed = <A, E>(effect: Effect.Effect<A, E, OperationContext>) => Effect.provide(effect, context)

    return {
      add: (spec: SourceSpec, options: AddOptions) => closed(add(spec, options)),
      update: (id: string, spec: SourceSpec, options: Omit<AddOptions, "expectedId">) => closed(update(id, spec, options)),
      enable: (id: string, options: ToggleOptions) => closed(toggle("enable", id, options)),
      disable: (id: string, options: ToggleOptions) => closed(toggle("disable", id, options)),
      remove: (id: string, options: RemoveOptions) => closed(remove(id, options)),
      /** Re-reads a dev-linked folder (manifest, new migrations) and bumps its record; see operations/RefreshLink.ts. */
      refreshLink: (id: string, options: OperationOptions) => closed(refreshLink(id, options)),
      configure: (id: string, values: Readonly<Record<string, unknown>>, options: OperationOptions) =>
        closed(configure(id, values, options)),
      /** Runs `effect` holding the operation lock; lifecycle operations inside it do not take it again. */
      withLock: <A, E, R>(operation: string, options: OperationOptions, effect: Effect.Effect<A, E, R>) =>
        withLockHeld(operation, options, effect).pipe(Effect.provide(context)),
      recover: (actor: Actor) => closed(recover(actor)),
      pruneArtifacts: (options: OperationOptions) => closed(pruneArtifacts(options))
    } as const
  })
}) {}
