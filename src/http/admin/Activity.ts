import { HttpServerResponse } from "@effect/platform"
import { Effect, Schema } from "effect"
import { ActivityAction } from "../../domain/Installed.js"
import * as Activity from "../../usecases/Activity.js"
import { adminActor, ok } from "./Caller.js"
import { queryParams } from "./Decode.js"

// The activity log (docs/admin.md "Activity"): the newest rows, and filtered pages.

/** `limit` of `GET activity`: any value reads, a number is kept within 1..1000, anything else is 100. */
const LenientLimit = Schema.transform(Schema.String, Schema.Number, {
  strict: true,
  decode: (text) => Math.min(Math.max(Number(text) || 100, 1), 1000),
  encode: String
})

const RecentQuery = Schema.Struct({
  limit: Schema.optionalWith(LenientLimit, { default: () => 100 }),
  extension: Schema.optional(Schema.String)
})

/** `GET activity?limit&extension`: the newest rows. */
export const activity = Effect.gen(function*() {
  yield* adminActor
  const query = yield* queryParams(RecentQuery, "{limit?, extension?}")
  return yield* ok(yield* Activity.recentActivity({ limit: query.limit, extensionId: query.extension }))
})

const PageQuery = Schema.Struct({
  limit: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000)), { default: () => 50 }),
  offset: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.greaterThanOrEqualTo(0)), { default: () => 0 }),
  extension: Schema.optional(Schema.String),
  action: Schema.optional(ActivityAction)
})

/** `GET activity/page?limit&offset&extension&action`: one page of activity with the total that matches. */
export const activityPage = Effect.gen(function*() {
  yield* adminActor
  const query = yield* queryParams(PageQuery, "{limit?, offset?, extension?, action?}")
  return yield* HttpServerResponse.json(yield* Activity.activityPage(query))
})
