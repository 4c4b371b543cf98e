import { HttpRouter, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Eta } from "eta"
import { HostConfig } from "../config/HostConfig.js"
import { LiveRuntime } from "../runtime/LiveState.js"
import { slotIds } from "../domain/Slots.js"
import type { PanelUser, ServerAccess } from "../panel/Panel.js"
import { accountView, classifyPanelPath, serverContextView, serverView } from "../panel/PanelView.js"
import { extensionMetadata } from "../runtime/ClientView.js"
import { type AuthenticatedRequest, authenticate, header } from "./Context.js"
import { badRequest, type HttpFailure, notFound, panelUnavailable } from "./Errors.js"
import { makeNonce, pageHeaders } from "./SecurityHeaders.js"
import { frameworkAsset } from "./Static.js"
import { respond } from "./api/Respond.js"
import { BootstrapBody } from "./contracts/Client.js"
import { AccountBody, ServerBody, ServersBody } from "./contracts/Panel.js"
import { SignedInUser } from "./contracts/Security.js"

// The reference panel over HTTP (docs/frontend.md "Reference panel"): one HTML shell for every panel
// page — `window.__HOST__`, the stylesheets, the vendor script (the page's React), the bridge, the
// enabled extensions' bundles in boot order and the panel app, in that order — the panel JSON the app
// reads, and the app's static files. Signed out, a panel page redirects to the sign-in form, which
// brings the user back to it.

const eta = new Eta({ autoEscape: true, useWith: false })

