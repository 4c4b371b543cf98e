import { FileSystem, Path } from "@effect/platform"
import { Clock, DateTime, Duration, Effect, Option, Schedule } from "effect"
import { frameworkVersion, HostConfig } from "../config/HostConfig.js"
import { bundleRoutes } from "../domain/Slots.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { filamentCacheClear, PanelInstall } from "./PanelInstall.js"
import { type SelfHealReport, updatePanelStatus } from "./PanelStatusFile.js"
import { isPluginDataFile, type PelicanExtensionFacts } from "./pelican-plugin/templates.js"

// `host serve`'s self-heal (docs/panels.md, "Upgrading the panel"): a panel upgrade unpacks the stock
// files over the panel's folder, which takes Host's block (or plugin) away. With a real panel driver and
// `panel.self_heal` the server checks at start and every interval and writes back exactly what
// `host panel:install` writes; markers someone broke by hand are reported, never rewritten.

/**
 * What the Pelican plugin's data files are made of (panel/pelican-plugin/templates.ts): every installed
 * extension's `backend.permissions` and the pages its built bundle registers (a bundle that cannot be read
 * registers none).
 */
export const installedExtensionFacts = Effect.gen(function*() {
  const { paths } = yield* HostConfig
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const installed = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.list)
  return yield* Effect.forEach(installed, (extension) => {
    if (extension.manifest._tag !== "Decoded") return Effect.succeed([])
    const manifest = extension.manifest.manifest
    const bundle = manifest.document.frontend?.bundle
    const routes = bundle === undefined || !extension.enabled
      ? Effect.succeed([])
      : fs.readFileString(path.join(paths.extensions, ...extension.extensionId.split("/"), bundle)).pipe(
        Effect.map(bundleRoutes),
        Effect.orElseSucceed(() => [])
      )
    return Effect.map(routes, (routes): ReadonlyArray<PelicanExtensionFacts> => [{
      extensionId: extension.extensionId,
      name: extension.name,
      enabled: extension.enabled,
      permissions: manifest.permissions,
      routes
    }])
  }).pipe(Effect.map((facts) => facts.flat()))
})

const now = Effect.map(Clock.currentTimeMillis, (millis) => DateTime.formatIso(DateTime.unsafeMake(millis)))

/** One check: puts the include back when it is missing or different, and records the result. */
export const selfHealOnce = Effect.gen(function*() {
  const { config, paths } = yield* HostConfig
  const install = yield* PanelInstall
  const checkedAt = yield* now
  const outcome = yield* Effect.gen(function*() {
    const panel = yield* install.detect(config.panel.root)
    const changes = yield* install.panelChanges(panel, { hostVersion: frameworkVersion, extensions: yield* installedExtensionFacts, healing: true })
    const pending = changes.filter((change) => change.action !== "unchanged")
    if (pending.length === 0) return { state: "intact", healed: false, error: null }
    // The plugin comes back enabled without `p:plugin:install`; rewritten code needs Filament's component cache
    // cleared, or the panel keeps registering none of its pages (docs/panels.md "Upgrading the panel").
    const commands = panel.kind === "pelican" && pending.some((change) => !isPluginDataFile(change.path)) ? [filamentCacheClear] : []
    const plan = { panel, changes, removeFolder: undefined, commands }
    yield* install.apply(plan)
    for (const run of yield* install.runCommands(plan, process.env)) {
      if (!run.ran) yield* Effect.logWarning(`panel: run \`${run.command}\` in ${panel.root} (php or the panel's artisan is not here)`)
      else if (run.exitCode !== 0) yield* Effect.logWarning(`panel: \`${run.command}\` exited with ${run.exitCode}: ${run.output}`)
    }
    // Changed data files alone are a refresh (extensions changed), not a heal.
    const healed = pending.some((change) => !isPluginDataFile(change.path))
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
