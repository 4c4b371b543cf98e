import { Effect } from "effect"
import * as Activity from "../../usecases/Activity.js"
import { respond } from "../api/Respond.js"
import { ActivityPage } from "../../usecases/Views.js"
import { ActivityBody, ActivityPageQuery, RecentActivityQuery } from "../contracts/Admin.js"
import { AdminActor } from "../contracts/Security.js"
import { queryParams } from "./Decode.js"

// The activity log (docs/admin.md "Activity"): the newest rows, and filtered pages.

/** `GET activity?limit&extension`: the newest rows. */
export const activity = Effect.gen(function*() {
  yield* AdminActor
  const query = yield* queryParams(RecentActivityQuery, "{limit?, extension?}")
  return yield* respond(ActivityBody, { data: yield* Activity.recentActivity({ limit: query.limit, extensionId: query.extension }) })
})

/** `GET activity/page?limit&offset&extension&action`: one page of activity with the total that matches. */
export const activityPage = Effect.gen(function*() {
  yield* AdminActor
  const query = yield* queryParams(ActivityPageQuery, "{limit?, offset?, extension?, action?}")
  return yield* respond(ActivityPage, yield* Activity.activityPage(query))
})
