import { type FormEvent, type ReactNode, useEffect, useMemo, useRef, useState } from "react"
import { Link, Route, Routes, useLocation, useParams } from "react-router-dom"
import { knownServers, type ServerSummary, usePanelJson } from "../api.js"
import {
  backups,
  consoleLines,
  databases,
  type DemoServer,
  demoServer,
  fileContents,
  files,
  formatBytes,
  formatMegabytes,
  schedules,
  startupVariables
} from "../demo.js"
import { announceContext, bootstrap, type HostServer } from "../host.js"
import { Page, SubNav, type SubNavItem } from "../layout.js"
import { Slot } from "../Slot.js"
import { Card, DemoBadge, Icon, MenuItem, PageTitle, RowMenu, StatusDot } from "../ui.js"
import { Forbidden, NotFound } from "./errors.js"

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

interface PageProps {
  readonly server: ServerSummary
  readonly demo: DemoServer
}

const Stat = ({ icon, label, value }: { readonly icon: string; readonly label: string; readonly value: ReactNode }) => (
  <div className="host-stat">
    <Icon className="h-5 w-5 shrink-0 text-host-primary-light" name={icon} />
    <div className="min-w-0">
      <p className="text-xs text-host-text-muted">{label}</p>
      <p className="break-words text-sm font-medium text-host-text-primary">{value}</p>
    </div>
  </div>
)

const ConsolePage = ({ demo, server }: PageProps) => {
  const [lines, setLines] = useState<ReadonlyArray<string>>(() => consoleLines(server.name))
  const [command, setCommand] = useState("")
  const output = useRef<HTMLPreElement>(null)
  useEffect(() => {
    output.current?.scrollTo({ top: output.current.scrollHeight })
  }, [lines])
  const send = (event: FormEvent) => {
    event.preventDefault()
    if (command.trim() === "") return
    setLines((current) => [...current, `> ${command}`, "[demo] The reference panel has no game server behind it; the command was not sent."])
    setCommand("")
  }
  return (
    <>
      <Slot id="server.console.header" />
      <div className="grid gap-4 lg:grid-cols-[minmax(0,1fr)_18rem]">
        <Card
          actions={
            <>
              <Slot className="flex items-center gap-2" id="server.terminal.buttons" />
              <DemoBadge />
            </>
          }
          className="min-w-0"
          title={<span className="flex items-center gap-2"><Icon name="terminal" /> Console</span>}
        >
          <pre className="host-terminal" ref={output}>{lines.join("\n")}</pre>
          <form className="flex items-center gap-2 border-t border-host-border p-3" onSubmit={send}>
            <span className="font-mono text-host-primary-light">$</span>
            <input
              aria-label="Console command"
              className="host-input flex-1 font-mono"
              onChange={(event) => setCommand(event.target.value)}
              placeholder="Type a command…"
              value={command}
            />
            <Slot className="flex items-center gap-2" id="server.console.command" />
          </form>
        </Card>
        <aside className="flex min-w-0 flex-col gap-3">
          <Slot id="server.console.info.before" />
          <div className="grid grid-cols-2 gap-3 lg:grid-cols-1">
            <Stat icon="network" label="Address" value={demo.address} />
            <Stat icon="clock" label="Uptime" value={demo.uptime} />
            <Stat icon="cpu" label="CPU" value={`${demo.cpu.used}% of ${demo.cpu.limit}%`} />
            <Stat icon="memory" label="Memory" value={`${formatMegabytes(demo.memory.used)} of ${formatMegabytes(demo.memory.limit)}`} />
            <Stat icon="disk" label="Disk" value={`${formatMegabytes(demo.disk.used)} of ${formatMegabytes(demo.disk.limit)}`} />
          </div>
          <Slot id="server.console.info.after" />
          <Slot id="server.console.sidebar" />
        </aside>
      </div>
      <Slot id="server.console.footer" />
    </>
  )
}

