import { Effect } from "effect"
import { DoctorUnknownExtension } from "../../lifecycle/Doctor.js"
import { extensionDoctor as doctorReport } from "../../usecases/Doctor.js"
import * as Extensions from "../../usecases/Extensions.js"
import { notFound } from "../Errors.js"
import { respond } from "../api/Respond.js"
import { DetailBody, DoctorBody, ExtensionListBody, type ExtensionPath, HealthBody, HealthNowBody, ImpactBody, OverviewBody } from "../contracts/Admin.js"
import { AdminActor } from "../contracts/Security.js"
import { extensionId } from "./Caller.js"
import { answered } from "./Failures.js"

// The installed extensions: the list, the Extensions screen's rows, one extension's detail, the impact
// of an operation, its health and its doctor report (docs/http.md, docs/admin.md).

/** `GET extensions` */
export const listExtensions = Effect.gen(function*() {
  yield* AdminActor
  return yield* respond(ExtensionListBody, { data: yield* Extensions.listExtensions })
})

/** `GET extensions/overview` */
export const extensionsOverview = Effect.gen(function*() {
  yield* AdminActor
  return yield* respond(OverviewBody, { data: yield* Extensions.extensionsOverview })
})

/** `GET extensions/{vendor}/{name}` */
export const extensionDetail = (path: ExtensionPath) =>
  Effect.gen(function*() {
    yield* AdminActor
    return yield* respond(DetailBody, { data: yield* answered(Extensions.extensionDetail(extensionId(path))) })
  })

/** `GET extensions/{vendor}/{name}/impact` */
export const extensionImpact = (path: ExtensionPath) =>
  Effect.gen(function*() {
    yield* AdminActor
    return yield* respond(ImpactBody, { data: yield* Extensions.extensionImpact(extensionId(path)) })
  })

/** `POST extensions/{vendor}/{name}/health`: runs this extension's health checks now. */
export const extensionHealthNow = (path: ExtensionPath) =>
  Effect.gen(function*() {
    yield* AdminActor
    return yield* respond(HealthNowBody, { data: yield* answered(Extensions.extensionHealthNow(extensionId(path))) })
  })

/** `GET health`: the health of every booted extension. */
export const health = Effect.gen(function*() {
  yield* AdminActor
  return yield* respond(HealthBody, { data: yield* Extensions.healthOverview })
})

/** `GET extensions/{vendor}/{name}/doctor`: the report `host doctor <id>` prints, over this server's generation. */
export const extensionDoctor = (path: ExtensionPath) =>
  Effect.gen(function*() {
    yield* AdminActor
    const report = yield* answered(doctorReport(extensionId(path))).pipe(
      Effect.catchTag("DoctorUnknownExtension", (error: DoctorUnknownExtension) => notFound(error.message))
    )
    return yield* respond(DoctorBody, { data: report })
  })
