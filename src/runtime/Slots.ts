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

const SLOT_OBJECT = /\{[^{}]*?\bslot\s*:\s*(["'`])([^"'`]+)\1[^{}]*\}/g
const ORDER = /\border\s*:\s*(-?\d+(?:\.\d+)?)/

/** `{slot: "…", order: N}` object literals in a built bundle (minified or not). */
export const scanBundleSlots = (extensionId: string, bundle: string): ReadonlyArray<SlotEntry> =>
  [...bundle.matchAll(SLOT_OBJECT)].map((match) => {
    const order = ORDER.exec(match[0])
    return { slot: match[2]!, extensionId, order: order === null ? 0 : Number(order[1]), source: "bundle" as const, metadata: {} }
  })

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
