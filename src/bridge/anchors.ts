import { reportAnchor, reportSlot } from "./diagnostics.js"
import { on } from "./events.js"
import { extensionPageOf, matchPath } from "./match.js"
import type { Placement, SlotMap, SlotPlace } from "./panels/map.js"
import { registry } from "./registry.js"

// Slot containers on a panel Host does not render (docs/panels.md "Slot maps"): the panel kind's slot map
// says, per slot, on which URLs it exists and at which anchor element; this engine puts a
// `<div data-host-slot>` there and keeps it there. The container watcher (containers.ts) renders it like
// any other container — this file never renders.
//
// The panel's React replaces nodes under us: a route change builds a new `section`, and once after load
// the whole router remounts. A MutationObserver, created BEFORE the container watcher's, puts the same
// element back at the new anchor in the same microtask checkpoint — observers are notified in creation
// order, so the watcher never sees the container gone and the components in it are not re-mounted.

const placed = new Map<string, HTMLElement>()
const hidden = new Set<HTMLElement>()
const reported = new Set<string>()
let map: SlotMap | undefined
let settleTimer: ReturnType<typeof setTimeout> | undefined
let lastPath = ""

/** How long after a navigation a page must have rendered before a missing anchor is reported. */
let settleMs = 2000

const routeOf = (place: SlotPlace, path: string) => place.routes.find((pattern) => matchPath(pattern, path) !== undefined)

/** Anchors of the current page: not in a fading-out section, not inside Host's own containers. */
const candidates = (selector: string): Array<Element> => {
  let found: NodeListOf<Element>
  try {
    found = document.querySelectorAll(selector)
  } catch {
    return []
  }
  return [...found].filter((element) => element.closest(".fade-exit") === null && element.closest("[data-host-slot]") === null)
}

/** Each container's slot-map position and placement: containers sharing an anchor keep the map's order. */
const order = new WeakMap<Element, { readonly rank: number; readonly placement: Placement }>()

/**
 * Host's containers next to where `placement` puts things at `anchor` (the element itself excluded), in
 * document order: the leading (afterbegin) or trailing (beforeend) run of the anchor's children, or the run
 * of siblings right before (beforebegin) or after (afterend) it. Only containers of the same placement
 * count: a `beforeend` container of an anchor whose own content has not arrived yet is no reason to move
 * an `afterbegin` one.
 */
const runAt = (anchor: Element, placement: Placement, self: Element): Array<Element> => {
  const run: Array<Element> = []
  const backwards = placement === "beforeend" || placement === "beforebegin"
  let node = placement === "afterbegin" ? anchor.firstElementChild
    : placement === "beforeend" ? anchor.lastElementChild
    : placement === "beforebegin" ? anchor.previousElementSibling
    : anchor.nextElementSibling
  while (node !== null && node.hasAttribute("data-host-anchored")) {
    if (node !== self && order.get(node)?.placement === placement) run.push(node)
    node = backwards ? node.previousElementSibling : node.nextElementSibling
  }
  return backwards ? run.reverse() : run
}

/**
 * Whether the container already sits at its anchor: inside it for afterbegin/beforeend, or next to it for
 * beforebegin/afterend with nothing but Host's own containers between them — and, among the containers of
 * the same anchor and placement, in the slot map's order (so `server.header` stays above
 * `server.users.before` on every page, whichever was placed first).
 */
const inPlace = (element: HTMLElement, anchor: Element, placement: Placement) => {
  if (!element.isConnected) return false
  if (placement === "afterbegin" || placement === "beforeend") {
    // First (last) child of the anchor, Host's own containers aside: content the panel renders later is
    // inserted after (before) ours, and would otherwise leave a "…after" slot above the list it follows.
    if (element.parentElement !== anchor) return false
    const step = (node: Element) => placement === "beforeend" ? node.nextElementSibling : node.previousElementSibling
    for (let next = step(element); next !== null; next = step(next)) {
      if (!next.hasAttribute("data-host-anchored")) return false
    }
  } else {
    if (element.parentElement !== anchor.parentElement) return false
    const step = (node: Element) => placement === "beforebegin" ? node.nextElementSibling : node.previousElementSibling
    let reached = false
    for (let next = step(element); next !== null; next = step(next)) {
      if (next === anchor) {
        reached = true
        break
      }
      if (!next.hasAttribute("data-host-anchored")) return false
    }
    if (!reached) return false
  }
  return ordered(element, anchor, placement)
}

/** The container's neighbours of the same anchor and placement come before it when ranked lower, after it when higher. */
const ordered = (element: HTMLElement, anchor: Element, placement: Placement) => {
  const rank = order.get(element)?.rank ?? 0
  const isPeer = (node: Element) => node.hasAttribute("data-host-anchored") && order.get(node)?.placement === placement
  for (let node = element.previousElementSibling; node !== null && node !== anchor && isPeer(node); node = node.previousElementSibling) {
    if ((order.get(node)?.rank ?? 0) > rank) return false
  }
  for (let node = element.nextElementSibling; node !== null && node !== anchor && isPeer(node); node = node.nextElementSibling) {
    if ((order.get(node)?.rank ?? 0) < rank) return false
  }
  return true
}

