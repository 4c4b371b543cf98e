import type { SlotMap, SlotPlace } from "./map.js"

// Pelican 1.x (Filament 3 panels, `->spa()` navigation): the Host plugin that `host panel:install` writes
// renders `<div data-host-slot="…">` containers at Filament render hooks, so on Pelican the bridge creates
// nothing — the map says which hook (and page) holds each slot, the container watcher renders them, and
// a `livewire:navigated` event marks a page swap. docs/panels.md "Slot maps" has the table.

/** Where the plugin renders a slot: a Filament render hook, scoped to a page where one is named. */
export interface PelicanHook {
  readonly slot: string
  readonly hook: string
  /** Filament page or resource-page class names the hook is scoped to (all pages of the panel when empty). */
  readonly scopes: ReadonlyArray<string>
  /** `app` (servers list, profile), `server` (a server's pages), or the plugin's own extension-page routes. */
  readonly panel: "app" | "server" | "host-page"
}

const hook = (slot: string, panel: PelicanHook["panel"], hookName: string, ...scopes: ReadonlyArray<string>): PelicanHook => ({
  slot,
  hook: hookName,
  scopes,
  panel
})

const serverPages: ReadonlyArray<readonly [string, string, string]> = [
  ["databases", "ListDatabases", "resource.pages.list-records.table"],
  ["schedules", "ListSchedules", "resource.pages.list-records.table"],
  ["users", "ListUsers", "resource.pages.list-records.table"],
  ["backups", "ListBackups", "resource.pages.list-records.table"],
  ["network", "ListAllocations", "resource.pages.list-records.table"],
  ["startup", "Startup", "page"],
  ["settings", "Settings", "page"]
]

/** The hooks the plugin fills (the panel:install helper's provider renders one container per entry). */
export const pelicanHooks: ReadonlyArray<PelicanHook> = [
  hook("navbar", "app", "panels::user-menu.before"),
  hook("navbar.left", "app", "panels::topbar.start"),
  hook("navbar.before", "app", "panels::topbar.before"),
  hook("navbar.after", "app", "panels::topbar.after"),
  hook("server.subnav", "server", "panels::sidebar.nav.end"),
  hook("server.subnav.before", "server", "panels::sidebar.nav.start"),
  hook("server.subnav.after", "server", "panels::sidebar.footer"),
  hook("server.header", "server", "panels::page.start"),
  hook("server.footer", "server", "panels::page.end"),
  hook("server.page", "host-page", "panels::page.end", "HostExtensionPage"),
  hook("server.terminal.buttons", "server", "panels::page.header.actions.after", "Console"),
  hook("server.console.header", "server", "panels::page.header.actions.before", "Console"),
  hook("server.console.info.before", "server", "panels::page.header-widgets.before", "Console"),
  hook("server.console.info.after", "server", "panels::page.header-widgets.after", "Console"),
  hook("server.console.footer", "server", "panels::page.footer-widgets.after", "Console"),
  hook("server.files.actions", "server", "panels::page.header.actions.before", "ListFiles"),
  hook("server.files.header", "server", "panels::resource.pages.list-records.table.before", "ListFiles"),
  hook("server.files.footer", "server", "panels::resource.pages.list-records.table.after", "ListFiles"),
  hook("server.files.edit.before", "server", "panels::page.start", "EditFiles"),
  hook("server.files.edit.after", "server", "panels::page.end", "EditFiles"),
  ...serverPages.flatMap(([name, scope, base]) => [
    hook(`server.${name}.before`, "server", base === "page" ? "panels::page.start" : `panels::${base}.before`, scope),
    hook(`server.${name}.after`, "server", base === "page" ? "panels::page.end" : `panels::${base}.after`, scope)
  ]),
  hook("server.schedules.edit.before", "server", "panels::page.start", "EditSchedule", "ViewSchedule"),
  hook("server.schedules.edit.after", "server", "panels::page.end", "EditSchedule", "ViewSchedule"),
  hook("dashboard.header", "app", "panels::page.start", "ListServers"),
  hook("dashboard.widgets", "app", "panels::resource.pages.list-records.table.before", "ListServers"),
  hook("dashboard.serverlist.before", "app", "panels::resource.pages.list-records.table.before", "ListServers"),
  hook("dashboard.serverlist.after", "app", "panels::resource.pages.list-records.table.after", "ListServers"),
  hook("dashboard.footer", "app", "panels::page.end", "ListServers"),
  hook("dashboard.page", "host-page", "panels::page.end", "HostExtensionPage"),
  hook("account.header", "app", "panels::page.start", "EditProfile"),
  hook("account.footer", "app", "panels::page.end", "EditProfile"),
  hook("account.overview.before", "app", "panels::page.header.actions.after", "EditProfile"),
  hook("account.overview.after", "app", "panels::content.end", "EditProfile"),
  hook("account.subnav", "app", "panels::user-menu.profile.after"),
  hook("account.page", "host-page", "panels::page.end", "HostExtensionPage"),
  hook("auth.container.before", "app", "panels::auth.login.form.before"),
  hook("auth.container.after", "app", "panels::auth.login.form.after")
]