const FilesPage = ({ server }: PageProps) => (
  <>
    <PageTitle description="/home/container" icon="folder">Files</PageTitle>
    <div className="mb-3 flex flex-wrap items-center justify-end gap-2">
      <Slot className="flex flex-wrap items-center gap-2" id="server.files.actions" />
      <button className="host-button" type="button">New folder</button>
      <button className="host-button" type="button">New file</button>
      <button className="host-button host-button--primary" type="button">Upload</button>
    </div>
    <Slot id="server.files.header" />
    <Card>
      <ul className="divide-y divide-host-border" data-testid="file-list">
        {files.map((file) => {
          const context = { file: { name: file.name, path: `/${file.name}`, directory: file.directory, size: file.size } }
          const label = (
            <span className="flex min-w-0 items-center gap-3">
              <Icon className={`h-5 w-5 shrink-0 ${file.directory ? "text-host-warning" : "text-host-text-muted"}`} name={file.directory ? "folder" : "file"} />
              <span className="truncate">{file.name}</span>
            </span>
          )
          return (
            <li className="host-list-row" key={file.name}>
              {file.directory || fileContents[file.name] === undefined
                ? <span className="min-w-0 flex-1 text-host-text-primary">{label}</span>
                : (
                  <Link className="min-w-0 flex-1 text-host-text-primary hover:text-host-primary-light" to={`/server/${server.uuid}/files/edit/${encodeURIComponent(file.name)}`}>
                    {label}
                  </Link>
                )}
              <span className="hidden w-24 text-right text-xs text-host-text-muted sm:block">{file.directory ? "—" : formatBytes(file.size)}</span>
              <span className="hidden w-28 text-right text-xs text-host-text-muted md:block">{file.modified}</span>
              <RowMenu context={context} label={`Actions for ${file.name}`} slot="server.files.dropdown">
                <MenuItem>Rename</MenuItem>
                <MenuItem>Move</MenuItem>
                <MenuItem>{file.directory ? "Archive" : "Download"}</MenuItem>
                <MenuItem danger>Delete</MenuItem>
              </RowMenu>
            </li>
          )
        })}
      </ul>
    </Card>
    <Slot id="server.files.footer" />
  </>
)

const FileEditorPage = ({ server }: PageProps) => {
  const params = useParams()
  const path = decodeURIComponent(params["*"] ?? "")
  const [saved, setSaved] = useState(false)
  const content = fileContents[path]
  if (content === undefined) return <NotFound />
  return (
    <>
      <PageTitle description={`/home/container/${path}`} icon="file">
        <Link className="text-host-text-muted hover:text-host-text-primary" to={`/server/${server.uuid}/files`}>Files</Link>
        <span className="text-host-text-muted">/</span>
        <span className="truncate">{path}</span>
      </PageTitle>
      <Slot id="server.files.edit.before" />
      <Card>
        <textarea aria-label={`Contents of ${path}`} className="host-editor" defaultValue={content} spellCheck={false} />
        <div className="flex flex-wrap items-center justify-end gap-3 border-t border-host-border p-3">
          {saved ? <span className="text-xs text-host-text-muted" role="status">Demo: nothing was written.</span> : null}
          <button className="host-button host-button--primary" onClick={() => setSaved(true)} type="button">Save content</button>
        </div>
      </Card>
      <Slot id="server.files.edit.after" />
    </>
  )
}

const Table = ({ children, head }: { readonly head: ReadonlyArray<string>; readonly children: ReactNode }) => (
  <div className="overflow-x-auto">
    <table className="host-table">
      <thead>
        <tr>{head.map((cell, index) => <th key={index}>{cell}</th>)}</tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  </div>
)

const DatabasesPage = ({ server }: PageProps) => (
  <>
    <PageTitle description="MySQL databases for this server's plugins." icon="database">Databases</PageTitle>
    <Slot id="server.databases.before" />
    <Card actions={<button className="host-button host-button--primary" type="button">New database</button>} title="2 of 4 databases">
      <Table head={["Name", "Endpoint", "Username", "Connections"]}>
        {databases(server.uuid).map((database) => (
          <tr key={database.name}>
            <td className="font-medium text-host-text-primary">{database.name}</td>
            <td className="font-mono text-xs">{database.host}</td>
            <td className="font-mono text-xs">{database.username}</td>
            <td>{database.connections}</td>
          </tr>
        ))}
      </Table>
    </Card>
    <Slot id="server.databases.after" />
  </>
)

const SchedulesPage = ({ server }: PageProps) => (
  <>
    <PageTitle description="Tasks the panel runs on this server at set times." icon="clock">Schedules</PageTitle>
    <Slot id="server.schedules.before" />
    <Card>
      <ul className="divide-y divide-host-border" data-testid="schedule-list">
        {schedules.map((schedule) => (
          <li key={schedule.id}>
            <Link className="host-list-row hover:bg-host-bg-tertiary" to={`/server/${server.uuid}/schedules/${schedule.id}`}>
              <Icon className="h-5 w-5 shrink-0 text-host-primary-light" name="clock" />
              <span className="min-w-0 flex-1">
                <span className="block truncate font-medium text-host-text-primary">{schedule.name}</span>
                <span className="block text-xs text-host-text-muted">Last run {schedule.lastRun} · next {schedule.nextRun}</span>
              </span>
              <code className="hidden font-mono text-xs text-host-text-secondary sm:block">{schedule.cron}</code>
              <span className={`host-pill${schedule.active ? " host-pill--success" : ""}`}>{schedule.active ? "Active" : "Paused"}</span>
            </Link>
          </li>
        ))}
      </ul>
    </Card>
    <Slot id="server.schedules.after" />
  </>
)

