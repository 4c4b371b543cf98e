import { isKnownSlot, slotIds } from "../domain/Slots.js"

// Where an extension's slot registrations come from, server side (the browser registers the real
// components): the bundle's `createExtension({ slots: [{ slot, component, order }] })`, found by a
// static scan of the built bundle; the deprecated manifest `frontend.slots`; and the deprecated backend
// `HasFrontendSlots`. Only the 65 known slot ids are served (the validator warns about others).

export interface SlotEntry {
  readonly slot: string
  readonly extensionId: string
  readonly order: number
  /** `bundle` (createExtension), `manifest` (frontend.slots) or `backend` (HasFrontendSlots). */
  readonly source: "bundle" | "manifest" | "backend"
  /** Other keys given with the registration (label, icon, permission, component name …). */
  readonly metadata: Readonly<Record<string, unknown>>
}

/** A registration as served: `{extensionId, order, source, …metadata}`. */
export type ServedSlot = Readonly<Record<string, unknown>> & {
  readonly extensionId: string
  readonly order: number
  readonly source: SlotEntry["source"]
}

export const servedSlot = (entry: SlotEntry): ServedSlot => {
  const { order: _order, slot: _slot, ...metadata } = entry.metadata
  return { ...metadata, extensionId: entry.extensionId, order: entry.order, source: entry.source }
}

const SLOT_KEY = /\bslot\s*:\s*(["'`])([^"'`]+)\1/g
const ORDER_AT = /^order\s*:\s*(-?\d+(?:\.\d+)?)/

/**
 * The `order` of the object literal a `slot:` key sits in: scans forward from the key at the object's
 * own nesting depth (skipping nested functions and objects) until the object closes.
 */
const orderAfter = (bundle: string, from: number): number => {
  let depth = 0
  for (let index = from; index < bundle.length && index < from + 4000; index++) {
    const char = bundle[index]!
    if (char === "{" || char === "(" || char === "[") depth++
    else if (char === "}" || char === ")" || char === "]") {
      if (depth === 0) return 0
      depth--
    } else if (depth === 0 && char === "o" && /\W/.test(bundle[index - 1] ?? " ")) {
      const match = ORDER_AT.exec(bundle.slice(index, index + 40))
      if (match !== null) return Number(match[1])
    }
  }
  return 0
}

/** `{slot: "…", …, order: N}` object literals in a built bundle (minified or not). */
export const scanBundleSlots = (extensionId: string, bundle: string): ReadonlyArray<SlotEntry> =>
  [...bundle.matchAll(SLOT_KEY)].map((match) => ({
    slot: match[2]!,
    extensionId,
    order: orderAfter(bundle, match.index + match[0].length),
    source: "bundle" as const,
    metadata: {}
  }))

/** Every known slot id → its registrations, ordered by `order`, then extension id. */
export const slotMap = (entries: ReadonlyArray<SlotEntry>): Record<string, ReadonlyArray<ServedSlot>> => {
  const map: Record<string, Array<SlotEntry>> = {}
  for (const entry of entries) {
    if (isKnownSlot(entry.slot)) (map[entry.slot] ??= []).push(entry)
  }
  const ordered: Record<string, ReadonlyArray<ServedSlot>> = {}
  for (const id of slotIds) {
    const list = map[id]
    if (list !== undefined) {
      ordered[id] = list.sort((a, b) => a.order - b.order || a.extensionId.localeCompare(b.extensionId)).map(servedSlot)
    }
  }
  return ordered
}
