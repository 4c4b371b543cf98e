import { Effect } from "effect"
import type { Sessions } from "../../src/panel/Session.js"

/** Sessions for in-process tests that sign nobody in: every cookie is unknown, nothing is revoked. */
export const noSessions: Sessions<never> = {
  issue: () => {
    throw new Error("no sessions are issued here")
  },
  verify: () => undefined,
  revoked: () => Effect.succeed(false),
  revoke: () => Effect.void
}
