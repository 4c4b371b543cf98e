import { FileSystem, Path } from "@effect/platform"
import { Duration, Effect, Either, Option } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import { type Actor, type ExtensionSource, manifestOf } from "../domain/Installed.js"
import type { PlanAction } from "../domain/PlanFormat.js"
import { Progress } from "../kernel/Events.js"
import { Lifecycle } from "../lifecycle/Lifecycle.js"
import { ModuleLoader } from "../kernel/ModuleLoader.js"
import { SourceSpec } from "../lifecycle/Source.js"
import { Panel } from "../panel/Panel.js"
import { bootForCli, criticalFailures, extensionHealth } from "../runtime/Backend.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { CoreRows } from "../store/CoreRows.js"
import { uuid } from "../system/Ids.js"
import { HealthGateFailed } from "./Errors.js"

// Health gates (docs/operations.md#health-gates): after an install or update (with the configure and
// enable that follow it), the extension is booted and its critical health checks run; a failing one
// takes the step back — an update to the previous tree and migrations, an install removed — before the
// plan goes on to anything that depends on it. The previous tree is copied aside before an update and
// kept until its gate has run.

/** How long one extension's health checks may take (as `status --health`). */
export const healthGateTimeout = Duration.seconds(5)

/** Where the previous tree of an extension about to be updated was copied, and where it came from. */
export interface Snapshot {
  readonly copy: string
  readonly source: ExtensionSource
}

/** An extension whose actions just ended, waiting for its gate. */
export interface Gate {
  readonly action: PlanAction
  readonly snapshot: Option.Option<Snapshot>
  /** The version before the step (null: it was an install). */
  readonly previous: string | null
  /** The migrations the step ran (rolled back if it is taken back). */
  readonly migrations: ReadonlyArray<string>
}

const snapshotPrefix = "health-gate-"

/** What the gate reads: the installed records, the files, and what booting the extensions needs. */
type GateContext = FileSystem.FileSystem | Path.Path | HostConfig | ExtensionsRepo | CoreRows | Panel | ModuleLoader

/** The critical checks an installed extension declares (none: no gate). */
const criticalChecks = (id: string) =>
  Effect.map(Effect.flatMap(ExtensionsRepo, (repo) => repo.find(id)), Option.match({
    onNone: () => ({ enabled: false, critical: [] as ReadonlyArray<string> }),
    onSome: (record) => ({
      enabled: record.enabled,
      critical: (manifestOf(record)?.document.health?.checks ?? [])
        .filter((check) => check.severity === "critical")
        .map((check) => check.id)
    })
  }))

/** Boots the enabled extensions and runs `id`'s health checks: the failing critical ones, described. */
const gateFailures = (id: string) =>
  Effect.gen(function*() {
    const generation = yield* bootForCli
    const loaded = generation.extensions.get(id)
    if (loaded === undefined) {
      return [`it did not boot: ${generation.quarantined.get(id) ?? "it is not running"}`]
    }
    const health = yield* extensionHealth(loaded, healthGateTimeout)
    const failing = new Set(criticalFailures([health]))
    return health.checks
      .filter((check) => failing.has(`${id} ${check.id}`))
      .map((check) => `critical check ${check.id} (${check.label}) is ${check.status}${check.message === null ? "" : `: ${check.message}`}`)
  }).pipe(Effect.catchAll((error) => Effect.succeed([`its health checks could not run: ${error.message}`])))

/** The previous tree of an extension about to be updated, kept until its gate passes. */
const snapshot = (id: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const { paths } = yield* HostConfig
    const installed = path.join(paths.extensions, ...id.split("/"))
    if (!(yield* fs.exists(installed))) return Option.none<Snapshot>()
    const record = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.find(id))
    if (Option.isNone(record)) return Option.none<Snapshot>()
    const copy = path.join(paths.staging, `${snapshotPrefix}${yield* uuid}`)
    yield* fs.makeDirectory(paths.staging, { recursive: true })
    yield* fs.copy(installed, copy)
    return Option.some<Snapshot>({ copy, source: record.value.source })
  }).pipe(Effect.orElseSucceed(() => Option.none<Snapshot>()))

/** Drops a kept tree (best effort: a leftover is dropped by the next run's `dropSnapshots`). */
const discard = (kept: Option.Option<Snapshot>) =>
  Option.match(kept, {
    onNone: () => Effect.void,
    onSome: ({ copy }) => Effect.flatMap(FileSystem.FileSystem, (fs) => fs.remove(copy, { recursive: true, force: true })).pipe(Effect.ignore)
  })

/** Drops the previous trees a crashed run may have left (held under the lock). */
const dropSnapshots = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const { paths } = yield* HostConfig
  if (!(yield* fs.exists(paths.staging))) return
  for (const name of yield* fs.readDirectory(paths.staging)) {
    if (name.startsWith(snapshotPrefix)) yield* fs.remove(path.join(paths.staging, name), { recursive: true, force: true })
  }
}).pipe(Effect.ignore)

/** Takes the gated step back; says how it ended, in the words the failure message uses. */
const takeBack = (lifecycle: Lifecycle, gate: Gate, context: Readonly<Record<string, unknown>>, actor: Actor) => {
  const { action } = gate
  const undo = action.type === "install" || gate.previous === null || Option.isNone(gate.snapshot)
    ? Effect.as(lifecycle.remove(action.id, { actor, context, force: true }), "it was removed")
    : Effect.as(
      lifecycle.update(action.id, SourceSpec.Directory({ path: gate.snapshot.value.copy }), {
        actor,
        context,
        force: true,
        revertMigrations: gate.migrations,
        recordSource: gate.snapshot.value.source
      }),
      `it was rolled back to ${gate.previous}`
    )
  return Effect.map(Effect.either(undo), Either.getOrElse((error) => `rolling it back failed too: ${error.message}`))
}

/**
 * Runs the gate of the extension whose actions just ended: None when it passes (or declares no critical
 * check), else the failure, after the step was taken back.
 */
const runGate = (lifecycle: Lifecycle, gate: Gate, context: Readonly<Record<string, unknown>>, actor: Actor) =>
  Effect.gen(function*() {
    const { action } = gate
    const declared = yield* criticalChecks(action.id)
    if (!declared.enabled || declared.critical.length === 0) return Option.none<HealthGateFailed>()
    yield* Effect.flatMap(Effect.serviceOption(Progress), Option.match({
      onNone: () => Effect.void,
      onSome: (progress) => progress.step(`health gate: ${action.id} (${declared.critical.join(", ")})`)
    }))
    const failures = yield* gateFailures(action.id)
    if (failures.length === 0) return Option.none<HealthGateFailed>()
    const outcome = yield* takeBack(lifecycle, gate, { ...context, reason: "health gate", health_gate: failures }, actor)
    return Option.some(new HealthGateFailed({ extensionId: action.id, failures, outcome }))
  })

/** The gate as a service: its methods read through the services the layer was built with. */
export class HealthGate extends Effect.Service<HealthGate>()("host/reconcile/HealthGate", {
  effect: Effect.gen(function*() {
    const lifecycle = yield* Lifecycle
    const context = yield* Effect.context<GateContext>()
    return {
      run: (gate: Gate, activity: Readonly<Record<string, unknown>>, actor: Actor) =>
        runGate(lifecycle, gate, activity, actor).pipe(Effect.provide(context)),
      snapshot: (id: string) => snapshot(id).pipe(Effect.provide(context)),
      discard: (kept: Option.Option<Snapshot>) => discard(kept).pipe(Effect.provide(context)),
      dropSnapshots: dropSnapshots.pipe(Effect.provide(context))
    } as const
  })
}) {}
