import sdkPackage from "../package.json" with { type: "json" }

// @host/sdk: thin on purpose. Every export delegates to the panel's bridge (`window.__HOST__.sdk`) at
// call time, so extension bundles stay small and share one registry, one React and one event bus. The
// types below are the contract of the browser API (docs/frontend.md); they need no React types, so the
// package stays dependency-free for authors who only use the backend half.

/** The SDK version this package is (the bridge compares majors with the bundle's). */
export const version: string = sdkPackage.version

/**
 * A React component: a function or a class (kept structural so the SDK needs no React types). The
 * default `never` accepts a component of any props.
 */
export type Component<P = never> = ((props: P) => unknown) | (new(props: P) => unknown)

/** The three areas that have extension pages. */
export type PageArea = "dashboard" | "server" | "account"
/** The area of the current panel page. */
export type Area = PageArea | "auth" | "admin"

export interface ServerContext {
  readonly uuid: string
  readonly name: string
  /** The signed-in user's permissions on this server (`*` = all). */
  readonly permissions: ReadonlyArray<string>
  readonly isOwner: boolean
}

export interface UserContext {
  /** A number on the embedded panel and Pterodactyl; the user's uuid on Pelican. */
  readonly id: number | string
  readonly username: string
  readonly email: string
  readonly admin: boolean
}

/**
 * What a component gets as `context`: the page's `{area, path, server, user}` merged with its container's
 * `data-host-context` (a per-row slot has its row's `server`, a file row its `file`, …).
 */
export interface SlotContext {
  readonly area: Area
  readonly path: string
  readonly server: ServerContext | null
  readonly user: UserContext | null
  readonly [key: string]: unknown
}

/** The props of every slot component (plus the registration's `props`). */
export interface SlotComponentProps {
  readonly extensionId: string
  readonly context: SlotContext
}

/** The props of an extension page component. */
export interface PageComponentProps extends SlotComponentProps {
  /** Route params (`/files/:name` → `{name}`). */
  readonly params: Readonly<Record<string, string>>
}

/**
 * When a registration renders. Every given condition must hold. `area`/`path` accept a value or a list;
 * a `path` may hold `:params` and a trailing `*`. The Notur-style booleans (`server: true` = only in the
 * server area, `dashboard: false` = never on the dashboard, …) and `pathStartsWith` work too.
 */
export interface WhenCondition {
  readonly area?: Area | ReadonlyArray<Area>
  readonly path?: string | RegExp | ReadonlyArray<string | RegExp>
  readonly pathStartsWith?: string | ReadonlyArray<string>
  readonly permission?: string | ReadonlyArray<string>
  readonly server?: boolean
  readonly dashboard?: boolean
  readonly account?: boolean
  readonly admin?: boolean
  readonly auth?: boolean
}

export interface SlotRegistration<P extends object = Record<string, unknown>> {
  /** One of the 65 slot ids (docs/frontend.md "Slots"); an unknown id is a console warning. */
  readonly slot: string
  readonly component: Component
  /** Ascending; ties go by extension id, then registration order. Default 0. */
  readonly order?: number
  /** Extra props given to the component. */
  readonly props?: P
  /** Rendered only for users holding this permission (owner, admin and `*` hold all). */
  readonly permission?: string
  readonly when?: WhenCondition
  /** A name for the deprecated manifest `frontend.slots` entries that refer to components by name. */
  readonly name?: string
}

export interface RouteRegistration {
  readonly area: PageArea
  /** Below the extension's base (`/server/{uuid}/ext/{vendor}/{name}`…); may hold `:params`. */
  readonly path: string
  /** The link text in the area's navigation. */
  readonly name: string
  /** A short text or emoji, or a component, shown before the name. */
  readonly icon?: string | Component
  /** Users without it get a 403 notice instead of the page, and no link. */
  readonly permission?: string
  readonly component: Component
  /** Leave the page out of the navigation (reachable by links only). */
  readonly hidden?: boolean
}

export interface ThemeConfig {
  /** `primary` or `--host-primary` → a CSS value. */
  readonly variables: Readonly<Record<string, string>>
  /** Higher wins when several extensions set one variable. Default 0. */
  readonly priority?: number
}

export interface ExtensionConfig {
  /** Must equal the manifest id; a different id is refused with a console error naming both. */
  readonly id: string
  readonly slots?: ReadonlyArray<SlotRegistration<object>>
  readonly routes?: ReadonlyArray<RouteRegistration>
  readonly cssIsolation?: boolean
  readonly theme?: ThemeConfig
  /** Components the deprecated manifest `frontend.slots` entries name. */
  readonly components?: Readonly<Record<string, Component>>
  readonly onInit?: (host: HostApi) => void
  readonly onDestroy?: () => void
}

export interface ExtensionApi<T = unknown> {
  readonly data: T | null
  readonly loading: boolean
  /** The server's error text (`errors[0].detail`), or the network failure. */
  readonly error: string | null
  readonly get: <R = T>(path?: string, init?: RequestOptions) => Promise<R>
  readonly post: <R = T>(path?: string, body?: unknown, init?: RequestOptions) => Promise<R>
  readonly put: <R = T>(path?: string, body?: unknown, init?: RequestOptions) => Promise<R>
  readonly patch: <R = T>(path?: string, body?: unknown, init?: RequestOptions) => Promise<R>
  readonly delete: <R = T>(path?: string, init?: RequestOptions) => Promise<R>
}

