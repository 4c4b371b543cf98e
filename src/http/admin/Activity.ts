import { Effect } from "effect"
import * as Activity from "../../usecases/Activity.js"
import { respond } from "../api/Respond.js"
import { ActivityPage } from "../../usecases/Views.js"
import type { ActivityPageQuery, RecentActivityQuery } from "../contracts/Admin.js"
import { ActivityBody } from "../contracts/Admin.js"
import { AdminActor } from "../contracts/Security.js"

// The activity log (docs/admin.md "Activity"): the newest rows, and filtered pages.

/** `GET activity?limit&extension`: the newest rows. */
export const activity = (query: typeof RecentActivityQuery.Type) =>
  Effect.gen(function*() {
    yield* AdminActor
    return yield* respond(ActivityBody, { data: yield* Activity.recentActivity({ limit: query.limit, extensionId: query.extension }) })
  })

/** `GET activity/page?limit&offset&extension&action`: one page of activity with the total that matches. */
export const activityPage = (query: typeof ActivityPageQuery.Type) =>
  Effect.gen(function*() {
    yield* AdminActor
    return yield* respond(ActivityPage, yield* Activity.activityPage(query))
  })