const ScheduleEditorPage = ({ server }: PageProps) => {
  const { id } = useParams()
  const schedule = schedules.find((entry) => String(entry.id) === id)
  if (schedule === undefined) return <NotFound />
  const [minute, hour, day, month, weekday] = schedule.cron.split(" ")
  return (
    <>
      <PageTitle icon="clock">
        <Link className="text-host-text-muted hover:text-host-text-primary" to={`/server/${server.uuid}/schedules`}>Schedules</Link>
        <span className="text-host-text-muted">/</span>
        <span className="truncate">{schedule.name}</span>
      </PageTitle>
      <Slot id="server.schedules.edit.before" />
      <div className="grid gap-4 lg:grid-cols-[20rem_minmax(0,1fr)]">
        <Card title="Timing">
          <dl className="grid grid-cols-5 gap-2 p-4 text-center">
            {[["Minute", minute], ["Hour", hour], ["Day", day], ["Month", month], ["Weekday", weekday]].map(([label, value]) => (
              <div className="rounded-md bg-host-bg-tertiary px-1 py-2" key={label}>
                <dt className="text-[10px] uppercase tracking-wide text-host-text-muted">{label}</dt>
                <dd className="font-mono text-sm text-host-text-primary">{value}</dd>
              </div>
            ))}
          </dl>
          <p className="px-4 pb-4 text-xs text-host-text-muted">Next run {schedule.nextRun}.</p>
        </Card>
        <Card actions={<button className="host-button" type="button">New task</button>} title={`${schedule.tasks.length} task${schedule.tasks.length === 1 ? "" : "s"}`}>
          <ol className="divide-y divide-host-border">
            {schedule.tasks.map((task, index) => (
              <li className="host-list-row" key={index}>
                <span className="host-step">{index + 1}</span>
                <span className="min-w-0 flex-1">
                  <span className="block font-medium text-host-text-primary">{task.action}</span>
                  <span className="block truncate font-mono text-xs text-host-text-muted">{task.payload}</span>
                </span>
                <span className="text-xs text-host-text-muted">{task.offset === 0 ? "at once" : `after ${task.offset}s`}</span>
              </li>
            ))}
          </ol>
        </Card>
      </div>
      <Slot id="server.schedules.edit.after" />
    </>
  )
}

const UsersPage = ({ server }: PageProps) => {
  // A summary from the dashboard or the bootstrap has no subusers yet; the detail brings them.
  if (server.subusers === undefined) {
    return <p className="host-card p-6 text-sm text-host-text-muted">Loading users…</p>
  }
  const subusers = server.subusers
  return (
    <>
      <PageTitle description={`Owned by ${server.owner.username}. Subusers come from the panel's configuration.`} icon="users">Users</PageTitle>
      <Slot id="server.users.before" />
      <Card actions={<button className="host-button host-button--primary" type="button">New user</button>} title={`${subusers.length} subuser${subusers.length === 1 ? "" : "s"}`}>
        {subusers.length === 0 ? <p className="p-4 text-sm text-host-text-muted">This server has no subusers.</p> : (
          <ul className="divide-y divide-host-border">
            {subusers.map((subuser) => (
              <li className="host-list-row" key={subuser.id}>
                <span className="host-avatar">{subuser.username.slice(0, 1).toUpperCase()}</span>
                <span className="min-w-0 flex-1">
                  <span className="block truncate font-medium text-host-text-primary">{subuser.username}</span>
                  <span className="block truncate text-xs text-host-text-muted">{subuser.email}</span>
                </span>
                <span className="hidden max-w-xs truncate font-mono text-xs text-host-text-secondary sm:block">
                  {subuser.permissions.length === 0 ? "no permissions" : subuser.permissions.join(", ")}
                </span>
              </li>
            ))}
          </ul>
        )}
      </Card>
      <Slot id="server.users.after" />
    </>
  )
}

const BackupsPage = () => (
  <>
    <PageTitle description="3 of 5 backups used." icon="archive">Backups</PageTitle>
    <Slot id="server.backups.before" />
    <Card actions={<button className="host-button host-button--primary" type="button">Create backup</button>} title="Backups">
      <ul className="divide-y divide-host-border" data-testid="backup-list">
        {backups.map((backup) => (
          <li className="host-list-row" key={backup.uuid}>
            <Icon className="h-5 w-5 shrink-0 text-host-primary-light" name="archive" />
            <span className="min-w-0 flex-1">
              <span className="block truncate font-medium text-host-text-primary">{backup.name}</span>
              <span className="block text-xs text-host-text-muted">{formatBytes(backup.size)} · {backup.created}</span>
            </span>
            {backup.locked ? <span className="host-pill"><Icon className="h-3 w-3" name="lock" /> Locked</span> : null}
            <RowMenu context={{ backup: { uuid: backup.uuid, name: backup.name } }} label={`Actions for ${backup.name}`} slot="server.backups.dropdown">
              <MenuItem>Download</MenuItem>
              <MenuItem>Restore</MenuItem>
              <MenuItem>{backup.locked ? "Unlock" : "Lock"}</MenuItem>
              <MenuItem danger>Delete</MenuItem>
            </RowMenu>
          </li>
        ))}
      </ul>
    </Card>
    <Slot id="server.backups.after" />
  </>
)

