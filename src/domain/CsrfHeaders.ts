// The CSRF header a browser request of Host's carries (docs/http.md "CSRF"), for the bridge and the admin
// screens alike: the session's token as X-CSRF-Token on the embedded panel; under a real panel what the
// panel's own client sends, X-XSRF-TOKEN with the XSRF-TOKEN cookie's value (URL-decoded), read at each
// request since the panel rotates it. Pure: the caller passes `document.cookie`.

export type CsrfMode = "host" | "panel"

export const csrfRequestHeaders = (mode: CsrfMode, token: string | null, cookies: string | undefined): Record<string, string> => {
  if (mode === "host") return token === null ? {} : { "x-csrf-token": token }
  const cookie = cookies?.split(";").map((part) => part.trim()).find((part) => part.startsWith("XSRF-TOKEN="))
  if (cookie === undefined) return {}
  const value = cookie.slice("XSRF-TOKEN=".length)
  try {
    return { "x-xsrf-token": decodeURIComponent(value) }
  } catch {
    return { "x-xsrf-token": value }
  }
}
