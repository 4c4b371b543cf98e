import { type ReactNode, useEffect, useMemo, useState } from "react"
import { Route, Routes, useLocation, useParams } from "react-router-dom"
import { knownServers, type ServerSummary, usePanelJson } from "../../api.js"
import { demoServer } from "../../demo.js"
import { announceContext, bootstrap, type HostServer } from "../../host.js"
import { Page, SubNav, type SubNavItem } from "../../layout.js"
import { Slot } from "../../Slot.js"
import { StatusDot } from "../../ui.js"
import { Forbidden, NotFound } from "../errors.js"
import { ConsolePage } from "./ConsolePage.js"
import { FilesPage } from "./FilesPage.js"
import { FileEditorPage } from "./FileEditorPage.js"
import { DatabasesPage } from "./DatabasesPage.js"
import { SchedulesPage } from "./SchedulesPage.js"
import { ScheduleEditorPage } from "./ScheduleEditorPage.js"
import { UsersPage } from "./UsersPage.js"
import { BackupsPage } from "./BackupsPage.js"
import { NetworkPage } from "./NetworkPage.js"
import { StartupPage } from "./StartupPage.js"
import { SettingsPage } from "./SettingsPage.js"

// The server area (`/server/{uuid}/…`): the server's header, its sub-navigation and one page per panel
// section, each with its slot containers; the `server.page` outlet for extension pages sits on every
// page of the area. A server the user may not see is the 404 page for every path under it; a page the
// user lacks the permission for (subusers) is the 403 page, as in Pterodactyl.

interface Section extends SubNavItem {
  readonly path: string
  readonly permission: string | undefined
}

const sections: ReadonlyArray<Omit<Section, "to">> = [
  { path: "", label: "Console", icon: "terminal", permission: undefined, end: true },
  { path: "files", label: "Files", icon: "folder", permission: "file.read" },
  { path: "databases", label: "Databases", icon: "database", permission: "database.read" },
  { path: "schedules", label: "Schedules", icon: "clock", permission: "schedule.read" },
  { path: "users", label: "Users", icon: "users", permission: "user.read" },
  { path: "backups", label: "Backups", icon: "archive", permission: "backup.read" },
  { path: "network", label: "Network", icon: "network", permission: "allocation.read" },
  { path: "startup", label: "Startup", icon: "play", permission: "startup.read" },
  { path: "settings", label: "Settings", icon: "settings", permission: "settings.rename" }
]

const can = (server: ServerSummary, permission: string | undefined) =>
  permission === undefined || server.permissions.includes("*") || server.permissions.includes(permission)

const Guard = ({ children, permission, server }: { readonly server: ServerSummary; readonly permission: string | undefined; readonly children: ReactNode }) =>
  can(server, permission) ? <>{children}</> : permission === undefined ? <Forbidden /> : <Forbidden permission={permission} />

const hostServer = (server: ServerSummary): HostServer => ({
  uuid: server.uuid,
  name: server.name,
  permissions: server.permissions,
  isOwner: server.isOwner
})

const ServerPages = ({ server }: { readonly server: ServerSummary }) => {
  const demo = useMemo(() => demoServer(server.uuid), [server.uuid])
  const location = useLocation()
  const base = `/server/${server.uuid}`
  useEffect(() => announceContext(hostServer(server)), [location.pathname, server])
  const items = sections.filter((section) => can(server, section.permission)).map((section) => ({
    ...section,
    to: section.path === "" ? base : `${base}/${section.path}`
  }))
  const props = { server, demo }
  const guarded = (path: string, element: ReactNode) => (
    <Guard permission={sections.find((section) => section.path === path)?.permission} server={server}>{element}</Guard>
  )
  return (
    <>
      <div className="host-area-header">
        <Page>
          <Slot id="server.header" />
          <div className="flex flex-wrap items-center justify-between gap-3">
            <div className="min-w-0">
              <h1 className="truncate text-xl font-semibold text-host-text-primary">{server.name}</h1>
              <p className="mt-1 flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-host-text-muted">
                <StatusDot status={demo.status} />
                <span className="font-mono">{demo.address}</span>
                <span>{demo.egg}</span>
                <span>{demo.node}</span>
              </p>
            </div>
            <div className="flex items-center gap-2">
              <button className="host-button host-button--success" disabled={demo.status === "running"} type="button">Start</button>
              <button className="host-button" type="button">Restart</button>
              <button className="host-button host-button--danger" disabled={demo.status !== "running"} type="button">Stop</button>
            </div>
          </div>
          <SubNav items={items} label="Server" slot="server.subnav" />
        </Page>
      </div>
      <Page>
        <Routes>
          <Route element={<ConsolePage {...props} />} index />
          <Route element={guarded("files", <FilesPage {...props} />)} path="files" />
          <Route element={<Guard permission="file.read-content" server={server}><FileEditorPage {...props} /></Guard>} path="files/edit/*" />
          <Route element={guarded("databases", <DatabasesPage {...props} />)} path="databases" />
          <Route element={guarded("schedules", <SchedulesPage {...props} />)} path="schedules" />
          <Route element={guarded("schedules", <ScheduleEditorPage {...props} />)} path="schedules/:id" />
          <Route element={guarded("users", <UsersPage {...props} />)} path="users" />
          <Route element={guarded("backups", <BackupsPage />)} path="backups" />
          <Route element={guarded("network", <NetworkPage {...props} />)} path="network" />
          <Route element={guarded("startup", <StartupPage {...props} />)} path="startup" />
          <Route element={guarded("settings", <SettingsPage {...props} />)} path="settings" />
          <Route element={null} path="ext/:vendor/:name/*" />
          <Route element={<NotFound />} path="*" />
        </Routes>
        <Slot id="server.page" />
        <Slot id="server.footer" />
      </Page>
    </>
  )
}

/** The page's own server from the bootstrap (a direct load), as a summary until the detail arrives. */
const fromBootstrap = (uuid: string): ServerSummary | undefined => {
  const { server, user } = bootstrap()
  if (server === null || server.uuid !== uuid) return undefined
  return {
    uuid: server.uuid,
    name: server.name,
    owner: server.isOwner ? { id: user.id, username: user.username } : { id: 0, username: "…" },
    isOwner: server.isOwner,
    role: server.isOwner ? "owner" : user.admin ? "admin" : "subuser",
    permissions: server.permissions
  }
}

export const ServerArea = () => {
  const { uuid = "" } = useParams()
  const [initial] = useState(() => knownServers.get(uuid) ?? fromBootstrap(uuid))
  const server = usePanelJson<ServerSummary>(`/api/client/servers/${encodeURIComponent(uuid)}`, initial?.uuid === uuid ? initial : undefined)
  useEffect(() => {
    if (server.state === "ok" && server.data.subusers !== undefined) knownServers.set(server.data.uuid, server.data)
    if (server.state === "error" && server.status === 404) knownServers.delete(uuid)
  }, [server, uuid])
  const location = useLocation()
  const missing = server.state === "error" && server.status === 404
  useEffect(() => {
    if (missing) announceContext(null)
  }, [missing, location.pathname])
  if (server.state === "loading") {
    return <Page><p className="host-card p-6 text-sm text-host-text-muted">Loading server…</p></Page>
  }
  if (server.state === "error") {
    if (server.status === 404) return <NotFound />
    return <Page><p className="host-card p-6 text-sm text-host-danger" role="alert">{server.message}</p></Page>
  }
  return <ServerPages server={server.data} />
}
