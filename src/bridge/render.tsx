import * as React from "react"
import type { PageArea, ServerContext, SlotContext } from "@host/sdk"
import { AccessPage, accessPageEnabled, accessPageId, AccessSection, accessSlot, mayManageAccess } from "./access.js"
import { report } from "./diagnostics.js"
import { extensionPageOf, holdsPermission, matchPath, pageBase, pageHref, serverLinkId, whenHolds } from "./match.js"
import { navigateTo, normaliseServer, page, type PageState } from "./page.js"
import { manifest, type Registered, registry, type RouteEntry, slotEntries } from "./registry.js"

// What renders inside a slot container (docs/frontend.md "Slots", "Pages"): each registration in its own
// error boundary and, with CSS isolation, its own root element; route-kind containers get the extension
// page matching the URL; nav-kind containers get links to the extension pages of their area.

export interface Scope {
  readonly extensionId: string
  readonly context: SlotContext
}

/** The registration a component renders under: hooks read the calling extension and its context here. */
export const ScopeContext = React.createContext<Scope | null>(null)

const routeSlots: Readonly<Record<string, PageArea>> = { "dashboard.page": "dashboard", "server.page": "server", "account.page": "account" }
/** Containers that list the extension pages of an area as links (before the components registered there). */
const navSlots: Readonly<Record<string, PageArea>> = { "server.subnav": "server", "account.subnav": "account", "navbar": "dashboard" }

export const usePage = (): PageState => React.useSyncExternalStore(page.subscribe, page.get)
export const useRegistry = () => React.useSyncExternalStore(registry.subscribe, registry.get)

interface BoundaryProps {
  readonly extensionId: string
  readonly name: string
  readonly slot: string
  readonly children?: React.ReactNode
}

class ErrorBoundary extends React.Component<BoundaryProps, { readonly error: Error | null }> {
  override state = { error: null as Error | null }

  static getDerivedStateFromError(error: unknown) {
    return { error: error instanceof Error ? error : new Error(String(error)) }
  }

  override componentDidCatch(error: unknown, info: React.ErrorInfo) {
    const failure = error instanceof Error ? error : new Error(String(error))
    console.error(`[host] ${this.props.extensionId} failed to render in ${this.props.slot}:`, failure)
    report({
      extensionId: this.props.extensionId,
      message: failure.message,
      ...(failure.stack === undefined ? {} : { stack: failure.stack }),
      ...(info.componentStack === undefined || info.componentStack === null ? {} : { componentStack: info.componentStack }),
      slot: this.props.slot
    })
  }

  override render() {
    if (this.state.error === null) return this.props.children
    return (
      <div className="host-ext-error" role="alert" data-host-error={this.props.extensionId}>
        <span className="host-ext-error__icon" aria-hidden="true">!</span>
        <span>
          <strong>{this.props.name}</strong> could not show this part.{" "}
          <span className="host-ext-error__detail">{this.state.error.message}</span>
        </span>
      </div>
    )
  }
}

interface RegistrationProps {
  readonly registered: Registered
  readonly slot: string
  readonly component: unknown
  readonly context: SlotContext
  readonly props: Readonly<Record<string, unknown>>
}

/** One registered component: scope, error boundary, isolation root. */
const Registration = ({ component, context, props, registered, slot }: RegistrationProps) => {
  const scope = React.useMemo(() => ({ extensionId: registered.id, context }), [registered.id, context])
  const element = React.createElement(component as React.ComponentType<Record<string, unknown>>, {
    ...props,
    extensionId: registered.id,
    context
  })
  return (
    <ScopeContext.Provider value={scope}>
      <ErrorBoundary key={registered.generation} extensionId={registered.id} name={registered.name} slot={slot}>
        {registered.isolationClass === null
          ? element
          : <div className={registered.isolationClass} data-host-extension={registered.id}>{element}</div>}
      </ErrorBoundary>
    </ScopeContext.Provider>
  )
}

const Notice = ({ code, text, title }: { readonly code: string; readonly title: string; readonly text: string }) => (
  <div className="host-page-notice" role="alert" data-host-notice={code}>
    <div className="host-page-notice__code">{code}</div>
    <div className="host-page-notice__title">{title}</div>
    <p>{text}</p>
  </div>
)

/** How links to extension pages navigate on this panel (its slot map's `pageLinks`; set once at start). */
let pageLinks: "client" | "document" = "client"

export const setPageLinks = (mode: "client" | "document") => {
  pageLinks = mode
}

const link = (event: React.MouseEvent<HTMLAnchorElement>, href: string) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  if (pageLinks === "document") {
    // The panel renders the page: Livewire's SPA navigation when the panel has it, else the browser's own.
    const livewire = (window as unknown as { Livewire?: { navigate?: (url: string) => void } }).Livewire
    if (typeof livewire?.navigate !== "function") return
    event.preventDefault()
    livewire.navigate(href)
    return
  }
  event.preventDefault()
  navigateTo(href)
}

const Icon = ({ icon }: { readonly icon: RouteEntry["icon"] }) => {
  if (icon === undefined) return null
  if (typeof icon === "string") return <span className="host-nav-link__icon" aria-hidden="true">{icon}</span>
  return <span className="host-nav-link__icon" aria-hidden="true">{React.createElement(icon as React.ComponentType)}</span>
}

