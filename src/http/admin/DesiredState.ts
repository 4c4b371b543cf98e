import { Effect } from "effect"
import { adoptDesiredState as adopt, desiredStateView } from "../../usecases/DesiredStateView.js"
import { ServerSettings } from "../Context.js"
import { HttpFailure } from "../Errors.js"
import { respond } from "../api/Respond.js"
import { AdoptBody, DesiredStateBody } from "../contracts/Admin.js"
import { AdminActor } from "../contracts/Security.js"
import { jsonBody } from "./Decode.js"

// The desired-state screen (docs/admin.md "Desired state"): the file, its plan and drift; adopt.

/** `GET desired-state`: the file, the plan against it (or why there is none), and the drift. */
export const desiredState = Effect.gen(function*() {
  yield* AdminActor
  const { env } = yield* ServerSettings
  return yield* respond(DesiredStateBody, { data: yield* desiredStateView(env) })
})

/** `POST desired-state/adopt {write?, expected_sha256?}`: the diff adopt would make; with write, writes it. */
export const adoptDesiredState = Effect.gen(function*() {
  yield* AdminActor
  const body = yield* jsonBody(["admin", "adopt"], "{write?, expected_sha256?}")
  const { env } = yield* ServerSettings
  const result = yield* adopt({ write: body.write, expectedSha256: body.expected_sha256 }, env).pipe(
    Effect.catchTag("AdoptRefused", (error) => new HttpFailure({ status: 409, code: "AdoptRefused", detail: error.message }))
  )
  return yield* respond(AdoptBody, { data: result })
})
