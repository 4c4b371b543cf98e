import { Effect } from "effect"
import type { RegistryReference } from "../domain/Registry.js"
import { Registry, type ResolvedExtension } from "../registry/Registry.js"

// Registry version pinning, the one rule (DESIGN.md §23 "One rule in one place"; docs/decisions.md "One
// rule in one place: actor, lock wait, registry pinning"). Its own small module so the reconciler's
// planning, which loads no lifecycle operation, resolves through the same function as every operation.

/** A registry reference resolved now: what the registry listed, and the exact version and registry to install. */
export interface PinnedRegistryVersion {
  readonly resolved: ResolvedExtension
  readonly id: string
  /** The exact version: a later resolve cannot pick another. */
  readonly version: string
  /** The configured registry that listed it: a later resolve asks that one alone. */
  readonly registry: string
}

/**
 * Resolves `reference` in `registry` (else in the first configured registry that lists it) to one exact
 * version. `host add`/`host update`, the admin API's install, update and update-all (usecases/
 * ExtensionOperations.ts, lifecycle/RegistryUpdates.ts) and the reconciler's plan, whether the CLI, the
 * admin UI or the webhook asked for it (reconcile/Inputs.ts), all resolve through it, and each installs
 * exactly that version from that registry.
 */
export const pinRegistryVersion = (reference: RegistryReference, registry: string | undefined) =>
  Effect.map(
    Effect.flatMap(Registry, (service) => service.resolve(reference, { registry })),
    (resolved): PinnedRegistryVersion => ({ resolved, id: resolved.id, version: resolved.version, registry: resolved.registry })
  )
