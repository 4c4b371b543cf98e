import { Agent, request as httpRequest, createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import { pterodactylAdminPage } from "./pterodactyl-admin.js"

// The panel's web server for the bridge's real-panel tests (docs/panels.md "Slot maps"): pages shaped like
// Pterodactyl's or Pelican's, each with the one include `panel:install` adds (`/host/boot.js`, deferred,
// in <head>), on 127.0.0.1:0, and Host's three prefixes plus `/auth/` proxied to a real `host serve` on
// the same origin, as the panel's nginx snippet does. Identity comes from Host's embedded driver (its
// panel.yaml users); `/api/client/servers` and `/api/client/account` — the panel's own client API — are
// answered by the embedded panel's JSON, the stand-in of Pterodactyl's.
//
// One adaptation: the embedded driver reports `panel.kind: "embedded"`, so the proxied bootstrap (the
// endpoint's, and the one /host/boot.js may carry inlined) is given the kind of the panel this server
// stands in for (what the pterodactyl/pelican drivers report).

export type StandinKind = "pterodactyl" | "pelican"

export interface AccessHandler {
  (method: string, server: string, body: unknown): { readonly status: number; readonly body: unknown }
}

export interface StandinPanel {
  readonly url: string
  readonly kind: StandinKind
  /** Requests the stand-in saw, in order (method and path). */
  readonly requests: Array<string>
  readonly stop: () => Promise<void>
}

let appBundle: Promise<string> | undefined

/** Where the app's source is (bench/panel-load.bench.mjs runs this file bundled elsewhere and says). */
const defaultAppEntry = () => fileURLToPath(new URL("./pterodactyl-app.tsx", import.meta.url))

/** The Pterodactyl-shaped React app, bundled with its own private React (no window.React). */
const pterodactylApp = (entry: string) =>
  appBundle ??= build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: "iife",
    minify: true,
    platform: "browser",
    jsx: "automatic",
    define: { "process.env.NODE_ENV": "\"production\"" },
    logLevel: "warning"
  }).then((result) => result.outputFiles[0]!.text)

const pterodactylCss = `
body{margin:0;background:hsl(209,20%,25%);color:hsl(210,16%,82%);font-family:"IBM Plex Sans",system-ui,sans-serif;letter-spacing:.015em}
a{color:inherit}
#logo a{font-size:1.5rem;padding:0 1rem;text-decoration:none;color:hsl(214,15%,91%)}
.w-full.bg-neutral-900{background:hsl(210,24%,16%);box-shadow:0 4px 6px rgba(0,0,0,.2)}
[class*="NavigationBar__RightNavigation-sc-"]{display:flex;height:100%;align-items:center}
.navigation-link{display:flex;align-items:center;height:3.5rem;padding:0 1.5rem;text-decoration:none;color:hsl(210,16%,82%)}
.navigation-link.active{color:hsl(214,15%,91%);box-shadow:inset 0 -2px #06b6d4}
[class*="SubNavigation-sc-"]{background:hsl(209,18%,30%);box-shadow:0 1px 3px rgba(0,0,0,.2)}
[class*="SubNavigation-sc-"]>div{display:flex;align-items:center;max-width:1200px;margin:0 auto;font-size:.875rem;padding:0 .5rem;overflow-x:auto}
[class*="SubNavigation-sc-"]>div>a{display:inline-block;padding:.75rem 1rem;text-decoration:none;color:hsl(210,16%,82%)}
[class*="SubNavigation-sc-"]>div>a.active{color:hsl(214,15%,91%);box-shadow:inset 0 -2px #06b6d4}
[class*="PageContentBlock___StyledContentContainer-sc-"]{max-width:1200px;margin:1.5rem auto;padding:0 1rem}
[class*="PageContentBlock___StyledContentContainer2-sc-"]{max-width:1200px;margin:1rem auto}
[class*="ServerRow__StatusIndicatorBox-sc-"]{display:grid;grid-template-columns:auto 1fr auto;gap:1rem;align-items:center;background:hsl(209,18%,30%);padding:1rem;border-radius:.25rem;margin-bottom:.5rem;text-decoration:none;border-left:4px solid #10b981}
[class*="ServerRow___StyledP-sc-"]{font-size:1.125rem;margin:0;color:hsl(214,15%,91%)}
[class*="ServerRow___StyledP2-sc-"]{font-size:.875rem;margin:.25rem 0 0;color:hsl(211,13%,65%)}
[class*="ScreenBlock___StyledDiv-sc-"]{text-align:center;padding:3rem;background:hsl(209,18%,30%);border-radius:.5rem}
.console{background:#131a20;border-radius:.25rem;padding:.5rem;width:100%}
.console pre{min-height:10rem;margin:0;color:#d1d5db;font-family:"IBM Plex Mono",monospace}
.console input{width:100%;background:hsl(209,20%,25%);border:0;color:#fff;padding:.5rem;box-sizing:border-box}
.stat{background:hsl(209,18%,30%);padding:.75rem;border-radius:.25rem}
button{background:hsl(209,14%,37%);color:#fff;border:0;border-radius:.25rem;padding:.4rem .8rem}
[class*="DropdownMenu___StyledDiv-sc-"]{position:absolute;right:0;background:#fff;color:#222;border-radius:.25rem;padding:.25rem;min-width:10rem;z-index:5}
`

