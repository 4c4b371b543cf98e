import { type Anchor, type Placement, sc, type SlotMap, type SlotPlace } from "./map.js"

// Pterodactyl 1.11 (and 1.12: same client frontend, see docs/panels.md "Slot maps") as its production
// build renders it: React 16 with styled-components display names kept in class tokens, Tailwind class
// strings, and one `section` per route that fades out as `.fade-exit` while the next one fades in. Every
// anchor below was observed on a build of the panel's own frontend; docs/panels.md lists them as a table.

/** The page body of the current route (the fading-out section is skipped). */
const C = `section:not(.fade-exit) > ${sc("PageContentBlock___StyledContentContainer")}`
/** The copyright block under the page body. */
const F = `section:not(.fade-exit) > ${sc("PageContentBlock___StyledContentContainer2")}`
/** The navbar's root: the Tailwind row holding #logo. */
const N = "div:has(> div > #logo)"
const SN = sc("SubNavigation")
/** The panel's 404 block: inside C on an unknown server route; possibly bare on other unknown routes. */
const NF = sc("ScreenBlock___StyledDiv")

const at = (selector: string, placement: Placement): Anchor => ({ selector, placement })
/** Page outlets fall back to the spot after the 404 block when a not-found route has no page body. */
const outlet = [at(C, "beforeend"), at(`section:not(.fade-exit) ${NF}`, "afterend")]

const signedIn = ["/", "/account", "/account/*", "/server/:id", "/server/:id/*", "/ext/*"]
const serverPages = ["/server/:id", "/server/:id/*"]
const accountPages = ["/account", "/account/*"]
const dashboardPages = ["/", "/ext/*"]

const place = (
  slot: string,
  page: string,
  routes: ReadonlyArray<string>,
  stability: SlotPlace["stability"],
  anchors: ReadonlyArray<Anchor>,
  extra: Partial<SlotPlace> = {}
): SlotPlace => ({ slot, page, routes, stability, anchors, ...extra })

/** The server pages whose body slots differ only by URL (`server.<page>.before/.after`). */
const plainServerPages = ["databases", "schedules", "users", "backups", "network", "startup", "settings"] as const

const row = { link: "a[href^=\"/server/\"]", name: sc("ServerRow___StyledP") }

