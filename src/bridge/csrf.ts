// The CSRF header of an unsafe request the bridge makes (docs/http.md "CSRF"), for useExtensionApi and
// the diagnostics reports alike: the session's token as X-CSRF-Token on the embedded panel; under a real
// panel (bootstrap `csrf: "panel"`) what the panel's own client sends — X-XSRF-TOKEN from the XSRF-TOKEN
// cookie, URL-decoded, read at each request (the panel rotates it): domain/CsrfHeaders.ts.

import { csrfRequestHeaders } from "../domain/CsrfHeaders.js"

let csrfToken = ""
let csrfMode: "host" | "panel" | undefined = undefined

export const initCsrf = (token: string, mode?: "host" | "panel") => {
  csrfToken = token
  csrfMode = mode
}

export const csrfHeaders = (): Record<string, string> => {
  const mode = csrfMode ?? ((globalThis as { __HOST__?: { csrf?: unknown } }).__HOST__?.csrf === "panel" ? "panel" : "host")
  return csrfRequestHeaders(mode, csrfToken, typeof document === "undefined" ? undefined : document.cookie)
}
