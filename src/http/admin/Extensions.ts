import { Effect } from "effect"
import { DoctorUnknownExtension } from "../../lifecycle/Doctor.js"
import { extensionDoctor as doctorReport } from "../../usecases/Doctor.js"
import * as Extensions from "../../usecases/Extensions.js"
import { notFound } from "../Errors.js"
import { adminActor, extensionIdParam, ok } from "./Caller.js"
import { answered } from "./Failures.js"

// The installed extensions: the list, the Extensions screen's rows, one extension's detail, the impact
// of an operation, its health and its doctor report (docs/http.md, docs/admin.md).

/** `GET extensions` */
export const listExtensions = Effect.gen(function*() {
  yield* adminActor
  return yield* ok(yield* Extensions.listExtensions)
})

/** `GET extensions/overview` */
export const extensionsOverview = Effect.gen(function*() {
  yield* adminActor
  return yield* ok(yield* Extensions.extensionsOverview)
})

/** `GET extensions/{vendor}/{name}` */
export const extensionDetail = Effect.gen(function*() {
  yield* adminActor
  const id = yield* extensionIdParam
  return yield* ok(yield* answered(Extensions.extensionDetail(id)))
})

/** `GET extensions/{vendor}/{name}/impact` */
export const extensionImpact = Effect.gen(function*() {
  yield* adminActor
  const id = yield* extensionIdParam
  return yield* ok(yield* Extensions.extensionImpact(id))
})

/** `POST extensions/{vendor}/{name}/health`: runs this extension's health checks now. */
export const extensionHealthNow = Effect.gen(function*() {
  yield* adminActor
  const id = yield* extensionIdParam
  return yield* ok(yield* answered(Extensions.extensionHealthNow(id)))
})

/** `GET health`: the health of every booted extension. */
export const health = Effect.gen(function*() {
  yield* adminActor
  return yield* ok(yield* Extensions.healthOverview)
})

/** `GET extensions/{vendor}/{name}/doctor`: the report `host doctor <id>` prints, over this server's generation. */
export const extensionDoctor = Effect.gen(function*() {
  yield* adminActor
  const id = yield* extensionIdParam
  const report = yield* answered(doctorReport(id)).pipe(
    Effect.catchTag("DoctorUnknownExtension", (error: DoctorUnknownExtension) => notFound(error.message))
  )
  return yield* ok(report)
})
