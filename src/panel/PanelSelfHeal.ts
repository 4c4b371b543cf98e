import { Clock, DateTime, Duration, Effect, Option, Schedule } from "effect"
import { frameworkVersion, HostConfig } from "../config/HostConfig.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { PanelInstall } from "./PanelInstall.js"
import { pelicanPermissionName } from "./PelicanNames.js"
import { type SelfHealReport, updatePanelStatus } from "./PanelStatusFile.js"

// `host serve`'s self-heal (docs/panels.md, "Upgrading the panel"): a panel upgrade unpacks the stock
// files over the panel's folder, which takes Host's block (or plugin) away. With a real panel driver and
// `panel.self_heal` the server checks at start and every interval and writes back exactly what
// `host panel:install` writes; markers someone broke by hand are reported, never rewritten.

/**
 * Every installed extension's `backend.permissions` under the names the Pelican plugin registers them as
 * subuser permissions (panel/PelicanNames.ts: `host.<vendor>-<name>.<permission>`).
 */
export const installedPermissions = Effect.map(
  Effect.flatMap(ExtensionsRepo, (repo) => repo.list),
  (installed) =>
    [
      ...new Set(installed.flatMap((extension) =>
        extension.manifest._tag === "Decoded"
          ? extension.manifest.manifest.permissions.map((permission) => pelicanPermissionName(extension.extensionId, permission))
          : []
      ))
    ].sort()
)

const now = Effect.map(Clock.currentTimeMillis, (millis) => DateTime.formatIso(DateTime.unsafeMake(millis)))

/** One check: puts the include back when it is missing or different, and records the result. */
export const selfHealOnce = Effect.gen(function*() {
  const { config, paths } = yield* HostConfig
  const install = yield* PanelInstall
  const checkedAt = yield* now
  const outcome = yield* Effect.gen(function*() {
    const panel = yield* install.detect(config.panel.root)
    const changes = yield* install.panelChanges(panel, { hostVersion: frameworkVersion, permissions: yield* installedPermissions, healing: true })
    const pending = changes.filter((change) => change.action !== "unchanged")
    if (pending.length === 0) return { state: "intact", healed: false, error: null }
    yield* install.apply({ panel, changes, removeFolder: undefined, commands: [] })
    // A changed permissions.json alone is a refresh (extensions changed), not a heal.
    const healed = pending.some((change) => !change.path.endsWith("permissions.json"))
    if (healed) {
      yield* Effect.logWarning(
        `panel: Host's include was missing or changed in ${panel.root} (${pending.map((c) => c.path).join(", ")}); put back`
      )
    }
    return { state: healed ? "healed" : "intact", healed, error: null }
  }).pipe(
    Effect.catchTags({
      PanelMarkersTampered: (error) =>
        Effect.as(Effect.logWarning(`panel: ${error.message}`), { state: "tampered", healed: false, error: error.message }),
      NotHostPlugin: (error) =>
        Effect.as(Effect.logWarning(`panel: ${error.message}`), { state: "tampered", healed: false, error: error.message })
    }),
    Effect.catchAll((error) =>
      Effect.as(Effect.logWarning(`panel: self-heal check failed: ${error.message}`), { state: "error", healed: false, error: error.message })
    )
  )
  yield* updatePanelStatus(paths.storage, (current) => {
    const previous: SelfHealReport | undefined = Option.getOrUndefined(current)?.selfHeal
    const selfHeal: SelfHealReport = {
      enabled: true,
      checks: (previous?.checks ?? 0) + 1,
      heals: (previous?.heals ?? 0) + (outcome.healed ? 1 : 0),
      lastCheckAt: checkedAt,
      lastHealAt: outcome.healed ? checkedAt : previous?.lastHealAt ?? null,
      lastState: outcome.state,
      lastError: outcome.error
    }
    return { ...Option.getOrElse(current, () => ({})), updatedAt: checkedAt, pid: process.pid, selfHeal }
  }).pipe(Effect.catchAll((error) => Effect.logWarning(`panel: cannot write panel-status.json: ${error.message}`)))
  return outcome
})

/** The default interval between checks. */
export const selfHealInterval = Duration.minutes(5)

/** Checks now and then every `interval`, forever (forked by `host serve`). */
export const selfHealLoop = (interval: Duration.Duration) =>
  Effect.repeat(selfHealOnce, Schedule.spaced(interval)).pipe(Effect.asVoid)
