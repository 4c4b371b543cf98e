import { FileSystem, Path } from "@effect/platform"
import { Data, Effect, Option, Stream } from "effect"
import {
  type BuildResult,
  buildTarget,
  entryCandidates,
  formatBuildMessage,
  frontendBuildContext,
  type FrontendTarget,
  resolveFrontendTarget
} from "../archive/ExtensionFrontend.js"
import { watchTree } from "../archive/Watch.js"
import { HostConfig } from "../config/HostConfig.js"
import type { Actor } from "../domain/Installed.js"
import { sendDevSignal } from "../runtime/DevSignal.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { OperationRefused } from "./Errors.js"
import { Lifecycle } from "./Lifecycle.js"
import { SourceSpec } from "./Source.js"

// `host dev` (docs/authoring.md, "Dev loop"): link an extension folder into a panel root as a dev-link
// source (served in place, through the lifecycle and its lock), unlink it (the link goes, the folder
// stays), and watch it: every saved change rebuilds the bundle, refreshes the link's record, and nudges
// a running `host serve` (runtime/DevSignal) so open pages pick the change up through the events stream.

const actor: Actor = { type: "cli" }

export class NotLinked extends Data.TaggedError("NotLinked")<{ readonly folder: string }> {
  override get message() {
    return `${this.folder} is not linked to this panel (see host list)`
  }
}

/** The installed extension linked to `folder`, if any. */
export const findLink = (folder: string) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const absolute = path.resolve(folder)
    const installed = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.list)
    return Option.fromNullable(installed.find((record) => record.source.type === "dev-link" && record.source.ref === absolute))
  })

export class BridgeBuildFailed extends Data.TaggedError("BridgeBuildFailed")<{ readonly detail: string }> {
  override get message() {
    return this.detail
  }
}

export interface LinkOutcome {
  readonly id: string
  readonly version: string
  readonly action: "linked" | "refreshed"
  readonly migrations: ReadonlyArray<string>
}

/** Links the folder (or refreshes an existing link of it), then nudges a running server. */
export const link = (folder: string) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const lifecycle = yield* Lifecycle
    const { paths } = yield* HostConfig
    const absolute = path.resolve(folder)
    const existing = yield* findLink(absolute)
    const outcome: LinkOutcome = yield* Option.match(existing, {
      onSome: (record) =>
        Effect.map(lifecycle.refreshLink(record.extensionId, { actor, lockTimeout: 10 }), (result) => ({
          id: result.id,
          version: result.version,
          action: "refreshed" as const,
          migrations: result.migrations
        })),
      onNone: () =>
        lifecycle.add(SourceSpec.DevLink({ path: absolute }), { actor, lockTimeout: 10 }).pipe(
          Effect.catchIf(
            (error): error is OperationRefused => error instanceof OperationRefused && error.reason === "already-installed",
            (error) =>
              Effect.fail(new OperationRefused({
                ...error,
                detail: `${error.extensionId} is already installed from another source`,
                hint: `host remove ${error.extensionId} first (add --keep-data to keep its tables), then link the folder`
              }))
          ),
          Effect.map((result) => ({ id: result.id, version: result.version, action: "linked" as const, migrations: result.migrations }))
        )
    })
    yield* sendDevSignal(paths.storage)
    return outcome
  })

/** Removes the link (and, like `host remove`, the extension's data); the folder itself is never touched. */
export const unlink = (folder: string, options: { readonly keepData: boolean }) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const lifecycle = yield* Lifecycle
    const { paths } = yield* HostConfig
    const absolute = path.resolve(folder)
    const record = yield* findLink(absolute)
    if (Option.isNone(record)) return yield* new NotLinked({ folder: absolute })
    const result = yield* lifecycle.remove(record.value.extensionId, { actor, keepData: options.keepData, lockTimeout: 10 })
    yield* sendDevSignal(paths.storage)
    return result
  })

export type DevEvent =
  | { readonly _tag: "Built"; readonly result: BuildResult }
  | { readonly _tag: "BuildFailed"; readonly lines: ReadonlyArray<string> }
  | { readonly _tag: "Reloaded"; readonly id: string; readonly files: ReadonlyArray<string>; readonly ms: number; readonly migrations: ReadonlyArray<string> }
  | { readonly _tag: "ReloadFailed"; readonly message: string }
  | { readonly _tag: "Watching"; readonly folder: string }

