import * as React from "react"
import { createRoot } from "react-dom/client"
import { BrowserRouter, Link, NavLink, Route, Routes, useLocation, useParams } from "react-router-dom"

// A stand-in of Pterodactyl 1.11's client frontend, shaped like the DOM its production build renders
// (docs/panels.md "Slot maps": ids, styled-components display-name classes `Name-sc-<hash>-N`, Tailwind
// strings, one `section` per route fading out as `.fade-exit`). Like the real one it bundles React
// privately (no window.React), routes with the History API, re-renders the console on a timer, and
// remounts its whole router once shortly after load. `window.__standin` lets a test re-render or remount.

/**
 * A server as the panel's list gives it. `identifier` is Pterodactyl's short id: the panel's own links
 * (`/server/${server.id}`) use it, and its router takes either it or the uuid in the URL.
 */
interface Server { readonly uuid: string; readonly identifier?: string; readonly name: string; readonly description?: string }

/**
 * The SubNavigation component's styles as the real build's styled-components inserts them (read from the
 * CSSOM of a v1.11.8 production build; `jZPsWO` is its generated class). Its children rule styles any
 * `div` child of the tab row as a padded tab: a container put into the row is one unless its own rule
 * outranks this one. The stand-in page's stylesheet styled the row itself with a sideways scroll; the real
 * row has none (the component scrolls), hence the `overflow-x: visible`.
 */
const subNavigationCss = `
.jZPsWO{width:100%;background-color:hsla(209,18%,30%,1);box-shadow:0 1px 3px 0 rgba(0,0,0,.1),0 1px 2px 0 rgba(0,0,0,.06);overflow-x:auto}
.jZPsWO > div{display:flex;align-items:center;font-size:.875rem;line-height:1.25rem;margin-left:auto;margin-right:auto;padding-left:.5rem;padding-right:.5rem;max-width:1200px;overflow-x:visible}
.jZPsWO > div > a,.jZPsWO > div > div{display:inline-block;padding:.75rem 1rem;color:hsla(211,13%,65%,1);text-decoration:none;white-space:nowrap;transition:all 150ms cubic-bezier(.4,0,.2,1)}
.jZPsWO > div > a:not(:first-of-type),.jZPsWO > div > div:not(:first-of-type){margin-left:.5rem}
.jZPsWO > div > a:hover,.jZPsWO > div > div:hover{color:hsla(214,15%,91%,1)}
.jZPsWO > div > a:active,.jZPsWO > div > div:active,.jZPsWO > div > a.active,.jZPsWO > div > div.active{color:hsla(214,15%,91%,1);box-shadow:rgb(8,145,178) 0 -2px inset}
`
const injected = document.createElement("style")
injected.setAttribute("data-styled", "")
injected.textContent = subNavigationCss
document.head.appendChild(injected)

const cls = (...names: ReadonlyArray<string>) => names.join(" ")
const sc = (name: string, hash: string, n: number) => `${name}-sc-${hash}-${n}`

const Nav = () => (
  <div className="w-full bg-neutral-900 shadow-md overflow-x-auto">
    <div className="mx-auto w-full flex items-center h-[3.5rem] max-w-[1200px]">
      <div id="logo" className="flex-1"><Link to="/" className="text-2xl font-header px-4 no-underline text-neutral-200">Pterodactyl</Link></div>
      <div className={cls(sc("NavigationBar__RightNavigation", "kz3hrs", 0), "kLkEWp")}>
        <NavLink to="/" end className="navigation-link">Dashboard</NavLink>
        <NavLink to="/account" className="navigation-link">Account</NavLink>
        <a href="/admin" className="navigation-link">Admin</a>
      </div>
    </div>
  </div>
)

