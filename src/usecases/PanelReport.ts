import { FileSystem, Path } from "@effect/platform"
import { Effect, Option } from "effect"
import { frameworkVersion, HostConfig } from "../config/HostConfig.js"
import { type DetectedPanel, type IncludeState, PanelInstall, type PanelProbe, PanelRootUnset } from "../panel/PanelInstall.js"
import { type PanelStatusFile, readPanelStatus } from "../panel/PanelStatusFile.js"
import { readPanelStats } from "../runtime/ReplicaFiles.js"

// How Host stands with the real panel it is installed into (docs/panels.md): the read model of
// `host panel:status` and of the Panel part of `host status`.

/** The panel folder from the flag (relative to the current folder), else panel.root (relative to Host's root). */
export const resolvePanelRoot = (flag: Option.Option<string>) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const { config, paths } = yield* HostConfig
    if (Option.isSome(flag)) return path.resolve(flag.value)
    if (config.panel.root !== "") return path.resolve(paths.root, config.panel.root)
    return yield* new PanelRootUnset()
  })

export interface PanelReport {
  readonly driver: string
  readonly panel: DetectedPanel | null
  readonly include: IncludeState | null
  readonly answers: PanelProbe | null
  readonly snippets: ReadonlyArray<string>
  readonly selfHeal: NonNullable<PanelStatusFile["selfHeal"]> | null
  readonly identityCache: { readonly hits: number; readonly misses: number; readonly panelRequests: number } | null
  readonly problem: string | null
}

/** How Host stands with the real panel (for `host panel:status` and the Panel part of `host status`). */
export const panelReport = (flag: Option.Option<string> = Option.none()) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const { config, paths } = yield* HostConfig
    const install = yield* PanelInstall
    const status = Option.getOrUndefined(yield* readPanelStatus(paths.storage))
    const snippetFolder = path.join(paths.storage, "webserver")
    const snippets = (yield* fs.readDirectory(snippetFolder).pipe(Effect.orElseSucceed(() => [] as Array<string>)))
      .filter((name) => name.endsWith(".conf"))
      .sort()
      .map((name) => path.join(snippetFolder, name))
    const base = {
      driver: config.panel.driver,
      snippets,
      selfHeal: status?.selfHeal ?? null,
      // Written by the server's panel driver (storage/host/replica/panel.json, docs/panels.md "Drivers").
      identityCache: Option.getOrNull(Option.map(yield* readPanelStats, ({ identity_cache: cache }) => ({
        hits: cache.hits,
        misses: cache.misses,
        panelRequests: cache.panel_requests
      })))
    }
    const rootOutcome = yield* Effect.either(resolvePanelRoot(flag))
    if (rootOutcome._tag === "Left") {
      return { ...base, panel: null, include: null, answers: null, problem: config.panel.driver === "embedded" ? null : rootOutcome.left.message } satisfies PanelReport
    }
    const detected = yield* Effect.either(install.detect(rootOutcome.right))
    const answers = config.panel.url === "" ? null : yield* install.probe(config.panel.url)
    if (detected._tag === "Left") return { ...base, panel: null, include: null, answers, problem: detected.left.message } satisfies PanelReport
    const include = yield* install.inspect(detected.right, frameworkVersion)
    return { ...base, panel: detected.right, include, answers, problem: null } satisfies PanelReport
  })

