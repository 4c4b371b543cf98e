import * as React from "react"
import type {
  ExtensionApi,
  ExtensionConfigState,
  Navigate,
  NavigateOptions,
  RegistrationView,
  RequestOptions,
  ServerContext,
  UserContext
} from "@host/sdk"
import { emit, on } from "./events.js"
import { holdsPermission, pageBase, pageHref, serverLinkId } from "./match.js"
import { navigateTo } from "./page.js"
import { slotEntries } from "./registry.js"
import { ScopeContext, usePage, useRegistry } from "./render.js"
import { createStore, type Store } from "./store.js"
import { theme } from "./theme.js"
import { csrfHeaders, initCsrf } from "./csrf.js"
import type { PublicSettingsBody } from "../http/contracts/Client.js"

// The hooks of docs/frontend.md "Hooks". They run inside extension components (the panel's React), so
// they are ordinary React hooks over the bridge's stores; the ones that need to know which extension
// calls them read the registration's scope, which every slot and page provides.

let baseUrl = ""
export const initHooks = (base: string, token: string, mode?: "host" | "panel") => {
  baseUrl = base.replace(/\/$/, "")
  initCsrf(token, mode)
}

export const useSlot = (slotId: string): ReadonlyArray<RegistrationView> => {
  const snapshot = useRegistry()
  return React.useMemo(
    () => slotEntries(snapshot, slotId).map((entry) => ({ extensionId: entry.extensionId, slot: entry.slot, component: entry.component, order: entry.order, props: entry.props })),
    [snapshot, slotId]
  )
}

/** The §12 error body's first detail, else the status line. */
const errorText = async (response: Response) => {
  try {
    const body = await response.json() as { errors?: Array<{ detail?: string }>; message?: string }
    const detail = body.errors?.[0]?.detail ?? body.message
    if (typeof detail === "string" && detail !== "") return detail
  } catch {
    // not JSON
  }
  return `${response.status} ${response.statusText}`.trim()
}

export class ExtensionApiError extends Error {
  constructor(message: string, readonly status: number) {
    super(message)
    this.name = "ExtensionApiError"
  }
}