const Page = ({ children }: { readonly children?: React.ReactNode }) => (
  <>
    <div className={cls(sc("PageContentBlock___StyledContentContainer", "uaab4z", 0), "ContentContainer-sc-x3r2dw-0 jyeSuy")}>{children}</div>
    <div className={cls(sc("PageContentBlock___StyledContentContainer2", "uaab4z", 1), "ContentContainer-sc-x3r2dw-0 jyeSuy")}>
      <p className="text-center text-neutral-500 text-xs">© 2015 - 2026 Pterodactyl Software</p>
    </div>
  </>
)

const ScreenBlock = ({ title }: { readonly title: string }) => (
  <div className={cls(sc("ScreenBlock___StyledDiv", "zrh1h6", 0), "dWaGYN")}><h2>{title}</h2><p>The requested resource was not found.</p></div>
)

const Dashboard = ({ servers }: { readonly servers: ReadonlyArray<Server> }) => (
  <Page>
    {servers.length === 0 && <p className={`${sc("DashboardContainer___StyledP2", "1topkxf", 3)} jVPRyV`}>There are no servers associated with your account.</p>}
    {servers.map((server) => (
      <Link key={server.uuid} to={`/server/${server.identifier ?? server.uuid}`} className={cls("GreyRowBox-sc-1xo9c6v-0", sc("ServerRow__StatusIndicatorBox", "1ibsw91", 2), "dyLna")}>
        <div className={sc("ServerRow___StyledDiv", "1ibsw91", 3)}><span className="icon">■</span></div>
        <div className={sc("ServerRow___StyledDiv2", "1ibsw91", 4)}>
          <p className={sc("ServerRow___StyledP", "1ibsw91", 5)}>{server.name}</p>
          {server.description !== undefined && <p className={sc("ServerRow___StyledP2", "1ibsw91", 6)}>{server.description}</p>}
        </div>
        <div className={sc("ServerRow___StyledDiv4", "1ibsw91", 8)}><span>CPU 3%</span> <span>512 MiB</span></div>
      </Link>
    ))}
  </Page>
)

const SubNavigation = ({ links }: { readonly links: ReadonlyArray<readonly [string, string]> }) => (
  <div className={cls(sc("SubNavigation", "lfuaoi", 0), "jZPsWO")}>
    <div>{links.map(([to, label]) => <NavLink key={to} to={to} end>{label}</NavLink>)}</div>
  </div>
)

const Console = ({ server }: { readonly server: Server }) => {
  const [tick, setTick] = React.useState(0)
  // Live stats: the console re-renders on its own, as the websocket's updates make it.
  React.useEffect(() => {
    const timer = setInterval(() => setTick((value) => value + 1), 500)
    return () => clearInterval(timer)
  }, [])
  return (
    <Page>
      <div className="w-full flex gap-4 items-end mb-4">
        <div className="hidden sm:block flex-1"><h1 className="font-header text-2xl text-neutral-50">{server.name}</h1><p className="text-sm">{server.description}</p></div>
        <div className="flex-1 self-end">
          <div className="flex sm:justify-end space-x-2"><button>Start</button><button>Restart</button><button>Stop</button></div>
        </div>
      </div>
      <div className="grid grid-cols-4 gap-2 sm:gap-4 mb-4">
        <div className="flex col-span-4 lg:col-span-3">
          <div className="style-module_4LBM1DKx console">
            <pre className="terminal">[{tick}] server is running</pre>
            <div className="relative"><input aria-label="Console command input." placeholder="Type a command..." /></div>
          </div>
        </div>
        <div className="grid grid-cols-6 col-span-4 lg:col-span-1 order-last lg:order-none gap-2">
          <div className="col-span-6 stat">Address 10.0.0.2:25565</div>
          <div className="col-span-6 stat">Uptime {tick}s</div>
        </div>
      </div>
      <div className="grid grid-cols-1 md:grid-cols-3 gap-2 sm:gap-4"><div>CPU graph</div><div>Memory graph</div><div>Network graph</div></div>
    </Page>
  )
}

