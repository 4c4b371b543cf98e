import { useEffect, useState } from "react"
import { Link, useLocation } from "react-router-dom"
import { knownServers, type ServerSummary, usePanelJson } from "../api.js"
import { demoServer, formatUsage } from "../demo.js"
import { announceContext, bootstrap } from "../host.js"
import { Page } from "../layout.js"
import { Slot } from "../Slot.js"
import { DemoBadge, Icon, StatusDot, UsageBar } from "../ui.js"

// The dashboard area: `/` (the user's servers, one row each, with the per-row slots) and the dashboard
// extension pages under `/ext/{vendor}/{name}/…`, which mount into the `dashboard.page` outlet.

const ServerRow = ({ server }: { readonly server: ServerSummary }) => {
  const demo = demoServer(server.uuid)
  const context = { server: { uuid: server.uuid, name: server.name } }
  return (
    <li className="host-server-row" data-server={server.uuid}>
      <Link aria-label={`Open ${server.name}`} className="host-server-row__link" to={`/server/${server.uuid}`} />
      <div className="flex min-w-0 items-center gap-3">
        <span className={`host-server-icon host-server-icon--${demo.status}`}>
          <Icon className="h-5 w-5" name="server" />
        </span>
        <div className="min-w-0">
          <div className="flex min-w-0 flex-wrap items-center gap-x-2">
            <Slot context={context} id="dashboard.serverrow.name.before" />
            <span className="truncate font-semibold text-host-text-primary">{server.name}</span>
            <Slot context={context} id="dashboard.serverrow.name.after" />
            {server.role === "subuser" ? <span className="host-pill">subuser</span> : null}
            {server.role === "admin" ? <span className="host-pill">admin access</span> : null}
          </div>
          <div className="mt-0.5 flex min-w-0 flex-wrap items-center gap-x-2 text-xs text-host-text-muted">
            <Slot context={context} id="dashboard.serverrow.description.before" />
            <span>{demo.egg}</span>
            <span className="font-mono">{demo.address}</span>
            <Slot context={context} id="dashboard.serverrow.description.after" />
          </div>
        </div>
      </div>
      <div className="flex items-center gap-4">
        <StatusDot status={demo.status} />
      </div>
      <div className="host-server-row__limits">
        <UsageBar label="CPU" limit={demo.cpu.limit} text={`${demo.cpu.used} / ${demo.cpu.limit}%`} used={demo.cpu.used} />
        <UsageBar
          label="Memory"
          limit={demo.memory.limit}
          text={formatUsage(demo.memory.used, demo.memory.limit)}
          used={demo.memory.used}
        />
        <UsageBar
          label="Disk"
          limit={demo.disk.limit}
          text={formatUsage(demo.disk.used, demo.disk.limit)}
          used={demo.disk.used}
        />
        <Slot context={context} id="dashboard.serverrow.limits" />
      </div>
    </li>
  )
}

const ServerList = () => {
  const servers = usePanelJson<ReadonlyArray<ServerSummary>>("/api/client/servers")
  const { user } = bootstrap()
  useEffect(() => {
    if (servers.state === "ok") for (const server of servers.data) if (!knownServers.has(server.uuid)) knownServers.set(server.uuid, server)
  }, [servers])
  const [filter, setFilter] = useState("")
  const needle = filter.trim().toLowerCase()
  const shown = servers.state === "ok"
    ? servers.data.filter((server) => needle === "" || server.name.toLowerCase().includes(needle) || server.uuid.startsWith(needle))
    : []
  return (
    <>
      <div className="mb-5 flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-xl font-semibold text-host-text-primary">Your servers</h1>
          <p className="mt-1 text-sm text-host-text-muted">
            Signed in as {user.username}{user.admin ? " (administrator: every server is listed)" : ""}.
          </p>
        </div>
        <div className="flex flex-wrap items-center gap-3">
          <DemoBadge />
          {servers.state === "ok" && servers.data.length > 1 ? (
            <input
              aria-label="Filter servers"
              className="host-input w-48"
              onChange={(event) => setFilter(event.target.value)}
              placeholder="Filter servers…"
              type="search"
              value={filter}
            />
          ) : null}
        </div>
      </div>
      <Slot id="dashboard.header" />
      <Slot className="host-widgets" id="dashboard.widgets" />
      <Slot id="dashboard.serverlist.before" />
      {servers.state === "loading" ? <p className="host-card p-6 text-sm text-host-text-muted">Loading servers…</p> : null}
      {servers.state === "error" ? <p className="host-card p-6 text-sm text-host-danger" role="alert">{servers.message}</p> : null}
      {servers.state === "ok" && servers.data.length === 0
        ? <p className="host-card p-6 text-sm text-host-text-muted">You have no servers yet.</p>
        : null}
      {servers.state === "ok" && servers.data.length > 0 ? (
        <ul className="flex flex-col gap-3" data-testid="server-list">
          {shown.map((server) => <ServerRow key={server.uuid} server={server} />)}
        </ul>
      ) : null}
      {servers.state === "ok" && servers.data.length > 0 && shown.length === 0
        ? <p className="host-card p-6 text-sm text-host-text-muted">No server matches “{filter}”.</p>
        : null}
      <Slot id="dashboard.serverlist.after" />
      <Slot id="dashboard.footer" />
    </>
  )
}

export const DashboardArea = ({ extensionPage = false }: { readonly extensionPage?: boolean }) => {
  const location = useLocation()
  useEffect(() => announceContext(null), [location.pathname])
  return (
    <Page>
      {extensionPage ? null : <ServerList />}
      <Slot id="dashboard.page" />
    </Page>
  )
}