/** Puts the container at its anchor, among the containers already there in the slot map's order. */
const insertAt = (element: HTMLElement, anchor: Element, placement: Placement) => {
  const rank = order.get(element)?.rank ?? 0
  const run = runAt(anchor, placement, element)
  const later = run.find((node) => (order.get(node)?.rank ?? 0) > rank)
  if (later !== undefined) later.before(element)
  else if (run.length > 0) run[run.length - 1]!.after(element)
  else anchor.insertAdjacentElement(placement, element)
}

/**
 * Clicks inside injected UI stay there: rows are links, and the panel's router (listening at the
 * document) would follow them. A click that would activate the row's own link (not a control of the
 * extension's) is also kept from navigating.
 */
const keepClicks = (element: HTMLElement) => {
  element.addEventListener("click", (event) => {
    event.stopPropagation()
    const target = event.target instanceof Element ? event.target : null
    const control = target?.closest("a[href],button,input,select,textarea,label,summary")
    if (control === null || control === undefined || !element.contains(control)) event.preventDefault()
  })
}

const containerFor = (key: string, place: SlotPlace, context: string | null, rank: number, placement: Placement) => {
  let element = placed.get(key)
  if (element === undefined) {
    element = document.createElement("div")
    element.setAttribute("data-host-slot", place.slot)
    element.setAttribute("data-host-anchored", "")
    if (place.className !== undefined) element.className = place.className
    keepClicks(element)
    placed.set(key, element)
  }
  // The placement may change with the anchor that matched (a page outlet falls back to the 404 block).
  const known = order.get(element)
  if (known?.rank !== rank || known.placement !== placement) order.set(element, { rank, placement })
  if (context !== null && element.getAttribute("data-host-context") !== context) element.setAttribute("data-host-context", context)
  return element
}

