import { type ReactNode, useEffect, useRef, useState } from "react"
import { Link, NavLink, useLocation } from "react-router-dom"
import { bootstrap } from "./host.js"
import { Slot } from "./Slot.js"
import { Icon, useDismiss } from "./ui.js"

// The frame of every panel page: the top bar (brand, navigation, user menu, admin link, the navbar
// slots) above the page. Area layouts (dashboard, server, account) render inside it.

const signOut = async () => {
  const { csrfToken } = bootstrap()
  await fetch("/auth/logout", {
    method: "POST",
    credentials: "same-origin",
    headers: csrfToken === null ? {} : { "x-csrf-token": csrfToken }
  }).catch(() => undefined)
  window.location.assign("/auth/login")
}

const UserMenu = () => {
  const { user } = bootstrap()
  const [open, setOpen] = useState(false)
  const root = useRef<HTMLDivElement>(null)
  const location = useLocation()
  useEffect(() => setOpen(false), [location.pathname])
  useDismiss(open, root, () => setOpen(false))
  return (
    <div className="relative" ref={root}>
      <button
        aria-expanded={open}
        aria-haspopup="menu"
        className="flex items-center gap-2 rounded-md px-2 py-1.5 text-sm text-host-text-secondary hover:bg-host-bg-tertiary hover:text-host-text-primary"
        data-testid="user-menu"
        onClick={() => setOpen((value) => !value)}
        type="button"
      >
        <span className="host-avatar">{user.username.slice(0, 1).toUpperCase()}</span>
        <span className="hidden max-w-32 truncate sm:inline">{user.username}</span>
      </button>
      <div className="host-menu w-56" hidden={!open} role="menu">
        <div className="border-b border-host-border px-3 py-2">
          <p className="truncate text-sm font-medium text-host-text-primary">{user.username}</p>
          <p className="truncate text-xs text-host-text-muted">{user.email || "no email"}</p>
        </div>
        <Link className="host-menu__item" role="menuitem" to="/account">
          <Icon name="user" /> Account
        </Link>
        {user.admin ? (
          <a className="host-menu__item" href="/admin/host/extensions" role="menuitem">
            <Icon name="shield" /> Extensions admin
          </a>
        ) : null}
        <button className="host-menu__item host-menu__item--danger" onClick={() => void signOut()} role="menuitem" type="button">
          <Icon name="logout" /> Sign out
        </button>
      </div>
    </div>
  )
}

const TopLink = ({ children, end = false, icon, to }: { readonly to: string; readonly icon: string; readonly end?: boolean; readonly children: ReactNode }) => (
  <NavLink className="host-toplink" end={end} to={to}>
    <Icon name={icon} />
    <span className="hidden sm:inline">{children}</span>
  </NavLink>
)

export const TopBar = () => {
  const { panel, user } = bootstrap()
  const location = useLocation()
  const serversActive = location.pathname === "/" || location.pathname.startsWith("/server/")
  return (
    <header className="host-topbar">
      <Slot id="navbar.before" />
      <div className="mx-auto flex h-14 w-full max-w-7xl items-center gap-2 px-3 sm:gap-4 sm:px-6">
        <Link className="flex shrink-0 items-center gap-2 font-semibold text-host-text-primary" to="/">
          <span className="host-logo" aria-hidden="true">H</span>
          <span className="hidden truncate md:inline">{panel?.name ?? "Host panel"}</span>
        </Link>
        <Slot className="flex items-center gap-2" id="navbar.left" />
        <nav aria-label="Main" className="ml-auto flex items-center gap-1">
          <NavLink className={() => `host-toplink${serversActive ? " active" : ""}`} end to="/">
            <Icon name="server" />
            <span className="hidden sm:inline">Servers</span>
          </NavLink>
          <TopLink icon="user" to="/account">Account</TopLink>
          {user.admin ? (
            <a className="host-toplink" href="/admin/host/extensions" title="Extensions admin">
              <Icon name="shield" />
              <span className="hidden sm:inline">Admin</span>
            </a>
          ) : null}
        </nav>
        <Slot className="flex items-center gap-2" id="navbar" />
        <UserMenu />
      </div>
      <Slot id="navbar.after" />
    </header>
  )
}

export interface SubNavItem {
  readonly to: string
  readonly label: string
  readonly icon: string
  readonly end?: boolean
}

/**
 * An area's sub-navigation: the panel's own entries and the area's nav slots (where the bridge lists the
 * extension pages of the area). On a phone it scrolls sideways instead of wrapping.
 */
export const SubNav = ({ items, label, slot }: { readonly items: ReadonlyArray<SubNavItem>; readonly label: string; readonly slot: string }) => {
  const nav = useRef<HTMLElement>(null)
  const location = useLocation()
  // On a phone the current entry may sit off-screen in the scrolling strip: bring it into view.
  useEffect(() => {
    const current = nav.current?.querySelector<HTMLElement>("a[aria-current=page]")
    if (current !== null && current !== undefined && nav.current !== null && nav.current.scrollWidth > nav.current.clientWidth) {
      current.scrollIntoView({ block: "nearest", inline: "center" })
    }
  }, [location.pathname])
  return (
  <nav aria-label={label} className="host-subnav" ref={nav}>
    <Slot className="host-subnav__slot" id={`${slot}.before`} />
    {items.map((item) => (
      <NavLink end={item.end ?? false} key={item.to} to={item.to}>
        <Icon name={item.icon} />
        {item.label}
      </NavLink>
    ))}
    <Slot className="host-subnav__slot" id={slot} />
    <Slot className="host-subnav__slot" id={`${slot}.after`} />
  </nav>
  )
}

export const Page = ({ children }: { readonly children: ReactNode }) => (
  <div className="mx-auto w-full max-w-7xl px-3 py-5 sm:px-6 sm:py-6">{children}</div>
)