export interface WatchOptions {
  readonly report: (event: DevEvent) => Effect.Effect<void>
  /** Also rebuild the bridge (framework development): runs this after each batch under src/bridge. */
  readonly bridge?: { readonly folder: string; readonly rebuild: Effect.Effect<string, BridgeBuildFailed> } | undefined
}

const hasFrontend = (folder: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    Effect.map(
      Effect.forEach(entryCandidates, (entry) => fs.exists(`${folder}/${entry}`).pipe(Effect.orElseSucceed(() => false))),
      (found) => found.some(Boolean)
    ))

/**
 * Watches a linked folder until interrupted: rebuild the bundle (incrementally), refresh the link's
 * record, nudge the server. A failed build or an invalid manifest is reported and the previous bundle
 * and record stay in place, so the panel keeps showing the last good state.
 */
export const watchLinked = (folder: string, options: WatchOptions) =>
  Effect.scoped(Effect.gen(function*() {
    const path = yield* Path.Path
    const lifecycle = yield* Lifecycle
    const { paths } = yield* HostConfig
    const absolute = path.resolve(folder)
    const frontend = (yield* hasFrontend(absolute)) ? yield* resolveFrontendTarget(absolute) : undefined
    const context = frontend === undefined ? undefined : yield* frontendBuildContext(frontend)
    const outputs = new Set(frontend === undefined ? [] : outputFiles(frontend))

    const build = frontend === undefined || context === undefined
      ? Effect.succeed(true)
      : buildTarget(frontend, context).pipe(
        Effect.tap((result) => options.report({ _tag: "Built", result })),
        Effect.as(true),
        Effect.catchTag("FrontendBuildFailed", (error) =>
          Effect.as(options.report({ _tag: "BuildFailed", lines: error.errors.map(formatBuildMessage) }), false))
      )

    const reload = (files: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const started = performance.now()
        const record = yield* findLink(absolute)
        if (Option.isNone(record)) return yield* new NotLinked({ folder: absolute })
        const result = yield* lifecycle.refreshLink(record.value.extensionId, { actor, lockTimeout: 10 })
        yield* sendDevSignal(paths.storage)
        yield* options.report({
          _tag: "Reloaded",
          id: result.id,
          files,
          ms: Math.round(performance.now() - started),
          migrations: result.migrations
        })
      }).pipe(Effect.catchAll((error) => options.report({ _tag: "ReloadFailed", message: error.message })))

    const onBatch = (files: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const built = yield* build
        // A failed build changes nothing on the panel, unless backend files changed too.
        const backend = files.some((file) => !file.startsWith("resources/frontend/"))
        if (built || backend) yield* reload(files)
      })

    // Watch first, build second: a save during the first build is not missed.
    const changes = yield* watchTree(absolute, { ignore: (file) => outputs.has(file) })
    const bridge = options.bridge
    const bridgeChanges = bridge === undefined ? undefined : yield* watchTree(bridge.folder)
    yield* onBatch([])
    yield* options.report({ _tag: "Watching", folder: absolute })
    const extension = changes.pipe(Stream.runForEach(onBatch))
    if (bridge === undefined || bridgeChanges === undefined) return yield* extension
    const rebuildBridge = bridge.rebuild.pipe(
      Effect.flatMap(() => sendDevSignal(paths.storage)),
      Effect.zipRight(options.report({ _tag: "Reloaded", id: "bridge", files: [], ms: 0, migrations: [] })),
      Effect.catchAll((error) => options.report({ _tag: "ReloadFailed", message: `the bridge does not build: ${error.message}` }))
    )
    yield* Effect.all([extension, bridgeChanges.pipe(Stream.runForEach(() => rebuildBridge))], { concurrency: 2, discard: true })
  }))

const outputFiles = (target: FrontendTarget) => [
  target.bundle,
  `${target.bundle}.map`,
  target.bundle.replace(/\.[cm]?js$/, ".css"),
  `${target.bundle.replace(/\.[cm]?js$/, ".css")}.map`,
  ...(target.styles === undefined ? [] : [target.styles, `${target.styles}.map`])
]