export interface RequestOptions {
  readonly headers?: Readonly<Record<string, string>>
  readonly query?: Readonly<Record<string, string | number | boolean>>
}

export interface ExtensionConfigState<C = Record<string, unknown>> {
  readonly config: C | null
  readonly loading: boolean
  readonly error: string | null
  readonly refresh: () => Promise<void>
}

export interface NavigateOptions {
  readonly replace?: boolean
  /** The path is a panel path (`/server/…`), not one below the extension's own pages. */
  readonly absolute?: boolean
}

export type Navigate = (path: string, options?: NavigateOptions) => void

/** The four framework events (docs/frontend.md "Events"); extensions may emit their own names too. */
export interface FrameworkEvents {
  readonly "extension:registered": { readonly id: string }
  readonly "extension:unregistered": { readonly id: string }
  readonly "theme:changed": { readonly variables: Readonly<Record<string, string>> }
  readonly navigate: { readonly path: string; readonly from: string }
}

export interface FrontendError {
  readonly extensionId: string
  readonly message: string
  readonly stack?: string
  readonly componentStack?: string
  readonly slot?: string
  readonly at: string
}

export interface RegistrationView {
  readonly extensionId: string
  readonly slot: string
  readonly component: Component
  readonly order: number
  readonly props: Readonly<Record<string, unknown>>
}

export interface Hooks {
  readonly useSlot: (slotId: string) => ReadonlyArray<RegistrationView>
  readonly useExtensionApi: <T = unknown>(options: { readonly extensionId: string; readonly baseUrl?: string }) => ExtensionApi<T>
  readonly useExtensionState: <S extends object>(extensionId: string, initialState: S) => readonly [S, (update: Partial<S> | ((state: S) => Partial<S>)) => void, () => void]
  readonly useHostTheme: () => Readonly<Record<string, string>>
}

export interface Sdk extends Hooks {
  readonly version: string
  readonly createExtension: (config: ExtensionConfig, meta?: { readonly sdkVersion?: string }) => void
  readonly getHostApi: () => HostApi
  readonly useServerContext: () => ServerContext | null
  readonly useUserContext: () => UserContext | null
  readonly usePermission: (permission: string) => boolean
  readonly useExtensionConfig: <C = Record<string, unknown>>(extensionId: string) => ExtensionConfigState<C>
  readonly useHostEvent: <K extends string>(event: K, callback: (payload: K extends keyof FrameworkEvents ? FrameworkEvents[K] : unknown) => void) => void
  readonly useEmitEvent: () => (event: string, payload?: unknown) => void
  readonly useNavigate: () => Navigate
}

/** `window.__HOST__` once the bridge ran. */
export interface HostApi {
  readonly version: string
  readonly baseUrl: string
  readonly csrfToken: string
  readonly user: UserContext | null
  readonly server: ServerContext | null
  readonly slots: ReadonlyArray<string>
  readonly sdk: Sdk
  readonly hooks: Hooks
  readonly events: {
    readonly on: (event: string, callback: (payload: unknown) => void) => () => void
    readonly emit: (event: string, payload?: unknown) => void
  }
  readonly diagnostics: { readonly errors: ReadonlyArray<FrontendError> }
  readonly setContext: (context: { readonly server?: ServerContext | null; readonly user?: UserContext | null }) => void
}

/** `window.__HOST__`; a clear error when the page has no bridge (a bundle loaded outside a Host panel). */
export const getHostApi = (): HostApi => {
  const host = (globalThis as { __HOST__?: Partial<HostApi> }).__HOST__
  if (host === undefined || host.sdk === undefined) {
    throw new Error("@host/sdk: window.__HOST__ is missing; extension bundles run inside a Host panel page, after /host/bridge.js")
  }
  return host as HostApi
}

const sdk = (): Sdk => getHostApi().sdk

export const createExtension = (config: ExtensionConfig): void => sdk().createExtension(config, { sdkVersion: version })
export const useSlot: Sdk["useSlot"] = (slotId) => sdk().useSlot(slotId)
export const useExtensionApi = <T = unknown>(options: { readonly extensionId: string; readonly baseUrl?: string }): ExtensionApi<T> =>
  sdk().useExtensionApi<T>(options)
export const useExtensionState = <S extends object>(extensionId: string, initialState: S) => sdk().useExtensionState(extensionId, initialState)
export const useHostTheme: Sdk["useHostTheme"] = () => sdk().useHostTheme()
export const useServerContext: Sdk["useServerContext"] = () => sdk().useServerContext()
export const useUserContext: Sdk["useUserContext"] = () => sdk().useUserContext()
export const usePermission: Sdk["usePermission"] = (permission) => sdk().usePermission(permission)
export const useExtensionConfig = <C = Record<string, unknown>>(extensionId: string): ExtensionConfigState<C> =>
  sdk().useExtensionConfig<C>(extensionId)
export const useHostEvent: Sdk["useHostEvent"] = (event, callback) => sdk().useHostEvent(event, callback)
export const useEmitEvent: Sdk["useEmitEvent"] = () => sdk().useEmitEvent()
export const useNavigate: Sdk["useNavigate"] = () => sdk().useNavigate()