// Like wrapper.blade.php, PterodactylUser only for a signed-in user (here: a request with cookies).
const pterodactylPage = (title: string, signedIn: boolean) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<style>${pterodactylCss}</style>
${signedIn ? `<script>window.PterodactylUser = {"uuid":"standin","username":"standin","root_admin":false};</script>` : ""}
<script>window.SiteConfiguration = {"name":"Pterodactyl","locale":"en"};</script>
<script src="/host/boot.js" defer></script>
</head><body><div id="modal-portal"></div><div id="app"></div>
<script src="/standin/pterodactyl.js" defer></script>
</body></html>`

// Filament 3's markup as Pelican renders it, with the Host plugin's containers at its render hooks.
const pelicanLayout = (path: string) => {
  const server = /^\/server\/([^/]+)/.exec(path)?.[1]
  const container = (slot: string) => `<div data-host-slot="${slot}"></div>`
  const nav = server === undefined
    ? `<a href="/" wire:navigate class="fi-sidebar-item">Servers</a><a href="/profile" wire:navigate class="fi-sidebar-item">Profile</a>`
    : `${container("server.subnav.before")}<a href="/server/${server}/console" wire:navigate class="fi-sidebar-item">Console</a><a href="/server/${server}/files" wire:navigate class="fi-sidebar-item">Files</a>${container("server.subnav")}`
  let body = ""
  if (path === "/") body = `${container("dashboard.header")}${container("dashboard.widgets")}${container("dashboard.serverlist.before")}<div class="fi-ta">Servers table</div>${container("dashboard.serverlist.after")}${container("dashboard.footer")}`
  else if (server !== undefined && /\/console$|^\/server\/[^/]+$/.test(path)) body = `${container("server.header")}<div class="fi-header"><h1 class="fi-header-heading">Console</h1>${container("server.console.header")}<div class="fi-ac">Start Stop</div>${container("server.terminal.buttons")}</div>${container("server.console.info.before")}<div class="fi-wi">terminal</div>${container("server.console.info.after")}${container("server.console.footer")}${container("server.footer")}`
  else if (server !== undefined && path.endsWith("/files")) body = `${container("server.header")}<div class="fi-header"><h1 class="fi-header-heading">Files</h1>${container("server.files.actions")}</div>${container("server.files.header")}<div class="fi-ta">files table</div>${container("server.files.footer")}${container("server.footer")}`
  // The plugin's extension-page outlets (Filament pages rendering one container between the page hooks).
  else if (server !== undefined && path.startsWith(`/server/${server}/ext/`)) body = `${container("server.header")}${container("server.page")}${container("server.footer")}`
  else if (path.startsWith("/ext/")) body = container("dashboard.page")
  else if (path.startsWith("/account/ext/")) body = container("account.page")
  else if (path === "/profile") body = `${container("account.header")}<div class="fi-header"><h1 class="fi-header-heading">Profile</h1>${container("account.overview.before")}</div><form class="fi-form">…</form>${container("account.overview.after")}${container("account.footer")}`
  return `<div class="fi-layout"><aside class="fi-sidebar"><nav class="fi-sidebar-nav">${nav}</nav>${server === undefined ? "" : container("server.subnav.after")}</aside>
