import type { Component, ExtensionConfig, HostApi, PageArea, WhenCondition } from "@host/sdk"
import { emit } from "./events.js"
import { createStore } from "./store.js"
import { removeExtensionTheme, setExtensionTheme } from "./theme.js"

// The registry (docs/frontend.md "Registering"): what each enabled extension's bundle registered with
// createExtension. Only ids of the page's enabled extensions are accepted, and a bundle may register
// only its own id (the manifest's). A second createExtension for one id replaces the first. Snapshots
// are immutable, so every React root re-renders from one consistent view.

declare const __HOST_SDK_VERSION__: string
export const bridgeSdkVersion = typeof __HOST_SDK_VERSION__ === "string" ? __HOST_SDK_VERSION__ : "0.0.0"

/** An enabled extension as the page (or the events stream) describes it. */
export interface ManifestEntry {
  readonly id: string
  readonly name: string
  readonly version: string
  readonly bundle: string | null
  readonly styles: string | null
  /** The isolation root class, when the manifest turns isolation on. */
  readonly isolationClass: string | null
  /** Deprecated manifest `frontend.slots` entries that name a component. */
  readonly slots: ReadonlyArray<{ readonly slot: string; readonly component: string; readonly order: number }>
}

export interface SlotEntry {
  readonly key: string
  readonly extensionId: string
  readonly slot: string
  readonly component: Component
  readonly order: number
  readonly props: Readonly<Record<string, unknown>>
  readonly permission: string | undefined
  readonly when: WhenCondition | undefined
  readonly sequence: number
}

export interface RouteEntry {
  readonly key: string
  readonly extensionId: string
  readonly area: PageArea
  readonly path: string
  readonly name: string
  readonly icon: string | Component | undefined
  readonly permission: string | undefined
  readonly component: Component
  readonly hidden: boolean
  readonly sequence: number
}

export interface Registered {
  readonly id: string
  readonly name: string
  readonly version: string
  readonly isolationClass: string | null
  readonly slots: ReadonlyArray<SlotEntry>
  readonly routes: ReadonlyArray<RouteEntry>
  readonly onDestroy: (() => void) | undefined
  /** Changes on every registration, so error boundaries of a replaced registration start afresh. */
  readonly generation: number
}

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined

export const defaultIsolationClass = (id: string) => `host-ext--${id.replace("/", "-")}`

/** An entry of `window.__HOST__.extensions` or of a `generation` event, normalised. */
export const normaliseEntry = (value: unknown): ManifestEntry | undefined => {
  const raw = record(value)
  if (raw === undefined || typeof raw.id !== "string") return undefined
  const isolation = raw.cssIsolation
  const isolationRecord = record(isolation)
  const isolationClass = isolation === true
    ? defaultIsolationClass(raw.id)
    : typeof isolation === "string"
    ? isolation
    : isolationRecord !== undefined
    ? typeof isolationRecord.class === "string" ? isolationRecord.class : defaultIsolationClass(raw.id)
    : null
  const slots = Array.isArray(raw.slots)
    ? raw.slots.flatMap((slot) => {
      const entry = record(slot)
      return entry !== undefined && typeof entry.slot === "string" && typeof entry.component === "string"
        ? [{ slot: entry.slot, component: entry.component, order: typeof entry.order === "number" ? entry.order : 0 }]
        : []
    })
    : []
  return {
    id: raw.id,
    name: typeof raw.name === "string" ? raw.name : raw.id,
    version: typeof raw.version === "string" ? raw.version : "",
    bundle: typeof raw.bundle === "string" ? raw.bundle : null,
    styles: typeof raw.styles === "string" ? raw.styles : null,
    isolationClass,
    slots
  }
}

/** The page's enabled extensions, by id. */
export const manifest = new Map<string, ManifestEntry>()
export const registry = createStore<ReadonlyMap<string, Registered>>(new Map())

let knownSlots: ReadonlySet<string> = new Set()
let hostApi: () => HostApi = () => {
  throw new Error("bridge not initialised")
}

export const initRegistry = (entries: ReadonlyArray<ManifestEntry>, slots: ReadonlyArray<string>, api: () => HostApi) => {
  for (const entry of entries) manifest.set(entry.id, entry)
  knownSlots = new Set(slots)
  hostApi = api
}

let sequence = 0
let generation = 0
const warnedMajors = new Set<string>()

/** What the bridge knows of an extension it has no manifest entry for: its id. */
const unlisted = (id: string): ManifestEntry => ({ id, name: "", version: "", bundle: null, styles: null, isolationClass: null, slots: [] })

/**
 * The manifest entry whose bundle is the script running now (bundles are classic scripts): by its URL, or,
 * for a bundle boot.js ran from the one answer of `/host/bundles.json` (no `src`), by the id it marked the
 * script with.
 */