/** URL patterns of each Filament page the hooks are scoped to (Pelican's routes). */
const pageRoutes: Readonly<Record<string, ReadonlyArray<string>>> = {
  Console: ["/server/:id", "/server/:id/console"],
  ListFiles: ["/server/:id/files", "/server/:id/files/*"],
  EditFiles: ["/server/:id/files/edit/*"],
  ListDatabases: ["/server/:id/databases"],
  ListSchedules: ["/server/:id/schedules"],
  EditSchedule: ["/server/:id/schedules/:schedule/edit"],
  ViewSchedule: ["/server/:id/schedules/:schedule"],
  ListUsers: ["/server/:id/users"],
  ListBackups: ["/server/:id/backups"],
  ListAllocations: ["/server/:id/network"],
  Startup: ["/server/:id/startup"],
  Settings: ["/server/:id/settings"],
  ListServers: ["/"],
  EditProfile: ["/profile"]
}

const routesOf = (entry: PelicanHook): ReadonlyArray<string> => {
  if (entry.panel === "host-page") {
    return entry.slot === "server.page" ? ["/server/:id/ext/*"] : entry.slot === "account.page" ? ["/account/ext/*"] : ["/ext/*"]
  }
  if (entry.scopes.length > 0) return entry.scopes.flatMap((scope) => pageRoutes[scope] ?? [])
  if (entry.panel === "server") return ["/server/:id", "/server/:id/*"]
  return entry.slot.startsWith("auth.") ? ["/login"] : ["/", "/profile", "/ext/*", "/account/ext/*", "/server/:id", "/server/:id/*"]
}

const placeOf = (entry: PelicanHook): SlotPlace => ({
  slot: entry.slot,
  page: entry.scopes.length > 0 ? entry.scopes.join(", ") : entry.panel === "server" ? "server pages" : "every page",
  routes: routesOf(entry),
  // The plugin's own container is the anchor; the bridge only checks it is there.
  anchors: [{ selector: `[data-host-slot="${entry.slot}"]`, placement: "beforeend" }],
  stability: "PLUGIN",
  ...(entry.slot.startsWith("auth.") ? { optional: "signed out, /host/boot.js loads nothing" } : {})
})

export const pelican: SlotMap = {
  kind: "pelican",
  versions: ["1.0"],
  places: pelicanHooks.map(placeOf),
  absent: [
    { slot: "server.console.sidebar", reason: "the console is a grid of Filament widgets with no sidebar column and no hook beside it" },
    { slot: "server.console.command", reason: "the command input is inside the console's Livewire terminal component, which has no render hook" },
    { slot: "server.files.dropdown", reason: "Filament table row actions have no render hook" },
    { slot: "server.backups.dropdown", reason: "Filament table row actions have no render hook" },
    { slot: "dashboard.serverrow.name.before", reason: "server cards are Filament table columns: no per-row render hook" },
    { slot: "dashboard.serverrow.name.after", reason: "server cards are Filament table columns: no per-row render hook" },
    { slot: "dashboard.serverrow.description.before", reason: "server cards are Filament table columns: no per-row render hook" },
    { slot: "dashboard.serverrow.description.after", reason: "server cards are Filament table columns: no per-row render hook" },
    { slot: "dashboard.serverrow.limits", reason: "server cards are Filament table columns: no per-row render hook" },
    { slot: "account.subnav.before", reason: "the profile page has tabs inside one form, not a sub-navigation" },
    { slot: "account.subnav.after", reason: "the profile page has tabs inside one form, not a sub-navigation" },
    { slot: "account.api.before", reason: "API keys are a tab of the one profile form, without a hook of its own" },
    { slot: "account.api.after", reason: "API keys are a tab of the one profile form, without a hook of its own" },
    { slot: "account.ssh.before", reason: "SSH keys are a tab of the one profile form, without a hook of its own" },
    { slot: "account.ssh.after", reason: "SSH keys are a tab of the one profile form, without a hook of its own" }
  ],
  ready: ".fi-page, .fi-simple-page",
  notFound: "",
  navigationEvents: ["livewire:navigated"],
  // Filament's colour variables (RGB triplets in Filament 3), read from the page at start.
  theme: {
    "primary": "var(--primary-500)",
    "primary-light": "var(--primary-400)",
    "primary-dark": "var(--primary-600)",
    "secondary": "var(--gray-500)",
    "success": "var(--success-500)",
    "danger": "var(--danger-500)",
    "warning": "var(--warning-500)",
    "info": "var(--info-500)",
    "bg-primary": "var(--gray-950)",
    "bg-secondary": "var(--gray-900)",
    "bg-tertiary": "var(--gray-800)",
    "text-primary": "var(--gray-50)",
    "text-secondary": "var(--gray-300)",
    "text-muted": "var(--gray-400)",
    "border": "var(--gray-700)"
  },
  css: `[data-host-slot]:empty{display:none}`
}
