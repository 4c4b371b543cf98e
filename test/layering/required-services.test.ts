import { expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { describe, expectTypeOf } from "vitest"
import { operationsLayer, platformLayer } from "../../src/CompositionRoot.js"
import { Lifecycle } from "../../src/lifecycle/Lifecycle.js"
import { SourceSpec } from "../../src/lifecycle/Source.js"
import { Reconciler } from "../../src/reconcile/Reconciler.js"
import { Registry } from "../../src/registry/Registry.js"
import { repoRoot, tempDir } from "../support/cli.js"

// The Registry is a required service (docs/decisions.md, "Layering"): the layers that install from a
// registry ask for it, so a composition without it does not compile, and the composition root always provides one.

describe("required services", () => {
  it("the lifecycle and the reconciler cannot be built without a Registry (checked by tsc)", () => {
    expectTypeOf<Registry>().toExtend<Layer.Layer.Context<typeof Lifecycle.Default>>()
    expectTypeOf<Registry>().toExtend<Layer.Layer.Context<typeof Reconciler.Default>>()
  })

  it.effect("the composition root's operations layer provides the Registry; with no registry_url a registry install fails with the typed refusal", () => {
    const root = tempDir("host-root-")
    return Effect.gen(function*() {
      const registry = yield* Registry
      expect(registry.url).toBe("")
      const lifecycle = yield* Lifecycle
      const failure = yield* Effect.flip(
        lifecycle.add(SourceSpec.Registry({ id: "acme/not-here", range: "^1.0" }), { actor: { type: "cli" } })
      )
      expect(failure).toMatchObject({ _tag: "SourceRejected", reason: "RegistryNotConfigured", step: "verifying and staging acme/not-here@^1.0" })
    }).pipe(
      Effect.provide(operationsLayer({ frameworkRoot: repoRoot, root: root.path, verbose: false, env: {} }, { listeners: false }).pipe(Layer.provideMerge(platformLayer))),
      Effect.ensuring(Effect.sync(root.cleanup))
    )
  })
})
