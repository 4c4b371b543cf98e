import { expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import { existsSync, rmSync } from "node:fs"
import { join } from "node:path"
import { HostConfig } from "../../src/config/HostConfig.js"
import { operationsLayer, platformLayer } from "../../src/CompositionRoot.js"
import * as Converge from "../../src/lifecycle/Converge.js"
import { Lifecycle } from "../../src/lifecycle/Lifecycle.js"
import { SourceSpec } from "../../src/lifecycle/Source.js"
import { ReplicaFiles } from "../../src/runtime/ReplicaFiles.js"
import { ExtensionsRepo } from "../../src/store/ExtensionsRepo.js"
import { OperationLocks } from "../../src/store/OperationLock.js"
import { fixture, repoRoot, tempDir } from "../support/cli.js"
import { currentDatabase, describeDatabases } from "../support/databases.js"

// A server converges its root's trees to the records, except while a live process on this host holds the
// operation lock: that process (the CLI beside the server) may be switching those very trees, and its tree
// marks follow when it commits (docs/operations.md "Running replicas").

describeDatabases("convergence and this host's operation lock", () => {
  it.effect("defers while a live process on this host holds the lock, and converges once it is released", () => {
    const root = tempDir("host-root-")
    const layer = Converge.layer.pipe(
      Layer.provideMerge(operationsLayer({ frameworkRoot: repoRoot, root: root.path, verbose: false, env: currentDatabase().env })),
      Layer.provideMerge(platformLayer)
    )
    return Effect.gen(function*() {
      const lifecycle = yield* Lifecycle
      yield* lifecycle.add(SourceSpec.Directory({ path: fixture("extensions", "hello-world") }), { actor: { type: "cli" } })
      const installed = yield* (yield* ExtensionsRepo).list
      const { paths } = yield* HostConfig
      const tree = join(paths.extensions, "acme", "hello-world")
      expect(existsSync(join(tree, "extension.yaml"))).toBe(true)
      // This root lost the tree (as a replica that has not converged yet would): convergence must put it back.
      rmSync(tree, { recursive: true, force: true })

      const replica = yield* ReplicaFiles
      const locks = yield* OperationLocks
      const holding = yield* Scope.make()
      // Taken by this very process, so its holder is a live process on this host.
      yield* locks.acquire({ operation: "update acme/hello-world", holder: "cli", timeout: "1 second" }).pipe(Scope.extend(holding))
      const whileHeld = yield* replica.converge(installed)
      expect(whileHeld).toEqual({ changed: [], unavailable: new Map(), deferred: true })
      expect(existsSync(tree)).toBe(false)

      yield* Scope.close(holding, Exit.void)
      const afterRelease = yield* replica.converge(installed)
      expect(afterRelease.deferred).toBe(false)
      expect(afterRelease.changed).toEqual(["acme/hello-world"])
      expect(existsSync(join(tree, "extension.yaml"))).toBe(true)
    }).pipe(Effect.provide(Layer.fresh(layer)), Effect.scoped, Effect.ensuring(Effect.sync(root.cleanup)))
  })
})
