import type { HostApi, Sdk } from "@host/sdk"
import type { BootstrapBody } from "../http/contracts/Client.js"
import { accessCss, enableAccessPage } from "./access.js"
import { startAdminLink } from "./adminLink.js"
import { anchoredCount, startAnchors } from "./anchors.js"
import { mountedCount, watchContainers } from "./containers.js"
import { errors, initDiagnostics } from "./diagnostics.js"
import { emit, on } from "./events.js"
import * as hooks from "./hooks.js"
import { adoptShellAssets, currentGeneration, followEvents } from "./live.js"
import { initPage, page, serverUuidOf, setContext } from "./page.js"
import type { SlotMap } from "./panels/map.js"
import { pelican } from "./panels/pelican.js"
import { pterodactyl } from "./panels/pterodactyl.js"
import { bridgeSdkVersion, createExtension, initRegistry, type ManifestEntry, normaliseEntry, registry, unregister } from "./registry.js"
import { setPageLinks } from "./render.js"
import { injectStyles } from "./styles.js"
import { initTheme, theme } from "./theme.js"

// /host/bridge.js (docs/frontend.md): runs after the panel's vendor script (React) and before the
// extension bundles. It completes the `window.__HOST__` the panel's shell wrote with the registry, the
// hooks, the SDK object bundles import as `@host/sdk`, the event bus, `setContext` and diagnostics, then
// watches the page for slot containers and follows the server's events stream for the page's life.

type Shell = Partial<{
  version: string
  baseUrl: string
  csrfToken: string
  user: unknown
  server: unknown
  extensions: ReadonlyArray<unknown>
  slots: ReadonlyArray<string>
  panel: { readonly kind?: string }
}> & Record<string, unknown>

/** The slot map of each real panel kind (docs/panels.md "Slot maps"); the embedded panel renders its own containers. */
const slotMaps: Readonly<Record<string, SlotMap>> = { pterodactyl, pelican }

/**
 * Under a real panel nobody calls setContext: when the user moves to another server's pages, the bridge
 * asks Host for that server (and the user's permissions on it) with the bootstrap endpoint.
 */
const followServerContext = (baseUrl: string) => {
  let asked = ""
  on("navigate", () => {
    const uuid = serverUuidOf(location.pathname)
    const current = page.get().server
    if (uuid === undefined || asked === uuid || (current !== null && (current.uuid === uuid || (current as { readonly identifier?: unknown }).identifier === uuid))) return
    asked = uuid
    fetch(`${baseUrl}/api/client/host/bootstrap?path=${encodeURIComponent(location.pathname)}`, {
      credentials: "same-origin",
      headers: { accept: "application/json", "x-requested-with": "XMLHttpRequest" }
    })
      .then((response) => response.ok ? response.json() as Promise<typeof BootstrapBody.Encoded> : undefined)
      .then((body) => {
        asked = ""
        if (body?.data?.server !== undefined && serverUuidOf(location.pathname) === uuid) setContext({ server: body.data.server })
      })
      .catch(() => {
        asked = ""
      })
  })
}

type BridgeWindow = { __HOST__?: Shell; React?: unknown; ReactDOM?: unknown }

/** The hooks `window.__HOST__.hooks` carries (the SDK exports these and more). */
const hookSet = {
  useSlot: hooks.useSlot,
  useExtensionApi: hooks.useExtensionApi,
  useExtensionState: hooks.useExtensionState,
  useHostTheme: hooks.useHostTheme
}

/** The object bundles import as `@host/sdk`; `getHostApi` answers the completed `window.__HOST__`. */
const makeSdk = (host: () => HostApi) => {
  const sdk = {
    version: bridgeSdkVersion,
    createExtension,
    getHostApi: host,
    ...hookSet,
    useServerContext: hooks.useServerContext,
    useUserContext: hooks.useUserContext,
    usePermission: hooks.usePermission,
    useExtensionConfig: hooks.useExtensionConfig,
    useHostEvent: hooks.useHostEvent,
    useEmitEvent: hooks.useEmitEvent,
    useNavigate: hooks.useNavigate,
    /** What a bundle gets for `@host/sdk`: createExtension remembers the SDK version it was built with. */
    forBundle: (version: string) => ({
      ...sdk,
      createExtension: (config: Parameters<Sdk["createExtension"]>[0]) => createExtension(config, { sdkVersion: version })
    })
  }
  return sdk
}