const Dropdown = ({ inner }: { readonly inner: string }) => {
  const [open, setOpen] = React.useState(false)
  return (
    <div className="relative">
      <button type="button" className="menu-button" onClick={() => setOpen(!open)}>…</button>
      {open && (
        <div className={cls(sc("DropdownMenu___StyledDiv", "sc9ycs", 0), "menu")}>
          {inner === "file"
            ? <div className={sc("FileDropdownMenu__StyledRow", "1f5ui9k", 0)}>Rename</div>
            : <div className={sc("BackupContextMenu___StyledDiv", "1mppcxk", 1)}>Download</div>}
        </div>
      )}
    </div>
  )
}

const Files = ({ id }: { readonly id: string }) => (
  <Page>
    <div className="flex flex-wrap-reverse md:flex-nowrap mb-4">
      <div className={sc("FileManagerBreadcrumbs___StyledDiv", "1vnj0iw", 0)}>/home/container/</div>
    </div>
    <div className="flex justify-end gap-2"><button>New Folder</button><a href={`/server/${id}/files/new`}>New File</a></div>
    <div className="file-row">server.properties <Dropdown inner="file" /></div>
  </Page>
)

// Like the panel's pages, the list arrives with a client-API answer after the page body rendered, so
// React appends it behind whatever the bridge already put at the end of the body.
const useLoaded = () => {
  const [loaded, setLoaded] = React.useState(false)
  React.useEffect(() => {
    let live = true
    fetch("/api/client/servers", { credentials: "same-origin", headers: { accept: "application/json" } })
      .finally(() => live && setLoaded(true))
    return () => {
      live = false
    }
  }, [])
  return loaded
}

const titled = (title: string, inner?: string) => () => {
  const loaded = useLoaded()
  return (
    <Page>
      <h2 className="text-neutral-100">{title}</h2>
      {inner === "editor" && <div className={sc("CodemirrorEditor__EditorContainer", "11vdumf", 0)}>editor</div>}
      {inner === "schedule" && <div className={sc("ScheduleEditContainer___StyledDiv2", "1mldiua", 3)}>Every 5 minutes</div>}
      {inner === "backups" && <div className="backup-row">backup-1 <Dropdown inner="backup" /></div>}
      {loaded && <div className="list-loaded text-sm text-neutral-400">{title}: loaded from the API</div>}
    </Page>
  )
}

const pages: ReadonlyArray<readonly [string, string, React.ComponentType]> = [
  ["databases", "Databases", titled("Databases")],
  ["schedules", "Schedules", titled("Schedules")],
  ["users", "Users", titled("Users")],
  ["backups", "Backups", titled("Backups", "backups")],
  ["network", "Network", titled("Network")],
  ["startup", "Startup", titled("Startup")],
  ["settings", "Settings", titled("Settings")],
  ["activity", "Activity", titled("Activity")]
]

/** Routes inside a `section` per location; the previous one lingers as `.fade-exit` for 150 ms. */
const Transition = ({ children }: { readonly children: (path: string) => React.ReactNode }) => {
  const location = useLocation()
  const [leaving, setLeaving] = React.useState<string | null>(null)
  const previous = React.useRef(location.pathname)
  React.useEffect(() => {
    if (previous.current === location.pathname) return
    setLeaving(previous.current)
    previous.current = location.pathname
    const timer = setTimeout(() => setLeaving(null), 150)
    return () => clearTimeout(timer)
  }, [location.pathname])
  return (
    <>
      {leaving !== null && <section key={leaving} className="fade-exit fade-exit-active">{children(leaving)}</section>}
      <section key={location.pathname} className="fade-enter-done">{children(location.pathname)}</section>
    </>
  )
}

