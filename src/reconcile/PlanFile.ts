import { FileSystem, Path } from "@effect/platform"
import { Effect, Schema } from "effect"
import { isTooDeepJson, parseJsonWithinDepth, tooDeepJson } from "../domain/JsonDepth.js"
import { Plan } from "../domain/PlanFormat.js"
import { writeFileAtomic } from "../system/AtomicFile.js"
import { PlanFileInvalid } from "./Errors.js"

// Saved plans (`host reconcile --out` and `--plan`, docs/plan-format.md): a plan is written in the wire
// schema of domain/PlanFormat.ts and read back through the same schema, so a file that is not a plan is
// refused before anything is compared or applied.

/** Writes a plan file (`--out`); the file appears whole or not at all. */
export const savePlan = Effect.fn("Reconciler.savePlan")(function*(thePlan: Plan, file: string) {
  const path = yield* Path.Path
  const absolute = path.resolve(file)
  const encoded = yield* Schema.encode(Plan)(thePlan)
  yield* writeFileAtomic(absolute, `${JSON.stringify(encoded, null, 2)}\n`)
  return absolute
})

/** Reads a plan file (`--plan`); the first lines of a decoding failure say what is wrong with it. */
export const loadPlan = Effect.fn("Reconciler.loadPlan")(function*(file: string) {
  const fs = yield* FileSystem.FileSystem
  const text = yield* fs.readFileString(file).pipe(Effect.mapError((error) => new PlanFileInvalid({ file, detail: error.message })))
  // A plan file can come from elsewhere (a CI artifact): bounded before the schema formats it
  // (docs/decisions.md "JSON from outside nests at most 64 levels").
  return yield* Schema.decodeUnknown(parseJsonWithinDepth(Plan))(text).pipe(
    Effect.mapError((error) =>
      new PlanFileInvalid({ file, detail: isTooDeepJson(error) ? tooDeepJson : error.message.split("\n").slice(0, 3).join(" ") })
    )
  )
})