const runningBundle = (): ManifestEntry | undefined => {
  const script = document.currentScript
  if (!(script instanceof HTMLScriptElement)) return undefined
  if (script.src === "") {
    const marked = script.dataset.hostExtension
    return marked === undefined ? undefined : manifest.get(marked) ?? unlisted(marked)
  }
  const running = new URL(script.src, location.href)
  for (const entry of manifest.values()) {
    if (entry.bundle === null) continue
    const bundle = new URL(entry.bundle, location.href)
    if (bundle.pathname === running.pathname) return entry
  }
  const match = /\/host\/ext\/([^/]+)\/([^/]+)\//.exec(running.pathname)
  return match === null ? undefined : unlisted(`${match[1]}/${match[2]}`)
}

const major = (version: string) => version.split(".")[0] ?? version

const componentName = (component: unknown) =>
  typeof component === "function" ? (component as { displayName?: string }).displayName ?? component.name : undefined

const isComponent = (value: unknown): value is Component =>
  typeof value === "function" || (typeof value === "object" && value !== null && "$$typeof" in value)

/** A registration being taken in: the config, its id, and the manifest entry of that id. */
interface Registering {
  readonly id: string
  readonly entry: ManifestEntry
  readonly config: ExtensionConfig
}

/**
 * The manifest entry a config may register as, or undefined (with the console error saying why): the
 * config needs an id, a bundle registers only its own id, and only an enabled extension registers.
 */
const acceptedEntry = (config: ExtensionConfig): ManifestEntry | undefined => {
  const raw = record(config)
  if (raw === undefined || typeof raw.id !== "string") {
    console.error("[host] createExtension needs a config object with the extension's id; nothing was registered")
    return undefined
  }
  const id = config.id
  const running = runningBundle()
  if (running !== undefined && running.id !== id) {
    console.error(
      `[host] createExtension refused: the bundle of ${running.id} registered the id "${id}"; it must be the manifest's id "${running.id}". Nothing of it renders.`
    )
    return undefined
  }
  const entry = manifest.get(id)
  if (entry === undefined) {
    const enabled = [...manifest.keys()]
    console.error(
      `[host] createExtension refused: "${id}" is not an enabled extension of this panel (enabled: ${enabled.length === 0 ? "none" : enabled.join(", ")}). Nothing of it renders.`
    )
  }
  return entry
}

/** Warns once per extension when its bundle was built for another major version of the SDK. */
const warnSdkMajor = (id: string, meta: { readonly sdkVersion?: string } | undefined) => {
  if (meta?.sdkVersion === undefined || major(meta.sdkVersion) === major(bridgeSdkVersion) || warnedMajors.has(id)) return
  warnedMajors.add(id)
  console.warn(
    `[host] ${id} was built for @host/sdk ${meta.sdkVersion}, but this panel's bridge provides @host/sdk ${bridgeSdkVersion}: rebuild it against @host/sdk ^${major(bridgeSdkVersion)}`
  )
}

type SlotRegistration = NonNullable<ExtensionConfig["slots"]>[number]

/**
 * One `slots` entry of the config, or undefined when it is malformed (skipped with a console error).
 * Its component's name joins `named`, so a deprecated manifest slot may name it.
 */
const declaredSlot = ({ id }: Registering, slot: SlotRegistration, index: number, named: Map<string, Component>): SlotEntry | undefined => {
  if (record(slot) === undefined || typeof slot.slot !== "string" || !isComponent(slot.component)) {
    console.error(`[host] ${id}: slots[${index}] needs a slot id and a component; it is skipped`)
    return undefined
  }
  if (!knownSlots.has(slot.slot)) console.warn(`[host] ${id}: unknown slot id "${slot.slot}" (slots[${index}]); it renders only where a container of that id exists`)
  const name = slot.name ?? componentName(slot.component)
  if (name !== undefined && name !== "" && !named.has(name)) named.set(name, slot.component)
  return {
    key: `${id}#${index}`,
    extensionId: id,
    slot: slot.slot,
    component: slot.component,
    order: typeof slot.order === "number" ? slot.order : 0,
    props: record(slot.props) ?? {},
    permission: slot.permission,
    when: slot.when,
    sequence: sequence++
  }
}

/** Deprecated manifest slots: rendered when they name a component this bundle registers by name. */
const manifestSlots = ({ entry, id }: Registering, named: ReadonlyMap<string, Component>): Array<SlotEntry> => {
  const slots: Array<SlotEntry> = []
  for (const [index, declared] of entry.slots.entries()) {
    const component = named.get(declared.component)
    if (component === undefined) {
      console.warn(`[host] ${id}: the manifest's frontend.slots names the component "${declared.component}", which the bundle does not register`)
      continue
    }
    slots.push({
      key: `${id}#manifest${index}`,
      extensionId: id,
      slot: declared.slot,
      component,
      order: declared.order,
      props: {},
      permission: undefined,
      when: undefined,
      sequence: sequence++
    })
  }
  return slots
}