const ServerRouter = ({ servers }: { readonly servers: ReadonlyArray<Server> }) => {
  const { id = "" } = useParams()
  const server = servers.find((candidate) => candidate.uuid === id || candidate.identifier === id)
  const base = `/server/${id}`
  if (server === undefined) return <><Nav /><Page><ScreenBlock title="404" /></Page></>
  return (
    <>
      <Nav />
      <SubNavigation links={[[base, "Console"], [`${base}/files`, "Files"], ...pages.map(([path, label]) => [`${base}/${path}`, label] as const)]} />
      <Transition>
        {(path) => {
          const rest = path.slice(base.length)
          if (rest === "" || rest === "/") return <Console server={server} />
          if (rest === "/files") return <Files id={id} />
          if (rest === "/files/edit" || rest === "/files/new") return React.createElement(titled("Edit file", "editor"))
          if (/^\/schedules\/\d+$/.test(rest)) return React.createElement(titled("Schedule", "schedule"))
          const page = pages.find(([name]) => rest === `/${name}`)
          return page === undefined ? <Page><ScreenBlock title="404" /></Page> : React.createElement(page[2])
        }}
      </Transition>
    </>
  )
}

const DashboardRouter = ({ servers }: { readonly servers: ReadonlyArray<Server> }) => {
  const location = useLocation()
  return (
    <>
      <Nav />
      {location.pathname.startsWith("/account") && (
        <SubNavigation links={[["/account", "Account"], ["/account/api", "API Credentials"], ["/account/ssh", "SSH Keys"], ["/account/activity", "Activity"]]} />
      )}
      <Transition>
        {(path) => {
          if (path === "/") return <Dashboard servers={servers} />
          // A theme that changed this markup (window.__standinBroken): the overview's anchor is gone.
          const broken = (window as unknown as { __standinBroken?: boolean }).__standinBroken === true
          if (path === "/account") return <Page><div className={broken ? "ThemedOverview-sc-9zz9zz-0" : sc("AccountOverviewContainer__Container", "1d4wmux", 0)}>Update Password · Update Email</div></Page>
          if (path === "/account/api") return <Page><div className={sc("AccountApiContainer___StyledDiv", "1rlhw0n", 0)}>API keys</div></Page>
          if (path === "/account/ssh") return <Page><div className={sc("AccountSSHContainer___StyledDiv", "1kqrnm9", 0)}>SSH keys</div></Page>
          return <Page><ScreenBlock title="404" /></Page>
        }}
      </Transition>
    </>
  )
}

const App = ({ servers }: { readonly servers: ReadonlyArray<Server> }) => (
  <div className={cls("App___StyledDiv-sc-2l91w7-0", "bZeMYR")}>
    <Routes>
      <Route path="/server/:id/*" element={<ServerRouter servers={servers} />} />
      <Route path="/*" element={<DashboardRouter servers={servers} />} />
    </Routes>
  </div>
)

const Root = () => {
  const [servers, setServers] = React.useState<ReadonlyArray<Server> | null>(null)
  const [epoch, setEpoch] = React.useState(0)
  const [, setTick] = React.useState(0)
  React.useEffect(() => {
    const standin = { remount: () => setEpoch((value) => value + 1), rerender: () => setTick((value) => value + 1), epoch: 0 }
    ;(window as unknown as { __standin: typeof standin }).__standin = standin
    fetch("/api/client/servers", { credentials: "same-origin", headers: { accept: "application/json" } })
      .then((response) => response.json() as Promise<{ data: ReadonlyArray<Server> }>)
      .then((body) => {
        setServers(body.data.map((server, index) => index === 0 ? { ...server, description: "The main survival world" } : server))
        // Pterodactyl's router remounts once after load (a late chunk patches createElement).
        setTimeout(() => setEpoch((value) => Math.max(value, 1)), 100)
      })
      .catch(() => setServers([]))
  }, [])
  React.useEffect(() => {
    ;(window as unknown as { __standin: { epoch: number } }).__standin.epoch = epoch
  }, [epoch])
  if (servers === null) return <div className="spinner">Loading…</div>
  return <BrowserRouter key={epoch}><App servers={servers} /></BrowserRouter>
}

createRoot(document.getElementById("app")!).render(<Root />)