const shellTemplate = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title><%= it.title %></title>
<link rel="icon" href="/host/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/host/utility.css">
<link rel="stylesheet" href="/host/panel.css">
<% for (const href of it.styles) { %><link rel="stylesheet" href="<%= href %>">
<% } %><script nonce="<%= it.nonce %>">window.__HOST__ = <%~ it.bootstrap %>;</script>
<script defer src="/host/vendor.js"></script>
<script defer src="/host/bridge.js"></script>
<% for (const src of it.bundles) { %><script defer src="<%= src %>"></script>
<% } %><script defer src="/host/panel.js"></script>
</head>
<body>
<div id="app"></div>
<noscript>The panel needs JavaScript.</noscript>
</body>
</html>
`

/** JSON inside a <script> element (or a script file): nothing in it may close the element or break the line. */
export const scriptJson = (value: unknown) =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029")

type Live = Effect.Effect.Success<typeof authenticate>["live"]
type Access = ServerAccess | undefined

/**
 * The caller's `window.__HOST__` bootstrap (docs/frontend.md "Bootstrap"): the one builder behind the
 * embedded shell and GET /api/client/host/bootstrap, so the two can never disagree. `panel.kind` picks
 * the bridge's slot map under a real panel (docs/panels.md "Slot maps").
 */
export const bootstrapFor = (live: Live, user: NonNullable<Effect.Effect.Success<typeof authenticate>["auth"]["user"]>, csrfToken: string | null, access: Access) =>
  Effect.gen(function*() {
    const { config } = yield* HostConfig
    const extensions = [...live.generation.extensions.values()].map(extensionMetadata)
    const bootstrap = {
      version: config.version,
      baseUrl: yield* (yield* LiveRuntime).baseUrl,
      csrfToken,
      csrf: live.access.csrf,
      user: accountView(user),
      server: access === undefined ? null : serverContextView(access, user),
      panel: { kind: live.panelInfo.kind, name: live.panelInfo.name, version: live.panelInfo.version ?? null },
      extensions: extensions.map((extension) => ({
        id: extension.id,
        name: extension.name,
        version: extension.version,
        bundle: extension.bundle,
        styles: extension.styles,
        cssIsolation: extension.cssIsolation
      })),
      slots: slotIds
    }
    return { bootstrap, extensions }
  })

/**
 * GET /api/client/host/bootstrap[?path=<panel path>] (docs/frontend.md "/host/boot.js"): the bootstrap for
 * a page of a panel Host does not render. With the page's path, a server page's server (and the user's
 * permissions on it) is included as the embedded shell includes it; 401 signed out.
 */
export const bootstrapEndpoint = (path: string) =>
  Effect.gen(function*() {
    const caller = yield* SignedInUser
    const bootstrap = yield* bootstrapOfPage(caller, caller.user, path)
    return yield* respond(BootstrapBody, { data: bootstrap }, { headers: { "cache-control": "no-store" } })
  })

/** The raw path segment naming the server of a server-area page (`/server/<id>/…`), else null. */
export const serverSegmentOf = (path: string): string | null => /^\/server\/([^/]+)/.exec(path)?.[1] ?? null

/** A server segment decoded to the server's id, or undefined when it is not valid percent-encoding. */
export const decodedServerSegment = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}

/**
 * The bootstrap of the page at `path` for a signed-in caller: the server of a server page (when the user
 * may see it) is the only part that depends on the path. Shared by the endpoint and the inlined form
 * `/host/boot.js` carries (http/BootScript.ts), so the two cannot answer differently.
 */
export const bootstrapOfPage = (
  caller: AuthenticatedRequest,
  user: PanelUser,
  path: string
): Effect.Effect<typeof BootstrapBody.Encoded["data"], HttpFailure, HostConfig | LiveRuntime> =>
  Effect.gen(function*() {
    const { auth, live } = caller
    const segment = serverSegmentOf(path)
    const server = segment === null ? null : decodedServerSegment(segment)
    // Refused before the panel is asked: such a segment names no server (boot.js leaves such a page the plain file).
    if (server === undefined) return yield* badRequest(`path: the server segment "${segment}" is not valid percent-encoding`)
    const access = server === null ? undefined : yield* live.access.serverAccess(auth, server).pipe(Effect.mapError(panelUnavailable))
    return (yield* bootstrapFor(live, user, auth.session?.csrfToken ?? null, access)).bootstrap
  })

/** Paths that belong to the framework's other surfaces, never to the panel's pages. */
const reservedPrefixes = ["/api/", "/admin/", "/host/", "/auth/"] as const

/**
 * GET of any panel page, and — for a browser (`Accept: text/html`) — of any other path outside the
 * reserved ones, as the panel's 404 page.
 */
export const shell = Effect.gen(function*() {
  const { auth, live, request } = yield* authenticate
  const url = new URL(request.url, "http://panel.invalid")
  const pathname = url.pathname
  if (reservedPrefixes.some((prefix) => pathname.startsWith(prefix) || `${pathname}/` === prefix)) return yield* notFound()
  const page = classifyPanelPath(pathname)
  // A path that is no panel page is the panel's 404 page for a browser, and the JSON 404 of every other
  // answer for API clients and scripts (which do not ask for HTML).
  if (page.kind === "unknown" && !(header(request, "accept") ?? "").includes("text/html")) return yield* notFound()
  if (auth.user === undefined) {
    return HttpServerResponse.redirect(`/auth/login?redirect=${encodeURIComponent(`${pathname}${url.search}`)}`, {
      status: 303,
      headers: { "cache-control": "no-store" }
    })
  }
  const user = auth.user
  const access = page.kind === "page" && page.area === "server"
    ? yield* live.access.serverAccess(auth, page.serverUuid).pipe(Effect.mapError(panelUnavailable))
    : undefined
  // An unknown path, a server the user may not see and a page of an extension that is not enabled are
  // the same answer: the panel's 404 page (the bridge says which in the page outlet).
  const missing = page.kind === "unknown" || (page.area === "server" && access === undefined) ||
    (page.extension !== undefined && !live.generation.extensions.has(page.extension))
  const { bootstrap, extensions } = yield* bootstrapFor(live, user, auth.session?.csrfToken ?? null, access)
  const nonce = yield* makeNonce
  const html = eta.renderString(shellTemplate, {
    nonce,
    title: access === undefined ? live.panelInfo.name : `${access.server.name} · ${live.panelInfo.name}`,
    bootstrap: scriptJson(bootstrap),
    styles: extensions.flatMap((extension) => extension.styles ?? []),
    bundles: extensions.flatMap((extension) => extension.bundle ?? [])
  })
  return HttpServerResponse.text(html, {
    status: missing ? 404 : 200,
    contentType: "text/html; charset=utf-8",
    // The page carries the user and the session's CSRF token.
    headers: { "cache-control": "no-store", ...pageHeaders(nonce) }
  })
})

/** GET /api/client/account */
export const account = Effect.gen(function*() {
  const { user } = yield* SignedInUser
  return yield* respond(AccountBody, { data: accountView(user) })
})

/** GET /api/client/servers: the servers the user may see, with the user's permissions on each. */
export const servers = Effect.gen(function*() {
  const { auth, live, user } = yield* SignedInUser
  const accesses = yield* live.access.serversOf(auth).pipe(Effect.mapError(panelUnavailable))
  return yield* respond(ServersBody, { data: accesses.map((access) => serverView(live.panel, user, access)) })
})

/** GET /api/client/servers/{uuid}: 404 for a server the user may not see (its existence is not told). */
export const server = ({ uuid }: { readonly uuid: string }) =>
  Effect.gen(function*() {
    const { auth, live, user } = yield* SignedInUser
    const access = yield* live.access.serverAccess(auth, uuid).pipe(Effect.mapError(panelUnavailable))
    if (access === undefined) return yield* notFound(`no server ${uuid}`)
    return yield* respond(ServerBody, { data: serverView(live.panel, user, access, true) })
  })

/** The panel's static files and the page shell for every other GET (its JSON is a typed contract: http/contracts/Panel.ts). */
export const routes = HttpRouter.empty.pipe(
  HttpRouter.get("/host/panel.js", frameworkAsset("panel.js")),
  HttpRouter.get("/host/panel.css", frameworkAsset("panel.css")),
  HttpRouter.get("/host/favicon.svg", frameworkAsset("favicon.svg")),
  HttpRouter.get("/", shell),
  HttpRouter.get("/*", shell)
)
