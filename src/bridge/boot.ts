// /host/boot.js (docs/frontend.md "/host/boot.js"): the one script a real panel's include loads. It must
// stay tiny (a size test holds it under 3 KB gzip) and import nothing. It takes the caller's bootstrap —
// inlined by the server ahead of this script when it could tell the page's signed-in user, else asked
// of Host — and only when there is a signed-in user loads the rest: Host's React when the page has none
// (Pterodactyl bundles React privately), the utility sheet and extension styles, the bridge, then the
// extension bundles. Host's scripts are inserted together with `async = false`, so the browser fetches
// them in parallel and runs them in the order inserted (no serial waterfall); the bundles come meanwhile in
// one answer and each runs as its own script after the bridge, in boot order. On the panel's admin pages
// it loads and asks nothing (server-rendered pages without slots): it only adds Host's "Extensions" item
// to Pterodactyl's admin sidebar (docs/panels.md "Finding Host's admin screens").

// The bootstrap's shape is the server's contract (http/contracts): a type-only import, erased from the build.
import type { BootstrapBody } from "../http/contracts/Client.js"

type Bootstrap = typeof BootstrapBody.Encoded["data"]

type HostWindow = Window & {
  __HOST__?: { sdk?: unknown }
  __HOST_BOOT__?: boolean
  /** What the server put ahead of this script (http/BootScript.ts): the bootstrap, for the pages of `server`. */
  __HOST_BOOTSTRAP__?: { readonly server: string | null; readonly data: Bootstrap }
  React?: unknown
  ReactDOM?: unknown
  PterodactylUser?: unknown
  SiteConfiguration?: unknown
}

/** The raw server segment of a server-area path: the one part of the bootstrap a path decides. */
const serverOf = (path: string) => /^\/server\/([^/]+)/.exec(path)?.[1] ?? null

/** The bootstrap from Host: null signed out (401, or the panel's 2FA checkpoint not passed). */
const ask = async (base: string, path: string): Promise<Bootstrap | null> => {
  const response = await fetch(`${base}api/client/host/bootstrap?path=${encodeURIComponent(path)}`, {
    credentials: "same-origin",
    headers: { accept: "application/json", "x-requested-with": "XMLHttpRequest" }
  })
  if (!response.ok) {
    if (response.status !== 401) console.warn(`[host] /api/client/host/bootstrap answered ${response.status}; extensions are off on this page`)
    return null
  }
  return ((await response.json()) as typeof BootstrapBody.Encoded).data
}

/**
 * Pterodactyl's admin layout (Blade, AdminLTE 2) has one sidebar menu, `ul.sidebar-menu`, in sections
 * under `li.header` rows. Host's item goes at the end of the first section (after "Application API" in
 * a stock panel; at the end of the menu when there is no second section), shaped as the layout's own
 * items and marked active under Host's admin screens as the layout marks its own. Pages without that
 * menu (Pelican's Filament admin: its plugin adds the item) are left alone.
 */
const addAdminItem = (base: string) => {
  const menu = document.querySelector("ul.sidebar-menu")
  if (menu === null || menu.querySelector("[data-host-admin]") !== null) return
  const item = document.createElement("li")
  item.setAttribute("data-host-admin", "")
  if (/^\/admin\/host(\/|$)/.test(location.pathname)) item.className = "active"
  const link = item.appendChild(document.createElement("a"))
  link.href = `${base}admin/host/extensions`
  // The layout's Font Awesome 4 icon font, as its own items use it.
  link.innerHTML = `<i class="fa fa-puzzle-piece"></i> <span>Extensions</span>`
  menu.insertBefore(item, menu.querySelectorAll(":scope > li.header")[1] ?? null)
}

