import { expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { operationsLayer, platformLayer } from "../../src/CompositionRoot.js"
import type { LifecycleEvent } from "../../src/domain/Events.js"
import { LifecycleEvents } from "../../src/kernel/Events.js"
import { Lifecycle } from "../../src/lifecycle/Lifecycle.js"
import { SourceSpec } from "../../src/lifecycle/Source.js"
import { fixture, repoRoot, tempDir } from "../support/cli.js"
import { writeExtension } from "../support/extensions.js"
import { currentDatabase, describeDatabases } from "../support/databases.js"

const panelIn = (root: string, panel: string) => {
  mkdirSync(join(root, "config"), { recursive: true })
  writeFileSync(join(root, "config", "panel.yaml"), panel)
}

const withPanel = (root: string) =>
  operationsLayer({ frameworkRoot: repoRoot, root, verbose: false, env: currentDatabase().env }).pipe(Layer.provideMerge(platformLayer))

describeDatabases("events", () => {
  it.effect("are published after each operation commits; a failing listener undoes nothing", () => {
    const root = tempDir("host-root-")
    const admin = { type: "admin", user: "root" } as const
    return Effect.gen(function*() {
      const seen = yield* Ref.make<ReadonlyArray<string>>([])
      const events = yield* LifecycleEvents
      yield* events.subscribe((event: LifecycleEvent) => Ref.update(seen, (all) => [...all, JSON.stringify(event)]))
      yield* events.subscribe(() => Effect.fail("listener exploded"))
      const lifecycle = yield* Lifecycle
      yield* lifecycle.add(SourceSpec.Directory({ path: fixture("extensions", "hello-world") }), { actor: admin })
      yield* lifecycle.disable("acme/hello-world", { actor: admin })
      yield* lifecycle.enable("acme/hello-world", { actor: admin })
      const same = SourceSpec.Directory({ path: fixture("extensions", "hello-world") })
      const refused = yield* Effect.flip(lifecycle.update("acme/hello-world", same, { actor: admin }))
      expect(refused.message).toBe("update acme/hello-world refused: already at v1.0.0; use --force to reinstall it")
      yield* lifecycle.update("acme/hello-world", same, { actor: admin, force: true })
      yield* lifecycle.remove("acme/hello-world", { actor: admin, context: { plan: "p-1" } })
      expect((yield* Ref.get(seen)).map((event) => JSON.parse(event))).toEqual([
        { _tag: "ExtensionInstalled", extensionId: "acme/hello-world", version: "1.0.0" },
        { _tag: "ExtensionDisabled", extensionId: "acme/hello-world" },
        { _tag: "ExtensionEnabled", extensionId: "acme/hello-world" },
        { _tag: "ExtensionUpdated", extensionId: "acme/hello-world", fromVersion: "1.0.0", toVersion: "1.0.0" },
        { _tag: "ExtensionRemoved", extensionId: "acme/hello-world" }
      ])
      const activity = (yield* Effect.promise(() => currentDatabase().inspect(root.path))).activity
      expect(activity.map((row) => row.summary)).toEqual(["Installed v1.0.0", "Disabled", "Enabled", "Reinstalled v1.0.0", "Removed"])
      expect(JSON.parse(activity[4]!.context)).toMatchObject({ actor: admin, plan: "p-1" })
    }).pipe(Effect.provide(Layer.fresh(withPanel(root.path))), Effect.ensuring(Effect.sync(root.cleanup)))
  })
})

describeDatabases("requires against the panel", () => {
  it.effect("refuses an unmet panel or php range and accepts a met one", () => {
    const root = tempDir("host-root-")
    const src = tempDir("host-src-")
    panelIn(root.path, "panel:\n  name: Test Panel\n  version: 1.10.2\n  php: 8.1.0\n")
    return Effect.gen(function*() {
      const lifecycle = yield* Lifecycle
      const actor = { type: "cli" } as const
      const tooNew = writeExtension(src.path, { id: "acme/panelish", version: "1.0.0", requires: { panel: "^1.11", php: "^8.1" } })
      const error = yield* Effect.flip(lifecycle.add(SourceSpec.Directory({ path: tooNew }), { actor }))
      expect(error.message).toBe(`add acme/panelish refused: requires.panel "^1.11" is not met by panel 1.10.2`)
      const fits = writeExtension(src.path, { id: "acme/panelish", version: "1.0.1", requires: { panel: "^1.10", php: "^8.1", node: ">=20" } })
      const result = yield* lifecycle.add(SourceSpec.Directory({ path: fits }), { actor })
      expect(result).toMatchObject({ action: "installed", warnings: [] })
    }).pipe(
      Effect.provide(Layer.fresh(withPanel(root.path))),
      Effect.ensuring(Effect.sync(() => {
        root.cleanup()
        src.cleanup()
      }))
    )
  })
})
