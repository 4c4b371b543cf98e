// The frontend event bus (docs/frontend.md "Events"): framework events (`extension:registered`,
// `extension:unregistered`, `theme:changed`, `navigate`) and any name extensions emit to each other.
// A throwing listener is reported and never stops the others.

type Listener = (payload: unknown) => void

const listeners = new Map<string, Set<Listener>>()

export const on = (event: string, listener: Listener): (() => void) => {
  let set = listeners.get(event)
  if (set === undefined) {
    set = new Set()
    listeners.set(event, set)
  }
  set.add(listener)
  return () => {
    set.delete(listener)
  }
}

export const emit = (event: string, payload?: unknown): void => {
  const set = listeners.get(event)
  if (set === undefined) return
  for (const listener of [...set]) {
    try {
      listener(payload)
    } catch (error) {
      console.error(`[host] a listener of "${event}" threw:`, error)
    }
  }
}