const run = async () => {
  const global = window as HostWindow
  const path = location.pathname
  const inline = global.__HOST_BOOTSTRAP__
  delete global.__HOST_BOOTSTRAP__
  // Where Host is mounted: the folder this script came from, minus `host/boot.js`.
  const own = (document.currentScript as HTMLScriptElement | null)?.src ?? `${location.origin}/host/boot.js`
  const base = own.replace(/host\/boot\.js(\?.*)?$/, "")
  if (path === "/admin" || path.startsWith("/admin/")) {
    // Included deferred the menu is there; included otherwise, it is once the document is parsed.
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => addAdminItem(base))
    else addAdminItem(base)
    return
  }
  if (global.__HOST_BOOT__ === true || global.__HOST__?.sdk !== undefined) return
  global.__HOST_BOOT__ = true
  // Pterodactyl writes SiteConfiguration on every page and PterodactylUser only for a signed-in user: a
  // sign-in page needs no bootstrap request (it would only answer 401).
  if (global.SiteConfiguration !== undefined && global.PterodactylUser === undefined) return
  const vendor = global.React === undefined || global.ReactDOM === undefined ? ["host/vendor.js"] : []
  // An inlined bootstrap counts only when it was built for this page's server (or for none, off the server pages).
  const given = inline !== undefined && inline.server === serverOf(path) ? inline.data : undefined
  // Pterodactyl writes window.PterodactylUser only for a signed-in user: then the files every signed-in
  // page needs are fetched while the bootstrap is asked, instead of after it (one serial round trip less).
  if (given === undefined && global.PterodactylUser !== undefined) {
    for (const file of [...vendor, "host/bridge.js"]) {
      const link = document.createElement("link")
      link.rel = "preload"
      link.as = "script"
      link.href = `${base}${file}`
      document.head.appendChild(link)
    }
  }
  const bootstrap = given ?? await ask(base, path)
  // Signed out: the page stays the panel's own.
  if (bootstrap === null) return
  global.__HOST__ = bootstrap as { sdk?: unknown }
  const head = document.head
  const url = (file: string) => /^(https?:)?\//.test(file) ? file : `${base}${file}`
  const extensions = bootstrap.extensions ?? []
  for (const href of ["host/utility.css", ...extensions.flatMap((extension) => extension.styles ?? [])]) {
    const link = document.createElement("link")
    link.rel = "stylesheet"
    link.href = url(href)
    head.appendChild(link)
  }
  const script = (src: string) => {
    const element = document.createElement("script")
    element.async = false
    element.src = url(src)
    return head.appendChild(element)
  }
  const bridge = [...vendor, "host/bridge.js"].map(script).pop()!
  const bundles = extensions.flatMap((extension) => extension.bundle ?? [])
  // The bundles in one answer per 40 (docs/decisions.md "Under a real panel the bundles come in one
  // answer"): `<id>@<v>` of each `/host/ext/<id>/…?v=<v>` URL, each text run as its own script once the
  // bridge has run. Any other URL, a page whose CSP refuses inline scripts, or an answer that is not 200:
  // the files one by one, as scripts in boot order.
  const listed = bundles.map((bundle) => /^\/host\/ext\/([^/]+\/[^/]+)\/[^?]*\?v=([0-9a-f]{12})$/.exec(bundle)?.slice(1).join("@"))
  const probe = document.createElement("script")
  probe.text = "window.__HOST_INLINE__=1"
  head.appendChild(probe).remove()
  const inlineRuns = (global as { __HOST_INLINE__?: number }).__HOST_INLINE__ === 1
  if (bundles.length === 0) return
  if (!inlineRuns || listed.some((entry) => entry === undefined)) return void bundles.forEach(script)
  const slices: Array<Promise<Array<string>>> = []
  for (let start = 0; start < listed.length; start += 40) {
    slices.push(fetch(url(`host/bundles.json?b=${encodeURIComponent(listed.slice(start, start + 40).join(","))}`)).then((response) => {
      if (!response.ok) throw new Error(`/host/bundles.json answered ${response.status}`)
      return response.json() as Promise<Array<string>>
    }))
  }
  const ran = new Promise((resolve) => {
    bridge.onload = bridge.onerror = resolve
  })
  const texts = await Promise.all(slices).then((answers) => answers.flat(), (error: unknown) => {
    console.warn("[host] loading the bundles one by one:", error)
    return undefined
  })
  await ran
  if (texts?.length !== bundles.length) return void bundles.forEach(script)
  bundles.forEach((bundle, index) => {
    const element = document.createElement("script")
    element.dataset.hostExtension = listed[index]!.split("@")[0]!
    element.text = `${texts[index]}\n//# sourceURL=${new URL(url(bundle), location.href).href}`
    head.appendChild(element)
  })
}

run().catch((error: unknown) => console.warn("[host] boot.js could not load Host:", error))