const NetworkPage = ({ demo }: PageProps) => {
  const [ip, port] = demo.address.split(":")
  const allocations = [
    { ip, port: Number(port), alias: "play.example.test", primary: true, notes: "Game port" },
    { ip, port: Number(port) + 10, alias: "", primary: false, notes: "Dynmap" },
    { ip, port: Number(port) + 20, alias: "", primary: false, notes: "Voice chat" }
  ]
  return (
    <>
      <PageTitle description="The ports this server listens on." icon="network">Network</PageTitle>
      <Slot id="server.network.before" />
      <Card actions={<button className="host-button" type="button">Create allocation</button>} title="Allocations">
        <ul className="divide-y divide-host-border">
          {allocations.map((allocation) => (
            <li className="host-list-row" key={allocation.port}>
              <Icon className="h-5 w-5 shrink-0 text-host-primary-light" name="network" />
              <span className="min-w-0 flex-1">
                <span className="block font-mono text-sm text-host-text-primary">{allocation.ip}:{allocation.port}</span>
                <span className="block truncate text-xs text-host-text-muted">{allocation.alias || "no alias"} · {allocation.notes}</span>
              </span>
              {allocation.primary ? <span className="host-pill host-pill--success">Primary</span> : <button className="host-button" type="button">Make primary</button>}
            </li>
          ))}
        </ul>
      </Card>
      <Slot id="server.network.after" />
    </>
  )
}

const StartupPage = ({ demo }: PageProps) => (
  <>
    <PageTitle description={`${demo.egg} on ${demo.image}`} icon="play">Startup</PageTitle>
    <Slot id="server.startup.before" />
    <Card className="mb-4" title="Startup command">
      <pre className="overflow-x-auto p-4 font-mono text-xs text-host-text-secondary">
        java -Xms128M -XX:MaxRAMPercentage=95.0 -Dterminal.jline=false -jar {"{{SERVER_JARFILE}}"}
      </pre>
    </Card>
    <div className="grid gap-4 md:grid-cols-2">
      {startupVariables.map((variable) => (
        <Card key={variable.env} title={variable.name}>
          <div className="flex flex-col gap-2 p-4">
            <input aria-label={variable.name} className="host-input font-mono" defaultValue={variable.value} />
            <p className="text-xs text-host-text-muted">
              {variable.description} <code className="text-host-text-secondary">{variable.env}</code>
            </p>
          </div>
        </Card>
      ))}
    </div>
    <Slot id="server.startup.after" />
  </>
)

const SettingsPage = ({ demo, server }: PageProps) => {
  const { user } = bootstrap()
  return (
    <>
      <PageTitle icon="settings">Settings</PageTitle>
      <Slot id="server.settings.before" />
      <div className="grid gap-4 md:grid-cols-2">
        <Card title="SFTP details">
          <dl className="flex flex-col gap-3 p-4 text-sm">
            <div>
              <dt className="text-xs text-host-text-muted">Server address</dt>
              <dd className="font-mono text-host-text-primary">sftp://{demo.node}:2022</dd>
            </div>
            <div>
              <dt className="text-xs text-host-text-muted">Username</dt>
              <dd className="break-all font-mono text-host-text-primary">{user.username}.{server.uuid.slice(0, 8)}</dd>
            </div>
          </dl>
        </Card>
        <Card title="Server name">
          <div className="flex flex-col gap-3 p-4">
            <input aria-label="Server name" className="host-input" defaultValue={server.name} />
            <div className="flex justify-end">
              <button className="host-button host-button--primary" type="button">Save</button>
            </div>
          </div>
        </Card>
        <Card className="md:col-span-2" title="Reinstall server">
          <div className="flex flex-wrap items-center justify-between gap-3 p-4">
            <p className="max-w-xl text-sm text-host-text-muted">
              Reinstalling stops the server and runs its install script again. Some files may be deleted or changed.
            </p>
            <button className="host-button host-button--danger" type="button">Reinstall server</button>
          </div>
        </Card>
      </div>
      <Slot id="server.settings.after" />
    </>
  )
}

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