<div class="fi-main-ctn">${container("navbar.before")}<div class="fi-topbar">${container("navbar.left")}<span class="fi-logo">Pelican</span>${container("navbar")}<span class="fi-user-menu">user</span></div>${container("navbar.after")}
<main class="fi-main"><div class="fi-page">${body}</div></main></div></div>`
}

const pelicanPage = (path: string) => `<!doctype html>
<html lang="en" class="fi dark"><head><meta charset="utf-8"><title>Pelican</title>
<style>:root{--primary-400:96,165,250;--primary-500:59,130,246;--primary-600:37,99,235;--gray-50:249,250,251;--gray-300:209,213,219;--gray-400:156,163,175;--gray-500:107,114,128;--gray-700:55,65,81;--gray-800:31,41,55;--gray-900:17,24,39;--gray-950:3,7,18;--success-500:34,197,94;--danger-500:239,68,68;--warning-500:245,158,11;--info-500:59,130,246}
body{margin:0;background:rgb(var(--gray-950));color:rgb(var(--gray-300));font-family:Inter,system-ui,sans-serif}.fi-layout{display:flex;min-height:100vh}.fi-sidebar{width:16rem;background:rgb(var(--gray-900));padding:1rem}.fi-sidebar-item{display:block;padding:.5rem;color:rgb(var(--gray-300));text-decoration:none}.fi-main-ctn{flex:1}.fi-topbar{display:flex;gap:1rem;align-items:center;padding:.75rem 1rem;background:rgb(var(--gray-900))}.fi-main{padding:1.5rem}.fi-header-heading{color:rgb(var(--gray-50))}.fi-ta,.fi-wi,.fi-form{background:rgb(var(--gray-900));padding:1rem;border-radius:.75rem;margin:.75rem 0}</style>
<script src="/host/boot.js" defer></script>
</head><body>${pelicanLayout(path)}
<script>
// wire:navigate as Livewire does it: fetch the next page, swap the body, pushState, livewire:navigated;
// Livewire.navigate(url) is the same from script.
const navigate = async (href) => {
  const html = await (await fetch(href, { headers: { "x-livewire-navigate": "1" } })).text()
  const next = new DOMParser().parseFromString(html, "text/html")
  history.pushState({}, "", href)
  document.querySelector(".fi-layout").replaceWith(document.adoptNode(next.querySelector(".fi-layout")))
  document.dispatchEvent(new CustomEvent("livewire:navigated", { bubbles: true }))
}
window.Livewire = { navigate }
document.addEventListener("click", (event) => {
  const link = event.target.closest("a[wire\\\\:navigate]")
  if (!link) return
  event.preventDefault()
  navigate(link.href)
})
</script>
</body></html>`

/** Connections to Host are kept open, as nginx's upstream keepalive does. */
const agent = new Agent({ keepAlive: true, maxSockets: 64 })

const proxied = ["/host/", "/api/client/host/", "/admin/host/", "/auth/", "/api/client/servers", "/api/client/account"]

const readBody = (request: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks)))
    request.on("error", reject)
  })

const proxy = async (hostUrl: string, kind: StandinKind, request: IncomingMessage, response: ServerResponse) => {
  const target = new URL(request.url ?? "/", hostUrl)
  const body = await readBody(request)
  const headers = { ...request.headers, host: target.host }
  const upstream = httpRequest(target, { method: request.method, headers, agent }, (answer) => {
    const path = target.pathname
    if (path === "/api/client/host/bootstrap" && answer.statusCode === 200) {
      void readBody(answer).then((raw) => {
        const json = JSON.parse(raw.toString("utf8")) as { data: { panel: { kind: string } } }
        json.data.panel.kind = kind
        const text = JSON.stringify(json)
        const { "content-length": _length, "content-encoding": _encoding, ...rest } = answer.headers
        response.writeHead(200, { ...rest, "content-length": Buffer.byteLength(text) })
        response.end(text)
      })
      return
    }
    // boot.js with the caller's bootstrap inlined is never stored (cache-control no-store); the plain file is left alone.
    if (path === "/host/boot.js" && answer.statusCode === 200 && String(answer.headers["cache-control"]).includes("no-store")) {
      void readBody(answer).then((raw) => {
        const text = raw.toString("utf8").replace(`"panel":{"kind":"embedded"`, `"panel":{"kind":"${kind}"`)
        const { "content-length": _length, "content-encoding": _encoding, ...rest } = answer.headers
        response.writeHead(200, { ...rest, "content-length": Buffer.byteLength(text) })
        response.end(text)
      })
      return
    }
    response.writeHead(answer.statusCode ?? 502, answer.headers)
    answer.pipe(response)
  })
  upstream.on("error", (error) => {
    response.writeHead(502, { "content-type": "text/plain" })
    response.end(`proxy: ${error.message}`)
  })
  upstream.end(body)
}

/**
 * Starts a stand-in panel of `kind` in front of `host serve` at `hostUrl`. `access` answers
 * `/api/client/host/servers/{server}/access` (the drivers' endpoint) when given.
 */
export const startStandin = async (
  kind: StandinKind,
  hostUrl: string,
  options: { readonly access?: AccessHandler; readonly appEntry?: string } = {}
): Promise<StandinPanel> => {
  const appEntry = options.appEntry ?? defaultAppEntry()
  const requests: Array<string> = []
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://standin.invalid")
    const path = url.pathname
    requests.push(`${request.method} ${path}`)
    void (async () => {
      const access = /^\/api\/client\/host\/servers\/([^/]+)\/access$/.exec(path)
      if (access !== null && options.access !== undefined) {
        const raw = (await readBody(request)).toString("utf8")
        const answer = options.access(request.method ?? "GET", decodeURIComponent(access[1]!), raw === "" ? undefined : JSON.parse(raw))
        response.writeHead(answer.status, { "content-type": "application/json" })
        response.end(JSON.stringify(answer.body))
        return
      }
      if (proxied.some((prefix) => path.startsWith(prefix) || path === prefix.replace(/\/$/, ""))) return proxy(hostUrl, kind, request, response)
      if (path === "/standin/pterodactyl.js") {
        response.writeHead(200, { "content-type": "text/javascript" })
        response.end(await pterodactylApp(appEntry))
        return
      }
      if (kind === "pterodactyl" && (path === "/admin" || path.startsWith("/admin/"))) {
        response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
        response.end(pterodactylAdminPage(path))
        return
      }
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      response.end(kind === "pterodactyl" ? pterodactylPage("Pterodactyl", (request.headers.cookie ?? "") !== "") : pelicanPage(path))
    })().catch((error: unknown) => {
      response.writeHead(500, { "content-type": "text/plain" })
      response.end(String(error))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("the stand-in panel has no port")
  return {
    url: `http://127.0.0.1:${address.port}`,
    kind,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        // The proxied events stream never ends on its own.
        server.closeAllConnections()
        agent.destroy()
        server.close(() => resolve())
      })
  }
}
