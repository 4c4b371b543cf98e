// A tiny observable value for React's useSyncExternalStore: the bridge's state (registry, page
// context, theme) lives outside any React tree because many roots (one per slot container) share it.

export interface Store<T> {
  readonly get: () => T
  readonly set: (next: T) => void
  readonly subscribe: (listener: () => void) => () => void
}

export const createStore = <T>(initial: T): Store<T> => {
  let value = initial
  const listeners = new Set<() => void>()
  return {
    get: () => value,
    set: (next) => {
      if (Object.is(next, value)) return
      value = next
      for (const listener of [...listeners]) listener()
    },
    subscribe: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    }
  }
}