export const pterodactyl: SlotMap = {
  kind: "pterodactyl",
  versions: ["1.11", "1.12"],
  ready: C,
  notFound: `section:not(.fade-exit) ${NF}`,
  navigationEvents: [],
  // The navbar's admin cog, `<a href="/admin">`, rendered for root admins only (NavigationBar.tsx).
  adminLink: at(`${sc("NavigationBar__RightNavigation")} > a[href="/admin"]`, "afterend"),
  places: [
    place("navbar", "every signed-in page", signedIn, "DN", [at(sc("NavigationBar__RightNavigation"), "afterbegin")]),
    place("navbar.left", "every signed-in page", signedIn, "ID", [at("#logo", "beforeend")]),
    place("navbar.before", "every signed-in page", signedIn, "ID", [at(N, "beforebegin")]),
    place("navbar.after", "every signed-in page", signedIn, "ID", [at(N, "afterend")]),
    place("server.subnav", "server pages", serverPages, "DN", [at(`${SN} > div`, "beforeend")]),
    place("server.subnav.before", "server pages", serverPages, "DN", [at(SN, "beforebegin")]),
    place("server.subnav.after", "server pages", serverPages, "DN", [at(SN, "afterend")]),
    place("server.header", "server pages", serverPages, "DN", [at(C, "afterbegin")]),
    place("server.page", "server pages (the extension-page outlet)", serverPages, "DN", outlet),
    place("server.footer", "server pages", serverPages, "DN", [at(F, "afterbegin")]),
    place("server.console.header", "console", ["/server/:id"], "TW", [at(`${C} > div:has(>div>h1) > div:has(>h1)`, "beforeend")]),
    place("server.terminal.buttons", "console", ["/server/:id"], "TW", [at(`${C} > div:has(>div>h1) > div.self-end > div.flex`, "beforeend")], {
      optional: "the power buttons need a control.* permission"
    }),
    place("server.console.info.before", "console", ["/server/:id"], "TW", [at(`${C} div.grid.grid-cols-6`, "afterbegin")], { className: "col-span-6" }),
    place("server.console.info.after", "console", ["/server/:id"], "TW", [at(`${C} div.grid.grid-cols-6`, "beforeend")], { className: "col-span-6" }),
    place("server.console.sidebar", "console", ["/server/:id"], "TW", [at(`${C} div.grid.grid-cols-6`, "beforeend")], { className: "col-span-6" }),
    place("server.console.command", "console", ["/server/:id"], "AT", [at("div:has(> input[aria-label=\"Console command input.\"])", "afterend")], {
      optional: "the command input needs control.console"
    }),
    place("server.console.footer", "console", ["/server/:id"], "TW", [at(`${C} > div.grid.grid-cols-1`, "afterend")]),
    place("server.files.header", "files", ["/server/:id/files"], "DN", [at(`${C} > div:has(> ${sc("FileManagerBreadcrumbs___StyledDiv")})`, "afterend")]),
    place("server.files.actions", "files", ["/server/:id/files"], "AT", [at("div:has(> a[href*=\"/files/new\"])", "afterbegin")], {
      optional: "the actions row needs file.create"
    }),
    place("server.files.footer", "files", ["/server/:id/files"], "DN", [at(C, "beforeend")]),
    place("server.files.dropdown", "files (a row's menu, while open)", ["/server/:id/files"], "DN", [
      at(`${sc("DropdownMenu___StyledDiv")}:has(${sc("FileDropdownMenu__StyledRow")})`, "beforeend")
    ], { optional: "the menu exists only while open" }),
    place("server.files.edit.before", "file editor", ["/server/:id/files/edit", "/server/:id/files/new"], "DN", [
      at(`${C}:has(${sc("CodemirrorEditor__EditorContainer")})`, "afterbegin")
    ]),
    place("server.files.edit.after", "file editor", ["/server/:id/files/edit", "/server/:id/files/new"], "DN", [
      at(`${C}:has(${sc("CodemirrorEditor__EditorContainer")})`, "beforeend")
    ]),
    ...plainServerPages.flatMap((name) => [
      place(`server.${name}.before`, name, [`/server/:id/${name}`], "DN", [at(C, "afterbegin")]),
      place(`server.${name}.after`, name, [`/server/:id/${name}`], "DN", [at(C, "beforeend")])
    ]),
    place("server.schedules.edit.before", "schedule editor", ["/server/:id/schedules/:schedule"], "DN#", [
      at(`${C}:has(${sc("ScheduleEditContainer___StyledDiv2")})`, "afterbegin")
    ]),
    place("server.schedules.edit.after", "schedule editor", ["/server/:id/schedules/:schedule"], "DN#", [
      at(`${C}:has(${sc("ScheduleEditContainer___StyledDiv2")})`, "beforeend")
    ]),
    place("server.backups.dropdown", "backups (a row's menu, while open)", ["/server/:id/backups"], "DN#", [
      at(`${sc("DropdownMenu___StyledDiv")} > ${sc("BackupContextMenu___StyledDiv")}`, "beforeend")
    ], { optional: "the menu exists only while open" }),
    place("dashboard.header", "dashboard", dashboardPages, "DN", [at(C, "afterbegin")]),
    place("dashboard.page", "dashboard (the extension-page outlet)", dashboardPages, "DN", outlet),
    // The dashboard has no list wrapper: the rows sit in the page body; without servers a "There are no
    // servers…" paragraph takes their place (while loading, a spinner: no anchor yet). That paragraph is
    // styled through twin.macro, so its display name is the anchor (the real build has no text-center class).
    place("dashboard.widgets", "dashboard", ["/"], "DN", [
      at(`${C} > ${sc("ServerRow__StatusIndicatorBox")}:first-of-type`, "beforebegin"),
      at(`${C} > ${sc("DashboardContainer___StyledP2")}`, "beforebegin")
    ], { optional: "while the server list loads there is neither a row nor the empty-list paragraph" }),
    place("dashboard.serverlist.before", "dashboard", ["/"], "DN", [
      at(`${C} > ${sc("ServerRow__StatusIndicatorBox")}:first-of-type`, "beforebegin"),
      at(`${C} > ${sc("DashboardContainer___StyledP2")}`, "beforebegin")
    ], { optional: "while the server list loads there is no list" }),
    place("dashboard.serverlist.after", "dashboard", ["/"], "DN", [
      at(`${C} > ${sc("ServerRow__StatusIndicatorBox")}:last-of-type`, "afterend"),
      at(`${C} > ${sc("DashboardContainer___StyledP2")}`, "afterend")
    ], { optional: "while the server list loads there is no list" }),
    place("dashboard.serverrow.name.before", "dashboard, each server row", ["/"], "DN#", [at(sc("ServerRow___StyledP"), "beforebegin")], { row, optional: "without servers there are no rows" }),
    place("dashboard.serverrow.name.after", "dashboard, each server row", ["/"], "DN#", [at(sc("ServerRow___StyledP"), "afterend")], { row, optional: "without servers there are no rows" }),
    place("dashboard.serverrow.description.before", "dashboard, each server row", ["/"], "DN#", [at(sc("ServerRow___StyledP2"), "beforebegin")], {
      row,
      optional: "only rows of servers with a description have one"
    }),
    place("dashboard.serverrow.description.after", "dashboard, each server row", ["/"], "DN#", [at(sc("ServerRow___StyledP2"), "afterend")], {
      row,
      optional: "only rows of servers with a description have one"
    }),
    place("dashboard.serverrow.limits", "dashboard, each server row", ["/"], "DN#", [at(sc("ServerRow___StyledDiv4"), "beforeend")], { row, optional: "without servers there are no rows" }),
    place("dashboard.footer", "dashboard", dashboardPages, "DN", [at(F, "afterbegin")]),
    place("account.header", "account pages", accountPages, "DN", [at(C, "afterbegin")]),
    place("account.page", "account pages (the extension-page outlet)", accountPages, "DN", outlet),
    place("account.footer", "account pages", accountPages, "DN", [at(F, "afterbegin")]),
    place("account.subnav", "account pages", accountPages, "DN", [at(`${SN} > div`, "beforeend")]),
    place("account.subnav.before", "account pages", accountPages, "DN", [at(SN, "beforebegin")]),
    place("account.subnav.after", "account pages", accountPages, "DN", [at(SN, "afterend")]),
    place("account.overview.before", "account overview", ["/account"], "DN", [at(sc("AccountOverviewContainer__Container"), "beforebegin")]),
    place("account.overview.after", "account overview", ["/account"], "DN", [at(sc("AccountOverviewContainer__Container"), "afterend")]),
    place("account.api.before", "API credentials", ["/account/api"], "DN#", [at(sc("AccountApiContainer___StyledDiv"), "beforebegin")]),
    place("account.api.after", "API credentials", ["/account/api"], "DN#", [at(sc("AccountApiContainer___StyledDiv"), "afterend")]),
    place("account.ssh.before", "SSH keys", ["/account/ssh"], "DN#", [at(sc("AccountSSHContainer___StyledDiv"), "beforebegin")]),
    place("account.ssh.after", "SSH keys", ["/account/ssh"], "DN#", [at(sc("AccountSSHContainer___StyledDiv"), "afterend")])
  ],
  absent: [
    {
      slot: "auth.container.before",
      reason: "the sign-in pages are shown signed out, and signed out /host/boot.js loads nothing (the anchor would be LoginFormContainer__Container → afterbegin)"
    },
    {
      slot: "auth.container.after",
      reason: "the sign-in pages are shown signed out, and signed out /host/boot.js loads nothing (the anchor would be LoginFormContainer__Container → beforeend)"
    }
  ],
  // tailwind.config.js of the panel: `gray`/`neutral` is its own scale, `primary` is Tailwind's blue.
  theme: {
    "primary": "#3b82f6",
    "primary-light": "#60a5fa",
    "primary-dark": "#2563eb",
    "secondary": "hsl(211, 12%, 43%)",
    "success": "#10b981",
    "danger": "#ef4444",
    "warning": "#f59e0b",
    "info": "#06b6d4",
    "bg-primary": "hsl(210, 24%, 16%)",
    "bg-secondary": "hsl(209, 20%, 25%)",
    "bg-tertiary": "hsl(209, 18%, 30%)",
    "text-primary": "hsl(214, 15%, 91%)",
    "text-secondary": "hsl(210, 16%, 82%)",
    "text-muted": "hsl(211, 10%, 53%)",
    "border": "hsl(209, 14%, 37%)",
    "radius-sm": "0.125rem",
    "radius-md": "0.25rem",
    "radius-lg": "0.5rem",
    "font-sans": "\"IBM Plex Sans\", \"Roboto\", system-ui, sans-serif",
    "font-mono": "\"IBM Plex Mono\", \"Source Code Pro\", SourceCodePro, Menlo, Monaco, Consolas, monospace"
  },
  // Injected UI keeps the panel's look: sub-navigation links as the panel's tabs, navbar items as its
  // `navigation-link`s, row slots inline. The sub-navigation's container is a `div` child of the panel's
  // tab row, which styles its `div` children as padded tabs (a selector that outranks a bare attribute
  // one): the longer selector keeps it `display: contents`, so Host's links are tabs of that row. From
  // 1024 px, where the panel's own tabs fit on one line, the row wraps rather than hiding tabs behind a
  // sideways scroll; narrower, it scrolls sideways as the panel's own tabs do.
  css: `
[data-host-slot]:empty{display:none}
[data-host-slot="server.subnav"],[data-host-slot="account.subnav"]{display:contents}
${SN} > div > :is([data-host-slot="server.subnav"],[data-host-slot="account.subnav"]){display:contents}
${SN} a.host-nav-link{display:inline-flex;align-items:center;gap:.375rem;margin-left:.5rem;padding:.75rem 1rem;font-size:.875rem;line-height:1.25rem;color:hsl(211,13%,65%);text-decoration:none;white-space:nowrap;transition:color 150ms}
${SN} a.host-nav-link:hover{color:hsl(214,15%,91%)}
${SN} a.host-nav-link.active{color:hsl(214,15%,91%);background:none;box-shadow:inset 0 -2px #0891b2}
@media (min-width:1024px){${SN} > div{flex-wrap:wrap}}
[data-host-slot="navbar"]{display:flex;align-items:center;height:100%}
[data-host-slot="navbar.left"]{display:inline-flex;align-items:center;vertical-align:middle}
[data-host-slot^="dashboard.serverrow."]{display:inline-flex;align-items:center;gap:.25rem}
`
}