/** The config's slots, then the manifest's slots that name one of its components, in that order. */
const slotEntriesOf = (registering: Registering): Array<SlotEntry> => {
  const slots: Array<SlotEntry> = []
  const named = new Map<string, Component>()
  for (const [name, component] of Object.entries(registering.config.components ?? {})) if (isComponent(component)) named.set(name, component)
  for (const [index, slot] of (registering.config.slots ?? []).entries()) {
    const declared = declaredSlot(registering, slot, index, named)
    if (declared !== undefined) slots.push(declared)
  }
  return [...slots, ...manifestSlots(registering, named)]
}

/** The config's routes; a malformed one is skipped with a console error. */
const routeEntriesOf = ({ config, entry, id }: Registering): Array<RouteEntry> => {
  const routes: Array<RouteEntry> = []
  for (const [index, route] of (config.routes ?? []).entries()) {
    if (record(route) === undefined || !["server", "dashboard", "account"].includes(route.area) || typeof route.path !== "string" || !isComponent(route.component)) {
      console.error(`[host] ${id}: routes[${index}] needs area (server, dashboard or account), path and component; it is skipped`)
      continue
    }
    routes.push({
      key: `${id}@${index}`,
      extensionId: id,
      area: route.area,
      path: route.path === "" ? "/" : route.path.startsWith("/") ? route.path : `/${route.path}`,
      name: typeof route.name === "string" ? route.name : entry.name,
      icon: route.icon,
      permission: route.permission,
      component: route.component,
      hidden: route.hidden === true,
      sequence: sequence++
    })
  }
  return routes
}

/**
 * Replaces any earlier registration of the id (its onDestroy runs first), publishes the new one, applies
 * its theme, then runs onInit.
 */
const publish = ({ config, entry, id }: Registering, slots: ReadonlyArray<SlotEntry>, routes: ReadonlyArray<RouteEntry>) => {
  const previous = registry.get().get(id)
  if (previous !== undefined) destroy(previous)
  const registered: Registered = {
    id,
    name: entry.name,
    version: entry.version,
    isolationClass: entry.isolationClass ?? (config.cssIsolation === true ? defaultIsolationClass(id) : null),
    slots,
    routes,
    onDestroy: config.onDestroy,
    generation: generation++
  }
  const next = new Map(registry.get())
  next.set(id, registered)
  registry.set(next)
  setExtensionTheme(id, config.theme)
  emit("extension:registered", { id })
  if (config.onInit !== undefined) {
    try {
      config.onInit(hostApi())
    } catch (error) {
      console.error(`[host] ${id}: onInit threw:`, error)
    }
  }
}

export const createExtension = (config: ExtensionConfig, meta?: { readonly sdkVersion?: string }): void => {
  const entry = acceptedEntry(config)
  if (entry === undefined) return
  const registering: Registering = { id: config.id, entry, config }
  warnSdkMajor(registering.id, meta)
  // Sequence numbers go to the config's slots, the manifest's slots, then the routes, as they always have.
  const slots = slotEntriesOf(registering)
  const routes = routeEntriesOf(registering)
  publish(registering, slots, routes)
}

const destroy = (registered: Registered) => {
  if (registered.onDestroy === undefined) return
  try {
    registered.onDestroy()
  } catch (error) {
    console.error(`[host] ${registered.id}: onDestroy threw:`, error)
  }
}

/** Removes an extension's registration: its components unmount, its theme goes, onDestroy runs. */
export const unregister = (id: string) => {
  const previous = registry.get().get(id)
  if (previous === undefined) return
  const next = new Map(registry.get())
  next.delete(id)
  registry.set(next)
  removeExtensionTheme(id)
  destroy(previous)
  emit("extension:unregistered", { id })
}

const bySlotCache = new WeakMap<ReadonlyMap<string, Registered>, Map<string, ReadonlyArray<SlotEntry>>>()

/** A slot's registrations in render order: `order`, then extension id, then registration order. */
export const slotEntries = (snapshot: ReadonlyMap<string, Registered>, slot: string): ReadonlyArray<SlotEntry> => {
  let cache = bySlotCache.get(snapshot)
  if (cache === undefined) {
    cache = new Map()
    bySlotCache.set(snapshot, cache)
  }
  let entries = cache.get(slot)
  if (entries === undefined) {
    entries = [...snapshot.values()]
      .flatMap((registered) => registered.slots.filter((entry) => entry.slot === slot))
      .sort((a, b) => a.order - b.order || (a.extensionId < b.extensionId ? -1 : a.extensionId > b.extensionId ? 1 : 0) || a.sequence - b.sequence)
    cache.set(slot, entries)
  }
  return entries
}
