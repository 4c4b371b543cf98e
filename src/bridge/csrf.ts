// The CSRF header of an unsafe request the bridge makes (docs/http.md "CSRF"), for useExtensionApi and
// the diagnostics reports alike: the session's token as X-CSRF-Token on the embedded panel; under a real
// panel (bootstrap `csrf: "panel"`) what the panel's own client sends — X-XSRF-TOKEN from the XSRF-TOKEN
// cookie, URL-decoded, read at each request (the panel rotates it).

let csrfToken = ""
let csrfMode: "host" | "panel" | undefined = undefined

export const initCsrf = (token: string, mode?: "host" | "panel") => {
  csrfToken = token
  csrfMode = mode
}

export const csrfHeaders = (): Record<string, string> => {
  const mode = csrfMode ?? ((globalThis as { __HOST__?: { csrf?: unknown } }).__HOST__?.csrf === "panel" ? "panel" : "host")
  if (mode === "host") return { "x-csrf-token": csrfToken }
  const cookie = typeof document === "undefined"
    ? undefined
    : document.cookie.split(";").map((part) => part.trim()).find((part) => part.startsWith("XSRF-TOKEN="))
  if (cookie === undefined) return {}
  const value = cookie.slice("XSRF-TOKEN=".length)
  try {
    return { "x-xsrf-token": decodeURIComponent(value) }
  } catch {
    return { "x-xsrf-token": value }
  }
}
