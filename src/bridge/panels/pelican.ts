import { type PelicanHook, pelicanHooks, pelicanPages } from "../../domain/PelicanHooks.js"
import type { SlotMap, SlotPlace } from "./map.js"

// Pelican 1.x (Filament 3 panels, `->spa()` navigation): the Host plugin that `host panel:install` writes
// renders `<div data-host-slot="…">` containers at Filament render hooks, so on Pelican the bridge creates
// nothing — the map says which hook (and page) holds each slot, the container watcher renders them, and
// a `livewire:navigated` event marks a page swap. Extension pages are Filament pages of the plugin holding
// the page's container. docs/panels.md "Slot maps" has the table.

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
  ListSubusers: ["/server/:id/users"],
  ListBackups: ["/server/:id/backups"],
  ListAllocations: ["/server/:id/network"],
  Startup: ["/server/:id/startup"],
  Settings: ["/server/:id/settings"],
  ListServers: ["/"],
  EditProfile: ["/profile"]
}

const routesOf = (entry: PelicanHook): ReadonlyArray<string> => {
  if (entry.scopes.length > 0) return entry.scopes.flatMap((scope) => pageRoutes[scope] ?? [])
  if (entry.panel === "server") return ["/server/:id", "/server/:id/*"]
  return entry.slot.startsWith("auth.") ? ["/login"] : ["/", "/profile"]
}

/** One place per slot: a slot the plugin renders in both Filament panels (the navbar) is on the pages of both. */
const placeOf = (slot: string, entries: ReadonlyArray<PelicanHook>): SlotPlace => ({
  slot,
  page: entries.some((entry) => entry.scopes.length === 0)
    ? entries.map((entry) => (entry.panel === "server" ? "server pages" : "app pages")).join(", ")
    : entries.flatMap((entry) => entry.scopes).join(", "),
  routes: [...new Set(entries.flatMap(routesOf))],
  // The plugin's own container is the anchor; the bridge only checks it is there.
  anchors: [{ selector: `[data-host-slot="${slot}"]`, placement: "beforeend" }],
  stability: "PLUGIN",
  ...(slot.startsWith("auth.") ? { optional: "signed out, /host/boot.js loads nothing" } : {})
})

/** An extension-page outlet: the container the plugin's Filament page for that route renders. */
const outletOf = (page: (typeof pelicanPages)[number]): SlotPlace => ({
  slot: page.slot,
  page: `${page.panel === "server" ? "server" : page.slot === "account.page" ? "account" : "dashboard"} extension pages (the plugin's ${page.className})`,
  routes: page.routes,
  anchors: [{ selector: `[data-host-slot="${page.slot}"]`, placement: "beforeend" }],
  stability: "PLUGIN"
})

const bySlot = new Map<string, Array<PelicanHook>>()
for (const entry of pelicanHooks) bySlot.set(entry.slot, [...(bySlot.get(entry.slot) ?? []), entry])

export const pelican: SlotMap = {
  kind: "pelican",
  versions: ["1.0"],
  places: [...[...bySlot].map(([slot, entries]) => placeOf(slot, entries)), ...pelicanPages.map(outletOf)],
  // The outlets are pages the panel renders: a link to one is followed by the panel (wire:navigate), not pushState.
  pageLinks: "document",
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
