import { Effect, Option } from "effect"
import type { PlanAction } from "../domain/PlanFormat.js"
import { CoreKeys, CoreRows, type SensitiveKeys } from "../store/CoreRows.js"

// Which settings of an extension came from `${ENV}` templates (docs/plan-format.md): their values are
// secrets, so plans, drift and the admin screens show them hidden. The keys live in the
// `sensitive_settings` core row, written around each configure action of an apply.

/**
 * The sensitive keys of `action`'s extension after the configure: `mark` (before the write) adds the
 * action's secret keys; `settle` (after it) also drops the keys the action now sets in plain text.
 */
export const sensitiveKeysAfter = (
  before: ReadonlyArray<string>,
  action: PlanAction,
  phase: "mark" | "settle"
): ReadonlyArray<string> => {
  const changes = action.settings ?? []
  const secret = changes.filter((change) => change.sensitive).map((change) => change.key)
  const plain = new Set(changes.filter((change) => !change.sensitive).map((change) => change.key))
  return phase === "mark"
    ? [...new Set([...before, ...secret])]
    : [...new Set([...before.filter((key) => !plain.has(key)), ...secret])]
}

/** Records `action`'s sensitive keys in the core row (unchanged sets are not written again). */
export const rememberSensitive = (action: PlanAction, phase: "mark" | "settle") =>
  Effect.gen(function*() {
    const coreRows = yield* CoreRows
    const stored = Option.getOrElse(yield* coreRows.get(CoreKeys.sensitiveKeys), (): SensitiveKeys => ({}))
    const before = stored[action.id] ?? []
    const after = sensitiveKeysAfter(before, action, phase)
    if (after.length === before.length && after.every((key) => before.includes(key))) return
    yield* coreRows.put(CoreKeys.sensitiveKeys, { ...stored, [action.id]: [...after].sort() })
  })
