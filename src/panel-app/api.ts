import { useEffect, useState } from "react"

// The panel JSON (docs/frontend.md "Panel JSON"): the app's only data source besides the bootstrap.

export interface ServerSummary {
  readonly uuid: string
  readonly name: string
  readonly owner: { readonly id: number; readonly username: string }
  readonly isOwner: boolean
  readonly role: "admin" | "owner" | "subuser"
  readonly permissions: ReadonlyArray<string>
  readonly subusers?: ReadonlyArray<{ readonly id: number; readonly username: string; readonly email: string; readonly permissions: ReadonlyArray<string> }>
}

export interface Account {
  readonly id: number
  readonly username: string
  readonly email: string
  readonly admin: boolean
}

export type Loaded<A> =
  | { readonly state: "loading" }
  | { readonly state: "ok"; readonly data: A }
  | { readonly state: "error"; readonly status: number; readonly message: string }

const errorText = (body: unknown, status: number): string => {
  const detail = (body as { errors?: ReadonlyArray<{ detail?: unknown }> } | undefined)?.errors?.[0]?.detail
  return typeof detail === "string" ? detail : `the panel answered ${status}`
}

/** GETs one panel JSON document (`{data}`), again whenever `url` changes; aborted on unmount. */
export const usePanelJson = <A>(url: string, initial?: A): Loaded<A> => {
  const [loaded, setLoaded] = useState<{ url: string; value: Loaded<A> }>(() => ({
    url,
    value: initial === undefined ? { state: "loading" } : { state: "ok", data: initial }
  }))
  useEffect(() => {
    const controller = new AbortController()
    fetch(url, { credentials: "same-origin", headers: { accept: "application/json" }, signal: controller.signal })
      .then(async (response) => {
        const body: unknown = await response.json().catch(() => undefined)
        if (!response.ok) {
          // A session that ended while the page was open: sign in again and come back here.
          if (response.status === 401) window.location.assign(`/auth/login?redirect=${encodeURIComponent(location.pathname + location.search)}`)
          setLoaded({ url, value: { state: "error", status: response.status, message: errorText(body, response.status) } })
          return
        }
        setLoaded({ url, value: { state: "ok", data: (body as { data: A }).data } })
      })
      .catch((error: unknown) => {
        if (controller.signal.aborted) return
        setLoaded({ url, value: { state: "error", status: 0, message: error instanceof Error ? error.message : String(error) } })
      })
    return () => controller.abort()
  }, [url])
  // A value fetched for another url is stale: show loading (or the initial value) until this one lands.
  if (loaded.url !== url) return initial === undefined ? { state: "loading" } : { state: "ok", data: initial }
  return loaded.value
}

/**
 * What the app already knows of each server (the dashboard's list, the last detail fetched, the page's
 * bootstrap), so entering a server's pages shows them at once while the fresh detail loads.
 */
export const knownServers = new Map<string, ServerSummary>()
