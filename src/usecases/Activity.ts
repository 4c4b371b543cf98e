import { Effect } from "effect"
import type { ActivityAction } from "../domain/Installed.js"
import { ActivityRepo } from "../store/ActivityRepo.js"
import type { ActivityPage, ActivityRow } from "./Views.js"

// The activity log as the admin reads it: the newest rows, or one filtered page with its total.

export const recentActivity = (request: { readonly limit: number; readonly extensionId: string | undefined }) =>
  Effect.flatMap(ActivityRepo, (repo) =>
    repo.list(request.extensionId === undefined ? { limit: request.limit } : { extensionId: request.extensionId, limit: request.limit })).pipe(
      Effect.map((rows): ReadonlyArray<ActivityRow> => rows)
    )

export interface ActivityQuery {
  readonly limit: number
  readonly offset: number
  readonly extension?: string | undefined
  readonly action?: ActivityAction | undefined
}

export const activityPage = (query: ActivityQuery) =>
  Effect.flatMap(ActivityRepo, (repo) =>
    repo.page({ extensionId: query.extension, action: query.action, limit: query.limit, offset: query.offset })).pipe(
      Effect.map((page): ActivityPage => ({
        data: page.rows,
        meta: { total: page.total, limit: query.limit, offset: query.offset, extension: query.extension ?? null, action: query.action ?? null }
      }))
    )
