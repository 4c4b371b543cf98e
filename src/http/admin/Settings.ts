import { Effect } from "effect"
import * as Extensions from "../../usecases/Extensions.js"
import * as Settings from "../../usecases/Settings.js"
import { HttpFailure } from "../Errors.js"
import { respond } from "../api/Respond.js"
import { type ExtensionPath, SettingsFormBody } from "../contracts/Admin.js"
import { AdminActor } from "../contracts/Security.js"
import { extensionId } from "./Caller.js"
import { jsonBody } from "./Decode.js"
import { answered } from "./Failures.js"

// The settings screen's data and its save (docs/admin.md): values validated by the lifecycle's
// configure, each invalid field answered with its own error entry.

/** `GET extensions/{vendor}/{name}/settings` */
export const readSettings = (path: ExtensionPath) =>
  Effect.gen(function*() {
    yield* AdminActor
    return yield* respond(SettingsFormBody, { data: yield* answered(Settings.settingsForm(extensionId(path))) })
  })

/** `PUT extensions/{vendor}/{name}/settings` */
export const writeSettings = (path: ExtensionPath) =>
  Effect.gen(function*() {
    const { actor } = yield* AdminActor
    const id = extensionId(path)
    // A missing extension is answered before its body is read.
    yield* answered(Extensions.findInstalled(id))
    const body = yield* jsonBody(["admin", "writeSettings"], "a JSON object of setting key → value", { emptyAsObject: false })
    const values = "values" in body && typeof body.values === "object" && body.values !== null && !Array.isArray(body.values)
      ? body.values as Record<string, unknown>
      : body as Record<string, unknown>
    const form = yield* answered(Settings.configureSettings(id, values, actor)).pipe(
      Effect.catchIf(
        (error) => error._tag === "OperationRefused" && error.reason === "settings",
        (error) =>
          new HttpFailure({
            status: 422,
            code: "SettingsInvalid",
            detail: error.message,
            problems: "problems" in error ? error.problems ?? [] : []
          })
      )
    )
    return yield* respond(SettingsFormBody, { data: form })
  })
