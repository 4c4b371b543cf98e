import { Effect, Either, Option } from "effect"
import type { Actor } from "../domain/Installed.js"
import * as RegistryUpdates from "../lifecycle/RegistryUpdates.js"
import { SourceSpec } from "../lifecycle/Source.js"
import { Lifecycle } from "../lifecycle/Lifecycle.js"
import { LiveRuntime } from "../runtime/LiveState.js"
import { addExtension, pinnedFor, pinnedUpdateFor, removeExtension, setEnabled } from "./ExtensionOperations.js"
import { serverLockWaitSeconds } from "./FrontDoor.js"
import type { AvailableUpdate, UpdateOutcome } from "./Views.js"
// The operations the admin API runs: those of ./ExtensionOperations.ts (which the CLI runs) with the
// admin as actor, plus one thing: after a change the server's runtime swaps to a new
// generation before the answer goes out, so the next request sees it (docs/http.md "Runtime generations,
// quarantine, live state"); a CLI process has no runtime to swap.

/** An admin waits this long (seconds) for another operation's lock: the one rule of ./FrontDoor.ts. */
export const adminLockTimeout = serverLockWaitSeconds

/** After a change: swap the runtime now, so the next request sees it. */
export const swapRuntime = Effect.flatMap(LiveRuntime, (runtime) => runtime.refresh())

const thenSwap = <A, E, R>(change: Effect.Effect<A, E, R>) => Effect.tap(change, () => swapRuntime)

/**
 * An uploaded archive, already received into its own folder: as a file the lifecycle reads, or as the
 * tree the upload worker unpacked from it after judging it (staged without inspecting it again).
 */
export type UploadSource = Extract<SourceSpec, { readonly _tag: "Upload" | "StagedUpload" }>

export interface InstallFlags {
  readonly force: boolean
  readonly disabled: boolean
  readonly noMigrate: boolean
}

/** `POST extensions`: installs an uploaded archive. */
export const installUpload = (upload: UploadSource, flags: InstallFlags, actor: Actor) =>
  thenSwap(addExtension(upload, { actor, ...flags, lockTimeout: adminLockTimeout }))

/**
 * `POST registry/install {id, version?}`: installs an extension (a chosen version) from the registry,
 * pinned first as `host add` pins it (./ExtensionOperations.ts `pinned`).
 */
export const installFromRegistry = (
  request: { readonly id: string; readonly version?: string | undefined; readonly registry?: string | undefined },
  actor: Actor
) =>
  Effect.flatMap(
    pinnedFor("add", request.id, SourceSpec.Registry({ id: request.id, range: request.version, registry: request.registry })),
    (source) =>
      Effect.flatMap(Lifecycle, (lifecycle) =>
        thenSwap(lifecycle.add(source, { actor, expectedId: request.id, lockTimeout: adminLockTimeout })))
  )

/** `update` from an uploaded archive. */
export const updateFromUpload = (id: string, upload: UploadSource, force: boolean, actor: Actor) =>
  Effect.flatMap(Lifecycle, (lifecycle) => thenSwap(lifecycle.update(id, upload, { actor, lockTimeout: adminLockTimeout, force })))

/**
 * `update` from the registry: the latest version, or the one asked for (asking by name is the force: it may
 * be older), pinned in the registry `host update` resolves it in (./ExtensionOperations.ts `pinnedUpdateFor`).
 */
export const updateFromRegistry = (id: string, version: string | undefined, actor: Actor) =>
  Effect.flatMap(pinnedUpdateFor(id, version), (source) =>
    Effect.flatMap(Lifecycle, (lifecycle) =>
      thenSwap(lifecycle.update(id, source, { actor, lockTimeout: adminLockTimeout, force: version !== undefined }))))

export interface OperationFlags {
  readonly force: boolean
  readonly keepData: boolean
}

/** `enable`, `disable` or `remove` of an installed extension. */
export const toggleOrRemove = (operation: "enable" | "disable" | "remove", id: string, flags: OperationFlags, actor: Actor) =>
  thenSwap(
    operation === "remove"
      ? removeExtension(id, { actor, force: flags.force, keepData: flags.keepData, lockTimeout: adminLockTimeout })
      : setEnabled(operation, id, { actor, force: flags.force, lockTimeout: adminLockTimeout })
  )

/** `GET updates`: the extensions installed from the registry that it has a newer version of. */
export const availableUpdates = Effect.map(
  RegistryUpdates.checkUpdates(Option.none()),
  ({ updates }): ReadonlyArray<AvailableUpdate> => updates
)

/** `POST updates`: updates every extension installed from the registry; one failure does not stop the rest. */
export const updateAll = (actor: Actor) =>
  thenSwap(RegistryUpdates.updateAll({ actor, lockTimeout: adminLockTimeout })).pipe(
    Effect.map((outcomes): ReadonlyArray<UpdateOutcome> => outcomes.map(Either.merge))
  )
