// Where Host's Pelican plugin renders slot containers (docs/panels.md "Slot maps", "Installing into Pelican"):
// one table for both sides — `host panel:install` generates the plugin's PHP from it (panel/pelican-plugin/
// templates.ts) and the bridge's Pelican map reads which page holds each slot from it
// (bridge/panels/pelican.ts). Pure data, safe for the browser bundle.
//
// `hook` is the Filament render hook's name (the value of its `PanelsRenderHook` constant). `scopes` are the
// Filament page classes the container belongs to, by class basename: the plugin compares them with the page's
// render-hook scopes at render time, so both of Pelican's folder layouts (`Resources/FileResource/Pages/
// ListFiles` and `Resources/Files/Pages/ListFiles`) match. No scope: every page of that Filament panel.

/** Where the plugin renders a slot: a Filament render hook of one Filament panel, on some of its pages. */
export interface PelicanHook {
  readonly slot: string
  readonly hook: string
  /** Filament page classes (basenames) the container is rendered on; every page of the panel when empty. */
  readonly scopes: ReadonlyArray<string>
  /** `app` (servers list, profile, sign-in) or `server` (a server's pages). */
  readonly panel: "app" | "server"
}

const hook = (slot: string, panel: PelicanHook["panel"], hookName: string, ...scopes: ReadonlyArray<string>): PelicanHook => ({
  slot,
  hook: hookName,
  scopes,
  panel
})

const serverPages: ReadonlyArray<readonly [string, ReadonlyArray<string>, string]> = [
  ["databases", ["ListDatabases"], "resource.pages.list-records.table"],
  ["schedules", ["ListSchedules"], "resource.pages.list-records.table"],
  // Pelican renamed the subusers page (ListUsers → ListSubusers): both are its page.
  ["users", ["ListUsers", "ListSubusers"], "resource.pages.list-records.table"],
  ["backups", ["ListBackups"], "resource.pages.list-records.table"],
  ["network", ["ListAllocations"], "resource.pages.list-records.table"],
  ["startup", ["Startup"], "page"],
  ["settings", ["Settings"], "page"]
]

/** Every container the plugin renders. */
export const pelicanHooks: ReadonlyArray<PelicanHook> = [
  // The top bar is the same in both Filament panels.
  ...(["app", "server"] as const).flatMap((panel) => [
    hook("navbar", panel, "panels::user-menu.before"),
    hook("navbar.left", panel, "panels::topbar.start"),
    hook("navbar.before", panel, "panels::topbar.before"),
    hook("navbar.after", panel, "panels::topbar.after")
  ]),
  hook("server.subnav", "server", "panels::sidebar.nav.end"),
  hook("server.subnav.before", "server", "panels::sidebar.nav.start"),
  hook("server.subnav.after", "server", "panels::sidebar.footer"),
  hook("server.header", "server", "panels::page.start"),
  hook("server.terminal.buttons", "server", "panels::page.header.actions.after", "Console"),
  hook("server.console.header", "server", "panels::page.header.actions.before", "Console"),
  hook("server.console.info.before", "server", "panels::page.header-widgets.before", "Console"),
  hook("server.console.info.after", "server", "panels::page.header-widgets.after", "Console"),
  hook("server.console.footer", "server", "panels::page.footer-widgets.after", "Console"),
  hook("server.files.actions", "server", "panels::page.header.actions.before", "ListFiles"),
  // Pelican's file list renders its own view (an upload area around `$this->table`), which never emits the
  // list-records table hooks of the default list page; the page's own hooks around its content hold these two.
  hook("server.files.header", "server", "panels::page.header-widgets.after", "ListFiles"),
  hook("server.files.footer", "server", "panels::page.footer-widgets.before", "ListFiles"),
  hook("server.files.edit.before", "server", "panels::page.start", "EditFiles"),
  hook("server.files.edit.after", "server", "panels::page.end", "EditFiles"),
  ...serverPages.flatMap(([name, scopes, base]) => [
    hook(`server.${name}.before`, "server", base === "page" ? "panels::page.start" : `panels::${base}.before`, ...scopes),
    hook(`server.${name}.after`, "server", base === "page" ? "panels::page.end" : `panels::${base}.after`, ...scopes)
  ]),
  hook("server.schedules.edit.before", "server", "panels::page.start", "EditSchedule", "ViewSchedule"),
  hook("server.schedules.edit.after", "server", "panels::page.end", "EditSchedule", "ViewSchedule"),
  // Filament renders a hook's registrations in the order they were made: the footer after every page's own
  // `.after` container at the page's end, as the header comes before every `.before` at its start.
  hook("server.footer", "server", "panels::page.end"),
  hook("dashboard.header", "app", "panels::page.start", "ListServers"),
  hook("dashboard.widgets", "app", "panels::resource.pages.list-records.table.before", "ListServers"),
  hook("dashboard.serverlist.before", "app", "panels::resource.pages.list-records.table.before", "ListServers"),
  hook("dashboard.serverlist.after", "app", "panels::resource.pages.list-records.table.after", "ListServers"),
  hook("dashboard.footer", "app", "panels::page.end", "ListServers"),
  hook("account.header", "app", "panels::page.start", "EditProfile"),
  hook("account.footer", "app", "panels::page.end", "EditProfile"),
  hook("account.overview.before", "app", "panels::page.header.actions.after", "EditProfile"),
  hook("account.overview.after", "app", "panels::content.end", "EditProfile"),
  hook("account.subnav", "app", "panels::user-menu.profile.after"),
  hook("auth.container.before", "app", "panels::auth.login.form.before"),
  hook("auth.container.after", "app", "panels::auth.login.form.after")
]

/**
 * An extension-page outlet: a Filament page the plugin registers in one Filament panel, at the same path as on
 * the embedded panel (`<prefix>/{path}` below the panel's own path), rendering only the slot's container.
 */
export interface PelicanPage {
  readonly slot: "dashboard.page" | "account.page" | "server.page"
  readonly panel: PelicanHook["panel"]
  /** The route below the Filament panel's path: `ext` is `/ext/…` in `app` and `/server/{id}/ext/…` in `server`. */
  readonly prefix: string
  /** The page's PHP class basename (one class per route: Filament registers a page class once per panel). */
  readonly className: string
  /** Where the outlet is in the browser, as slot-map route patterns. */
  readonly routes: ReadonlyArray<string>
}

/** The three extension-page outlets (docs/panels.md "Extension pages under a real panel"). */
export const pelicanPages: ReadonlyArray<PelicanPage> = [
  { slot: "dashboard.page", panel: "app", prefix: "ext", className: "DashboardExtensionPage", routes: ["/ext/*"] },
  { slot: "account.page", panel: "app", prefix: "account/ext", className: "AccountExtensionPage", routes: ["/account/ext/*"] },
  { slot: "server.page", panel: "server", prefix: "ext", className: "ServerExtensionPage", routes: ["/server/:id/ext/*"] }
]
