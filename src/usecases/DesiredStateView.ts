import { FileSystem } from "@effect/platform"
import { Effect, Either } from "effect"
import { sha256Hex } from "../system/Hash.js"
import { HostConfig } from "../config/HostConfig.js"
import { unlistedWarning } from "../domain/DesiredState.js"
import { adopt } from "../reconcile/Adopt.js"
import { formatPlan } from "../reconcile/PlanRender.js"
import { Reconciler } from "../reconcile/Reconciler.js"
import { desiredEntries, installedList } from "./Facts.js"
import type { AdoptResult, DesiredStateView, Drift } from "./Views.js"

// The desired-state screen (docs/admin.md, docs/gitops.md): the file, the plan against it, and the
// drift — what changed on the panel since the file was applied — as data: every planned action on an
// installed extension, and every installed extension the file does not list.

type Env = Readonly<Record<string, string | undefined>>

export const desiredStateView = (env: Env) =>
  Effect.gen(function*() {
    const { paths } = yield* HostConfig
    const fs = yield* FileSystem.FileSystem
    const file = paths.desiredState
    const exists = yield* fs.exists(file).pipe(Effect.orElseSucceed(() => false))
    if (!exists) return { file, exists, text: null, sha256: null, plan: null, planError: null, drift: [] } satisfies DesiredStateView
    const text = yield* fs.readFileString(file)
    const sha256 = sha256Hex(text)
    const reconciler = yield* Reconciler
    const plan = yield* Effect.either(reconciler.plan({ file, prune: false, allowDestroy: false, env }))
    if (Either.isLeft(plan)) {
      const error = plan.left
      const problems = "problems" in error ? error.problems : []
      return {
        file,
        exists,
        text,
        sha256,
        plan: null,
        planError: { code: error._tag, detail: error.message, problems },
        drift: []
      } satisfies DesiredStateView
    }
    // Without prune the plan removes nothing: an installed extension the file does not list stays, and is drift.
    const listed = yield* desiredEntries
    const unlisted = (yield* installedList).map((record) => record.extensionId).filter((id) => !listed.has(id)).sort((a, b) => a.localeCompare(b))
    const drift: ReadonlyArray<Drift> = [
      ...plan.right.actions.filter((action) => action.type !== "install").map((action): Drift => ({ id: action.id, type: action.type, detail: action.reason })),
      ...unlisted.map((id): Drift => ({ id, type: "unlisted", detail: unlistedWarning(id) }))
    ]
    const { basis: _basis, ...shown } = plan.right
    return { file, exists, text, sha256, plan: { ...shown, text: formatPlan(plan.right) }, planError: null, drift } satisfies DesiredStateView
  })

/** `adopt`: the diff that would make the file describe the panel; with `write`, writes it (refused if the file changed since). */
export const adoptDesiredState = (request: { readonly write: boolean; readonly expectedSha256: string | undefined }, env: Env) =>
  Effect.flatMap(HostConfig, ({ paths }) =>
    adopt(paths.desiredState, { write: request.write, expectedSha256: request.expectedSha256, env }).pipe(
      Effect.map((result): AdoptResult => result)
    ))