/**
 * Links to the extension pages of one area the user may open (no params, not hidden). Server pages are
 * linked with the server id in the form the URL has (serverLinkId), so a direct load marks its tab active
 * as a click does, and the panel's own tabs (which follow the URL) keep that form too. The active link has
 * the class `active`, as the panels mark their own tabs, besides Host's `host-nav-link--active`.
 */
const NavLinks = ({ area, context, snapshot }: { readonly area: PageArea; readonly context: SlotContext; readonly snapshot: ReadonlyMap<string, Registered> }) => {
  const routes = [...snapshot.values()]
    .sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
    .flatMap((registered) => registered.routes.filter((route) => route.area === area).map((route) => ({ registered, route })))
    .filter(({ route }) => !route.hidden && !/[:*]/.test(route.path))
    .filter(({ route }) => route.permission === undefined || holdsPermission(route.permission, context.user, context.server))
  const serverId = area === "server" ? serverLinkId(context.server, context.path) : undefined
  const links = routes.flatMap(({ registered, route }) => {
    const base = pageBase(area, registered.id, serverId)
    return base === undefined ? [] : [{ registered, route, href: pageHref(base, route.path) }]
  })
  if (links.length === 0) return null
  return (
    <>
      {links.map(({ href, registered, route }) => {
        const active = context.path === href || context.path.startsWith(`${href}/`)
        return (
          <a
            key={route.key}
            href={href}
            className={active ? "host-nav-link host-nav-link--active active" : "host-nav-link"}
            aria-current={active ? "page" : undefined}
            data-host-extension={registered.id}
            onClick={(event) => link(event, href)}
          >
            <Icon icon={route.icon} />
            <span>{route.name}</span>
          </a>
        )
      })}
    </>
  )
}

/** The extension page the URL points at, in a route-kind container of its area. */
const PageOutlet = ({ area, context, snapshot }: { readonly area: PageArea; readonly context: SlotContext; readonly snapshot: ReadonlyMap<string, Registered> }) => {
  const target = extensionPageOf(context.path)
  if (target === undefined || target.area !== area) return null
  if (area === "server" && target.extensionId === accessPageId && accessPageEnabled()) {
    if (!mayManageAccess(context)) return <Notice code="403" title="Forbidden" text="Only the server's owner and admins manage extension access." />
    return <div className="host-ext-page" data-host-page={accessPageId}><AccessPage context={context} /></div>
  }
  const registered = snapshot.get(target.extensionId)
  if (registered === undefined) {
    // Still loading (a bundle of a just-enabled extension) renders nothing yet; an unknown one is a 404.
    if (manifest.has(target.extensionId)) return null
    return <Notice code="404" title="Page not found" text={`No enabled extension ${target.extensionId} has a page here.`} />
  }
  for (const route of registered.routes) {
    if (route.area !== area) continue
    const params = matchPath(route.path, target.rest)
    if (params === undefined) continue
    if (route.permission !== undefined && !holdsPermission(route.permission, context.user, context.server)) {
      return <Notice code="403" title="Forbidden" text={`You need the ${route.permission} permission to open ${route.name}.`} />
    }
    return (
      <div className="host-ext-page" data-host-page={registered.id}>
        <Registration
          registered={registered}
          slot={`${area}.page`}
          component={route.component}
          context={context}
          props={{ params }}
        />
      </div>
    )
  }
  return <Notice code="404" title="Page not found" text={`${registered.name} has no page at ${target.rest}.`} />
}

const parseContext = (text: string | null): Record<string, unknown> => {
  if (text === null || text === "") return {}
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : {}
  } catch {
    console.warn(`[host] a slot container's data-host-context is not JSON: ${text.slice(0, 120)}`)
    return {}
  }
}

/** The page's context merged with the container's (a row's `server` keeps the page's permissions for it). */
export const mergeContext = (state: PageState, containerText: string | null): SlotContext => {
  const own = parseContext(containerText)
  let server: ServerContext | null = state.server
  if ("server" in own) {
    const row = normaliseServer(own.server)
    server = row !== null && state.server !== null && row.uuid === state.server.uuid
      ? { ...state.server, ...row, permissions: row.permissions.length > 0 ? row.permissions : state.server.permissions, isOwner: row.isOwner || state.server.isOwner }
      : row
  }
  return { ...own, area: state.area, path: state.path, user: state.user, server }
}

export const SlotView = ({ contextText, slot }: { readonly slot: string; readonly contextText: string | null }) => {
  const state = usePage()
  const snapshot = useRegistry()
  const context = React.useMemo(() => mergeContext(state, contextText), [state, contextText])
  const routeArea = routeSlots[slot]
  const navArea = navSlots[slot]
  const entries = slotEntries(snapshot, slot).filter((entry) =>
    (entry.permission === undefined || holdsPermission(entry.permission, context.user, context.server)) &&
    whenHolds(entry.when, context, context.user, context.server)
  )
  return (
    <>
      {routeArea !== undefined && <PageOutlet area={routeArea} context={context} snapshot={snapshot} />}
      {navArea !== undefined && <NavLinks area={navArea} context={context} snapshot={snapshot} />}
      {slot === accessSlot && accessPageEnabled() && mayManageAccess(context) && context.server !== null && <AccessSection context={context} />}
      {entries.map((entry) => {
        const registered = snapshot.get(entry.extensionId)!
        return (
          <Registration
            key={`${entry.key}:${registered.generation}`}
            registered={registered}
            slot={slot}
            component={entry.component}
            context={context}
            props={entry.props}
          />
        )
      })}
    </>
  )
}