export const useExtensionApi = <T = unknown>(options: { readonly extensionId: string; readonly baseUrl?: string }): ExtensionApi<T> => {
  const [state, setState] = React.useState<{ data: T | null; loading: boolean; error: string | null }>({ data: null, loading: false, error: null })
  const controllers = React.useRef(new Set<AbortController>())
  const mounted = React.useRef(true)
  React.useEffect(() => {
    mounted.current = true
    return () => {
      mounted.current = false
      for (const controller of controllers.current) controller.abort()
      controllers.current.clear()
    }
  }, [])
  const base = options.baseUrl ?? `${baseUrl}/api/client/host/${options.extensionId}`
  const request = React.useCallback(async <R,>(method: string, path = "", body?: unknown, init?: RequestOptions): Promise<R> => {
    const controller = new AbortController()
    controllers.current.add(controller)
    if (mounted.current) setState((previous) => ({ ...previous, loading: true, error: null }))
    const query = init?.query === undefined ? "" : `?${new URLSearchParams(Object.entries(init.query).map(([k, v]) => [k, String(v)]))}`
    const url = `${base.replace(/\/$/, "")}${path === "" || path.startsWith("/") ? path : `/${path}`}${query}`
    try {
      const response = await fetch(url, {
        method,
        credentials: "same-origin",
        signal: controller.signal,
        headers: {
          accept: "application/json",
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(method === "GET" ? {} : csrfHeaders()),
          ...init?.headers
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      if (!response.ok) throw new ExtensionApiError(await errorText(response), response.status)
      const text = await response.text()
      const data = (text === "" ? null : JSON.parse(text)) as R
      if (mounted.current) setState({ data: data as unknown as T, loading: false, error: null })
      return data
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      if (mounted.current && !controller.signal.aborted) setState((previous) => ({ ...previous, loading: false, error: message }))
      throw error
    } finally {
      controllers.current.delete(controller)
    }
  }, [base])
  return React.useMemo(() => ({
    ...state,
    get: <R = T,>(path?: string, init?: RequestOptions) => request<R>("GET", path, undefined, init),
    post: <R = T,>(path?: string, body?: unknown, init?: RequestOptions) => request<R>("POST", path, body, init),
    put: <R = T,>(path?: string, body?: unknown, init?: RequestOptions) => request<R>("PUT", path, body, init),
    patch: <R = T,>(path?: string, body?: unknown, init?: RequestOptions) => request<R>("PATCH", path, body, init),
    delete: <R = T,>(path?: string, init?: RequestOptions) => request<R>("DELETE", path, undefined, init)
  }), [state, request])
}

const states = new Map<string, { readonly store: Store<object>; readonly initial: object }>()

export const useExtensionState = <S extends object>(extensionId: string, initialState: S) => {
  let shared = states.get(extensionId)
  if (shared === undefined) {
    shared = { store: createStore<object>(initialState), initial: initialState }
    states.set(extensionId, shared)
  }
  const { initial, store } = shared
  const state = React.useSyncExternalStore(store.subscribe, store.get) as S
  const setState = React.useCallback((update: Partial<S> | ((state: S) => Partial<S>)) => {
    const current = store.get() as S
    const partial = typeof update === "function" ? update(current) : update
    store.set({ ...current, ...partial })
  }, [store])
  const reset = React.useCallback(() => store.set(initial), [store, initial])
  return [state, setState, reset] as const
}

/** Forgets an extension's shared state (when it is unregistered). */
export const dropExtensionState = (extensionId: string) => states.delete(extensionId)

export const useHostTheme = () => React.useSyncExternalStore(theme.subscribe, theme.get)

const useScope = () => React.useContext(ScopeContext)

export const useServerContext = (): ServerContext | null => {
  const state = usePage()
  const scope = useScope()
  return scope?.context.server ?? state.server
}

export const useUserContext = (): UserContext | null => usePage().user

export const usePermission = (permission: string): boolean => holdsPermission(permission, useUserContext(), useServerContext())

interface ConfigEntry {
  readonly store: Store<{ config: Record<string, unknown> | null; loading: boolean; error: string | null }>
  load: () => Promise<void>
  started: boolean
}

const configs = new Map<string, ConfigEntry>()

const configEntry = (extensionId: string): ConfigEntry => {
  let entry = configs.get(extensionId)
  if (entry !== undefined) return entry
  const store = createStore<{ config: Record<string, unknown> | null; loading: boolean; error: string | null }>({ config: null, loading: true, error: null })
  const created: ConfigEntry = {
    store,
    started: false,
    load: async () => {
      store.set({ ...store.get(), loading: true, error: null })
      try {
        const response = await fetch(`${baseUrl}/api/client/host/extensions/${extensionId}/settings`, { credentials: "same-origin", headers: { accept: "application/json" } })
        if (!response.ok) throw new Error(await errorText(response))
        const body = await response.json() as Partial<typeof PublicSettingsBody.Encoded>
        store.set({ config: body.data ?? {}, loading: false, error: null })
      } catch (error) {
        store.set({ ...store.get(), loading: false, error: error instanceof Error ? error.message : String(error) })
      }
    }
  }
  configs.set(extensionId, created)
  return created
}

/** Public settings, fetched once per page for all of the extension's components (refresh re-reads). */
export const useExtensionConfig = <C = Record<string, unknown>>(extensionId: string): ExtensionConfigState<C> => {
  const entry = configEntry(extensionId)
  const state = React.useSyncExternalStore(entry.store.subscribe, entry.store.get)
  React.useEffect(() => {
    if (!entry.started) {
      entry.started = true
      void entry.load()
    }
  }, [entry])
  return React.useMemo(() => ({ config: state.config as C | null, loading: state.loading, error: state.error, refresh: entry.load }), [state, entry])
}

export const useHostEvent = (event: string, callback: (payload: never) => void) => {
  const latest = React.useRef(callback)
  latest.current = callback
  React.useEffect(() => on(event, (payload) => (latest.current as (payload: unknown) => void)(payload)), [event])
}

export const useEmitEvent = () => React.useCallback((event: string, payload?: unknown) => emit(event, payload), [])

/**
 * `navigate("/stats")` goes to the calling extension's page `/stats` in the current area (the panel's
 * own paths); `{absolute: true}` takes a panel path as it is.
 */
export const useNavigate = (): Navigate => {
  const scope = useScope()
  const state = usePage()
  return React.useCallback((path: string, options?: NavigateOptions) => {
    if (options?.absolute === true || scope === null) {
      navigateTo(path, options?.replace === true)
      return
    }
    const area = state.area === "server" || state.area === "account" ? state.area : "dashboard"
    // The server id in the form the URL has (short identifier or uuid), as the sub-navigation's links.
    const base = pageBase(area, scope.extensionId, serverLinkId(state.server, state.path)) ?? pageBase("dashboard", scope.extensionId, undefined)!
    navigateTo(pageHref(base, path), options?.replace === true)
  }, [scope, state])
}
