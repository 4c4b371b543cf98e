import type { ReactNode } from "react"
import { createRoot } from "react-dom/client"
import { BrowserRouter, NavLink, Route, Routes } from "react-router-dom"
import { bootstrap } from "./api.js"
import { ActivityPage } from "./pages/Activity.js"
import { DesiredStatePage } from "./pages/DesiredState.js"
import { DetailPage } from "./pages/Detail.js"
import { ExtensionsPage } from "./pages/Extensions.js"
import { RegistryPage } from "./pages/Registry.js"
import { Icon } from "./ui.js"

// The admin screens (docs/admin.md): a single-page app on the panel's React (the page's globals) and
// theme, served for /admin/host/{extensions,registry,desired-state,activity}. Everything goes through the
// admin JSON API. Under a real panel the page wears that panel's name and palette (the page shell's
// `data-host-panel`, admin.css) and leads back to its admin area.

const links = [
  { to: "/admin/host/extensions", label: "Extensions", icon: "archive" },
  { to: "/admin/host/registry", label: "Registry", icon: "network" },
  { to: "/admin/host/desired-state", label: "Desired state", icon: "file" },
  { to: "/admin/host/activity", label: "Activity", icon: "clock" }
] as const

/**
 * Where "back" leads (docs/admin.md): the embedded panel's home, or under a real panel its own admin area
 * (Pterodactyl's and Pelican's are both at /admin), which is where an admin came from.
 */
const backOf = (panel: ReturnType<typeof bootstrap>["panel"]) =>
  panel.kind === "embedded"
    ? { href: "/", label: "Panel", title: "Back to the panel" }
    : { href: "/admin", label: "Admin", title: `Back to ${panel.name}'s admin area` }

const Layout = ({ children }: { readonly children: ReactNode }) => {
  const { panel, user } = bootstrap()
  const back = backOf(panel)
  return (
    <div className="ha-app">
      <a className="ha-skip" href="#ha-main">Skip to content</a>
      <header className="host-topbar ha-topbar">
        <div className="ha-topbar__inner">
          <a className="ha-brand" href={back.href}>
            <span className="host-logo" aria-hidden="true">H</span>
            <span className="ha-brand__text">
              <strong>{panel.name}</strong>
              <span className="ha-muted ha-small">Extensions admin</span>
            </span>
          </a>
          <nav aria-label="Admin" className="ha-nav">
            {links.map((link) => (
              <NavLink className="host-toplink" end={link.to !== "/admin/host/extensions"} key={link.to} to={link.to}>
                <Icon name={link.icon} />
                <span>{link.label}</span>
              </NavLink>
            ))}
          </nav>
          <div className="ha-user">
            <a className="host-toplink" href={back.href} title={back.title}><Icon name="back" /><span className="ha-hide-sm">{back.label}</span></a>
            <span className="host-avatar" title={user.username}>{user.username.slice(0, 1).toUpperCase()}</span>
          </div>
        </div>
      </header>
      <main className="ha-main" id="ha-main" tabIndex={-1}>{children}</main>
    </div>
  )
}

const NotFound = () => (
  <div className="ha-page-head"><div><h1>Not found</h1><p className="ha-muted">No admin screen at this address.</p></div></div>
)

const App = () => (
  <BrowserRouter>
    <Layout>
      <Routes>
        <Route element={<ExtensionsPage />} path="/admin/host/extensions" />
        <Route element={<DetailPage />} path="/admin/host/extensions/:vendor/:name" />
        <Route element={<RegistryPage />} path="/admin/host/registry" />
        <Route element={<DesiredStatePage />} path="/admin/host/desired-state" />
        <Route element={<ActivityPage />} path="/admin/host/activity" />
        <Route element={<NotFound />} path="*" />
      </Routes>
    </Layout>
  </BrowserRouter>
)

const container = document.getElementById("admin-app")
if (container === null) throw new Error("the admin page has no #admin-app element")
createRoot(container).render(<App />)
