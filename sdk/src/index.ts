// @host/sdk: thin on purpose. Every export delegates to the panel's bridge (`window.__HOST__`) at call
// time, so extension bundles stay small and share one registry, one React and one event bus.

export interface SlotRegistration {
  readonly slot: string
  readonly component: unknown
  readonly order?: number
}

export interface RouteRegistration {
  readonly area: string
  readonly path: string
  readonly name: string
  readonly component: unknown
}

export interface ExtensionConfig {
  /** Must equal the manifest id; a different id is refused with a console error naming both. */
  readonly id: string
  readonly slots?: ReadonlyArray<SlotRegistration>
  readonly routes?: ReadonlyArray<RouteRegistration>
  readonly cssIsolation?: boolean
}

type Bridge = {
  readonly createExtension: (config: ExtensionConfig) => unknown
  readonly hooks: Readonly<Record<string, (...args: ReadonlyArray<unknown>) => unknown>>
  readonly sdk?: Readonly<Record<string, (...args: ReadonlyArray<unknown>) => unknown>>
}

const bridge = (): Bridge => {
  const host = (globalThis as { __HOST__?: Bridge }).__HOST__
  if (host === undefined) {
    throw new Error("@host/sdk: window.__HOST__ is missing; extension bundles run inside a Host panel page")
  }
  return host
}

const call = (name: string, ...args: ReadonlyArray<unknown>): unknown => {
  const host = bridge()
  const fn = host.sdk?.[name] ?? host.hooks[name]
  if (fn === undefined) throw new Error(`@host/sdk: this panel's bridge does not provide ${name}`)
  return fn(...args)
}

export const createExtension = (config: ExtensionConfig): unknown => bridge().createExtension(config)

export const useSlot = (slotId: string) => call("useSlot", slotId)
export const useExtensionApi = (options: { readonly extensionId: string }) => call("useExtensionApi", options)
export const useExtensionState = <S>(extensionId: string, initialState: S) =>
  call("useExtensionState", extensionId, initialState)
export const useHostTheme = () => call("useHostTheme")
export const useServerContext = () => call("useServerContext")
export const useUserContext = () => call("useUserContext")
export const usePermission = (permission: string) => call("usePermission", permission) as boolean
export const useExtensionConfig = (extensionId: string) => call("useExtensionConfig", extensionId)
export const useHostEvent = (event: string, callback: (payload: unknown) => void) => call("useHostEvent", event, callback)
export const useEmitEvent = () => call("useEmitEvent") as (event: string, payload?: unknown) => void
export const useNavigate = () => call("useNavigate") as (to: string) => void
