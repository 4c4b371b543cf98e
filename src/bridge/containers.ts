import * as React from "react"
import { flushSync } from "react-dom"
import { createRoot, type Root } from "react-dom/client"
import { SlotView } from "./render.js"

// Slot containers for the page's whole life (docs/frontend.md "Containers"): any element with
// data-host-slot, found when the bridge starts and then by a MutationObserver that never stops. A
// container added by client-side navigation renders at once; a removed one unmounts its React root; a
// re-created one is a new element and renders again. A changed data-host-context re-renders in place.

interface Mounted {
  readonly root: Root
  slot: string
  context: string | null
}

const mounted = new Map<Element, Mounted>()

const render = (entry: Mounted) => {
  entry.root.render(React.createElement(SlotView, { slot: entry.slot, contextText: entry.context }))
}

const mount = (element: Element) => {
  const slot = element.getAttribute("data-host-slot")
  if (slot === null || slot === "") return
  const context = element.getAttribute("data-host-context")
  const existing = mounted.get(element)
  if (existing !== undefined) {
    if (existing.slot === slot && existing.context === context) return
    existing.slot = slot
    existing.context = context
    render(existing)
    return
  }
  const entry: Mounted = { root: createRoot(element), slot, context }
  mounted.set(element, entry)
  // A new container renders its registrations in the same task that found it: a root's first render
  // otherwise waits for React's scheduler, a later task that often comes after the browser painted the
  // page with the container still empty (on the embedded dashboard, 20 widgets a frame or more late).
  // Containers are found in a MutationObserver callback or at start, never inside a React render.
  flushSync(() => render(entry))
}

const scan = (node: Node) => {
  if (!(node instanceof Element)) return
  if (node.hasAttribute("data-host-slot")) mount(node)
  for (const element of node.querySelectorAll("[data-host-slot]")) mount(element)
}

const sweep = () => {
  for (const [element, entry] of mounted) {
    if (element.isConnected) continue
    mounted.delete(element)
    entry.root.unmount()
  }
}

/** How many containers are mounted now (diagnostics and tests). */
export const mountedCount = () => mounted.size

export const watchContainers = () => {
  const observer = new MutationObserver((records) => {
    let removed = false
    for (const record of records) {
      if (record.type === "attributes") {
        const element = record.target as Element
        if (element.hasAttribute("data-host-slot")) mount(element)
        else {
          const entry = mounted.get(element)
          if (entry !== undefined) {
            mounted.delete(element)
            entry.root.unmount()
          }
        }
        continue
      }
      if (record.removedNodes.length > 0) removed = true
      for (const node of record.addedNodes) scan(node)
    }
    if (removed) sweep()
  })
  observer.observe(document.documentElement, {
    childList: true,
    subtree: true,
    attributes: true,
    attributeFilter: ["data-host-slot", "data-host-context"]
  })
  scan(document.documentElement)
  return observer
}