/** What the bridge reads of the shell's `window.__HOST__`: the mount path, the session's CSRF token, the manifest entries. */
const readShell = (shell: Shell) => ({
  baseUrl: typeof shell.baseUrl === "string" ? shell.baseUrl.replace(/\/$/, "").replace(/^https?:\/\/[^/]+/, "") : "",
  csrfToken: typeof shell.csrfToken === "string" ? shell.csrfToken : "",
  entries: (shell.extensions ?? []).map(normaliseEntry).filter((entry): entry is ManifestEntry => entry !== undefined)
})

/**
 * Completes the shell's object in place (the panel may hold a reference to it): the registry, hooks,
 * SDK, event bus, diagnostics and context; `user` and `server` follow the page's context from now on.
 */
const completeHost = (shell: Shell, baseUrl: string, csrfToken: string): Record<string, unknown> => {
  const host: Record<string, unknown> = shell
  Object.assign(host, {
    version: typeof shell.version === "string" ? shell.version : bridgeSdkVersion,
    baseUrl,
    csrfToken,
    extensions: shell.extensions ?? [],
    slots: shell.slots ?? [],
    sdk: makeSdk(() => host as unknown as HostApi),
    hooks: hookSet,
    createExtension,
    registry: {
      get: () => registry.get(),
      subscribe: registry.subscribe,
      unregister,
      /** Ids of the extensions registered now. */
      ids: () => [...registry.get().keys()]
    },
    events: { on, emit },
    diagnostics: { errors, containers: mountedCount, anchored: anchoredCount },
    theme: { get: () => theme.get() },
    setContext,
    context: () => page.get(),
    generation: () => currentGeneration()
  })
  Object.defineProperty(host, "user", { get: () => page.get().user, enumerable: true, configurable: true })
  Object.defineProperty(host, "server", { get: () => page.get().server, enumerable: true, configurable: true })
  return host
}

/**
 * Under a real panel, its slot map first (and its palette before the theme reads it): the anchors'
 * observer must run before the container watcher's (anchors.ts).
 */
const startSlotMap = (kind: string, baseUrl: string, admin: boolean) => {
  const slotMap = slotMaps[kind]
  if (slotMap === undefined) return
  startAnchors(slotMap)
  setPageLinks(slotMap.pageLinks ?? "client")
  // A root admin finds Host's admin screens beside the panel's own admin link.
  if (admin && slotMap.adminLink !== undefined) startAdminLink(slotMap.adminLink, `${baseUrl}/admin/host/extensions`)
  // Pterodactyl's subusers cannot hold extension permissions: Host's access page grants them.
  if (slotMap.kind === "pterodactyl") {
    enableAccessPage()
    const style = document.createElement("style")
    style.textContent = accessCss
    document.head.appendChild(style)
  }
  followServerContext(baseUrl)
}

/** Once per page: complete `window.__HOST__`, then render into the page and follow it for its life. */
const boot = () => {
  const global = window as unknown as BridgeWindow
  if (global.React === undefined || global.ReactDOM === undefined) {
    console.error("[host] /host/bridge.js needs window.React and window.ReactDOM (the panel's vendor script) loaded before it")
    return
  }
  if ((global.__HOST__ as { sdk?: unknown } | undefined)?.sdk !== undefined) return
  const shell: Shell = global.__HOST__ ?? {}
  if (global.__HOST__ === undefined) console.warn("[host] window.__HOST__ was not set by the panel; no extension is enabled on this page")
  const { baseUrl, csrfToken, entries } = readShell(shell)
  const initial = { user: shell.user, server: shell.server }
  const host = completeHost(shell, baseUrl, csrfToken)
  initPage(initial)
  initRegistry(entries, shell.slots ?? [], () => host as unknown as HostApi)
  initDiagnostics(baseUrl)
  hooks.initHooks(baseUrl, csrfToken)
  global.__HOST__ = host as Shell
  startSlotMap(shell.panel?.kind ?? "", baseUrl, (shell.user as { readonly admin?: unknown } | undefined)?.admin === true)
  injectStyles()
  initTheme()
  adoptShellAssets()
  watchContainers()
  followEvents(baseUrl)
}

boot()