const serverIdOf = (href: string): string | undefined => {
  try {
    return /^\/server\/([^/?#]+)/.exec(new URL(href, location.href).pathname)?.[1]
  } catch {
    return undefined
  }
}

/** One pass: every slot of this URL at its anchor, the ones of other URLs gone. */
const sync = () => {
  if (map === undefined) return
  const path = location.pathname
  const wanted = new Set<string>()
  const missing: Array<{ place: SlotPlace; pattern: string }> = []
  for (const [rank, place] of map.places.entries()) {
    const pattern = routeOf(place, path)
    if (pattern === undefined) continue
    // Plugin-rendered containers (Pelican) are their own anchors: nothing to create, only to check.
    if (place.stability === "PLUGIN") {
      if (document.querySelector(place.anchors[0]!.selector) === null) missing.push({ place, pattern })
      continue
    }
    let anchors: Array<Element> = []
    let placement = place.anchors[0]!.placement
    for (const anchor of place.anchors) {
      anchors = candidates(anchor.selector)
      placement = anchor.placement
      if (anchors.length > 0) break
    }
    if (anchors.length === 0) {
      missing.push({ place, pattern })
      // Kept (not removed) while its anchor is away: the same element goes back when it returns.
      for (const key of placed.keys()) if (key === place.slot || key.startsWith(`${place.slot}|`)) wanted.add(key)
      continue
    }
    if (place.row === undefined) {
      const element = containerFor(place.slot, place, null, rank, placement)
      wanted.add(place.slot)
      if (!inPlace(element, anchors[0]!, placement)) insertAt(element, anchors[0]!, placement)
      continue
    }
    for (const anchor of anchors) {
      const link = anchor.closest(place.row.link)
      const id = link === null ? undefined : serverIdOf(link.getAttribute("href") ?? "")
      if (link === null || id === undefined) continue
      const name = link.querySelector(place.row.name)?.textContent?.trim() || id
      const key = `${place.slot}|${id}`
      const element = containerFor(key, place, JSON.stringify({ server: { uuid: id, identifier: id, name } }), rank, placement)
      wanted.add(key)
      if (!inPlace(element, anchor, placement)) insertAt(element, anchor, placement)
    }
  }
  for (const [key, element] of placed) {
    if (wanted.has(key)) continue
    placed.delete(key)
    element.remove()
  }
  takeOver(path)
  if (path !== lastPath) {
    lastPath = path
    scheduleCheck()
  }
  pending = missing
}

let pending: Array<{ place: SlotPlace; pattern: string }> = []

let queued = false
/** One pass at the next frame (or within 100 ms where frames do not run, as in a background tab). */
const later = () => {
  if (queued) return
  queued = true
  const run = () => {
    if (!queued) return
    queued = false
    sync()
  }
  requestAnimationFrame(run)
  setTimeout(run, 100)
}

/** On an extension page the panel's own "not found" block gives way to the page outlet. */
const takeOver = (path: string) => {
  if (map === undefined || map.notFound === "") return
  const extensionPage = extensionPageOf(path) !== undefined
  if (extensionPage) {
    for (const element of candidates(map.notFound)) {
      if (!(element instanceof HTMLElement) || hidden.has(element)) continue
      element.style.setProperty("display", "none", "important")
      element.setAttribute("data-host-hidden", "")
      hidden.add(element)
    }
  }
  for (const element of hidden) {
    if (element.isConnected && extensionPage) continue
    hidden.delete(element)
    element.style.removeProperty("display")
    element.removeAttribute("data-host-hidden")
  }
}

/** After a navigation settles, anchors still missing on a rendered page are reported once per page and slot. */
const scheduleCheck = () => {
  if (settleTimer !== undefined) clearTimeout(settleTimer)
  settleTimer = setTimeout(() => {
    settleTimer = undefined
    if (map === undefined || document.querySelector(map.ready) === null) return
    sync()
    for (const { pattern, place } of pending) {
      if (place.optional !== undefined) continue
      const key = `${pattern}|${place.slot}`
      if (reported.has(key)) continue
      reported.add(key)
      const selectors = place.anchors.map((anchor) => anchor.selector).join(" | ")
      reportAnchor(`${map.kind}: the anchor of ${place.slot} is missing on ${pattern} (${selectors})`, place.slot)
    }
  }, settleMs)
}

/** Whether `key` is new in this tab's session storage (marks it); true when storage is unavailable. */
const firstInSession = (key: string): boolean => {
  try {
    if (sessionStorage.getItem(key) !== null) return false
    sessionStorage.setItem(key, "1")
  } catch {
    // Storage disabled (private mode, sandboxed frames): report every time rather than never.
  }
  return true
}

/** Slots an extension registers into that this panel version has no place for: reported once each. */
const watchRegistrations = () => {
  const absent = new Map((map?.absent ?? []).map((entry) => [entry.slot, entry.reason]))
  const check = () => {
    for (const registered of registry.get().values()) {
      for (const entry of registered.slots) {
        const reason = absent.get(entry.slot)
        const key = `${registered.id}|${entry.slot}`
        if (reason === undefined || reported.has(key)) continue
        reported.add(key)
        console.warn(`[host] ${registered.id} registers into ${entry.slot}, which has no place on ${map!.kind}: ${reason}`)
        // Once per browser session, not once per page load: the fact does not change between loads, and
        // reporting it on every full load runs into the diagnostics rate limit (429s in the console).
        if (!firstInSession(`host:absent:${key}`)) continue
        reportSlot(registered.id, `${entry.slot} has no place on ${map!.kind} ${map!.versions.join("/")}: ${reason}`, entry.slot)
      }
    }
  }
  registry.subscribe(check)
  check()
}

/** The panel's palette as `--host-*` defaults, before the theme layer reads them (theme.ts). */
const applyPalette = () => {
  if (map === undefined) return
  const computed = getComputedStyle(document.documentElement)
  const lines = Object.entries(map.theme).flatMap(([name, value]) => {
    const variable = /^var\((--[\w-]+)\)$/.exec(value)?.[1]
    if (variable === undefined) return [`--host-${name}:${value}`]
    const read = computed.getPropertyValue(variable).trim()
    if (read === "") return []
    return [`--host-${name}:${/^\d+(\.\d+)?[ ,]+\d+(\.\d+)?[ ,]+\d+(\.\d+)?$/.test(read) ? `rgb(${read.replace(/\s*,\s*|\s+/g, ", ")})` : read}`]
  })
  const style = document.createElement("style")
  style.setAttribute("data-host-panel", map.kind)
  style.textContent = `:root{${lines.join(";")}}\n${map.css}`
  document.head.appendChild(style)
}

/**
 * Starts the slot map of a real panel. Must run before containers.ts's watcher is created (see above).
 * `options.settleMs` shortens the wait before missing anchors count (the bench and tests use the default).
 */
export const startAnchors = (slotMap: SlotMap, options: { readonly settleMs?: number } = {}) => {
  map = slotMap
  if (options.settleMs !== undefined) settleMs = options.settleMs
  applyPalette()
  // Changes inside Host's own containers (extension components re-rendering) cannot move an anchor. A
  // container the panel just removed is put back at once (before the container watcher looks); anything
  // else — a busy console adding lines, a new section — is handled once per frame.
  const observer = new MutationObserver((records) => {
    if (!records.some((record) => !(record.target instanceof Element && record.target.closest("[data-host-slot]") !== null))) return
    if ([...placed.values()].some((element) => !element.isConnected)) sync()
    else later()
  })
  observer.observe(document.documentElement, { childList: true, subtree: true, attributes: true, attributeFilter: ["class"] })
  for (const name of slotMap.navigationEvents) addEventListener(name, sync)
  addEventListener("popstate", sync)
  on("navigate", sync)
  sync()
  watchRegistrations()
  return observer
}

/** Containers the engine holds now (diagnostics and tests). */
export const anchoredCount = () => placed.size
