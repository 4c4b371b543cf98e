import type { Actor } from "../domain/Installed.js"

// Who asked for an operation, and the two rules that follow from it and nowhere else (DESIGN.md §23
// "One rule in one place", docs/decisions.md "One rule in one place"): the actor the activity log names,
// and how long the operation waits for another operation's lock. The CLI, the admin API and the webhook
// each name their door; none of them decides either rule itself. The third rule of that list, registry
// version pinning, does not depend on the door at all: every install or update from the registry, and
// every plan, resolves through lifecycle/RegistryPin.ts `pinRegistryVersion` (the reconciler sits below
// this layer, so the rule lives below it too).

export type FrontDoor =
  /** A CLI command: `--lock-timeout` seconds (default 0, DESIGN.md §8: fail at once with the holder). */
  | { readonly _tag: "Cli"; readonly lockTimeout: number }
  /** An admin of the admin API (session or API token). */
  | { readonly _tag: "Admin"; readonly user: string }
  /** A signed CI webhook delivery (docs/gitops.md). */
  | { readonly _tag: "Webhook"; readonly delivery: string }

/**
 * Seconds a request to the server waits for another operation's lock before it is refused (409): long
 * enough to ride out a short operation, short enough for a browser or a CI step to wait for the answer.
 */
export const serverLockWaitSeconds = 5

/** How long an operation asked for through `door` waits for the lock. */
export const lockWaitSeconds = (door: FrontDoor): number => door._tag === "Cli" ? door.lockTimeout : serverLockWaitSeconds

/**
 * Who the activity log names. A CLI reconcile is `{type: "reconcile"}` (the desired-state file asked,
 * docs/gitops.md); other CLI operations are `{type: "cli"}`.
 */
export const actorOf = (door: FrontDoor, work: "operation" | "reconcile" = "operation"): Actor => {
  switch (door._tag) {
    case "Cli":
      return work === "reconcile" ? { type: "reconcile" } : { type: "cli" }
    case "Admin":
      return { type: "admin", user: door.user }
    case "Webhook":
      return { type: "api", user: "webhook" }
  }
}

/** What the activity rows' context adds for the door: a webhook's delivery id. */
export const contextOf = (door: FrontDoor): Readonly<Record<string, unknown>> =>
  door._tag === "Webhook" ? { delivery: door.delivery } : {}
