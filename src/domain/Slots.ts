// The 65 panel slot ids (copied from shared/slots.json). A slot's kind says how it renders:
// portal (in place, in order), nav (navigation entries), route (whole pages).

export type SlotArea = "navbar" | "server" | "dashboard" | "account" | "auth"
export type SlotKind = "portal" | "nav" | "route"

export interface SlotDefinition {
  readonly id: string
  readonly area: SlotArea
  readonly kind: SlotKind
}

export const slotDefinitions: ReadonlyArray<SlotDefinition> = [
  { id: "navbar", area: "navbar", kind: "portal" },
  { id: "navbar.left", area: "navbar", kind: "portal" },
  { id: "navbar.before", area: "navbar", kind: "portal" },
  { id: "navbar.after", area: "navbar", kind: "portal" },
  { id: "server.subnav", area: "server", kind: "nav" },
  { id: "server.subnav.before", area: "server", kind: "nav" },
  { id: "server.subnav.after", area: "server", kind: "nav" },
  { id: "server.header", area: "server", kind: "portal" },
  { id: "server.page", area: "server", kind: "route" },
  { id: "server.footer", area: "server", kind: "portal" },
  { id: "server.terminal.buttons", area: "server", kind: "portal" },
  { id: "server.console.header", area: "server", kind: "portal" },
  { id: "server.console.info.before", area: "server", kind: "portal" },
  { id: "server.console.info.after", area: "server", kind: "portal" },
  { id: "server.console.sidebar", area: "server", kind: "portal" },
  { id: "server.console.command", area: "server", kind: "portal" },
  { id: "server.console.footer", area: "server", kind: "portal" },
  { id: "server.files.actions", area: "server", kind: "portal" },
  { id: "server.files.header", area: "server", kind: "portal" },
  { id: "server.files.footer", area: "server", kind: "portal" },
  { id: "server.files.dropdown", area: "server", kind: "portal" },
  { id: "server.files.edit.before", area: "server", kind: "portal" },
  { id: "server.files.edit.after", area: "server", kind: "portal" },
  { id: "server.databases.before", area: "server", kind: "portal" },
  { id: "server.databases.after", area: "server", kind: "portal" },
  { id: "server.schedules.before", area: "server", kind: "portal" },
  { id: "server.schedules.after", area: "server", kind: "portal" },
  { id: "server.schedules.edit.before", area: "server", kind: "portal" },
  { id: "server.schedules.edit.after", area: "server", kind: "portal" },
  { id: "server.users.before", area: "server", kind: "portal" },
  { id: "server.users.after", area: "server", kind: "portal" },
  { id: "server.backups.before", area: "server", kind: "portal" },
  { id: "server.backups.after", area: "server", kind: "portal" },
  { id: "server.backups.dropdown", area: "server", kind: "portal" },
  { id: "server.network.before", area: "server", kind: "portal" },
  { id: "server.network.after", area: "server", kind: "portal" },
  { id: "server.startup.before", area: "server", kind: "portal" },
  { id: "server.startup.after", area: "server", kind: "portal" },
  { id: "server.settings.before", area: "server", kind: "portal" },
  { id: "server.settings.after", area: "server", kind: "portal" },
  { id: "dashboard.header", area: "dashboard", kind: "portal" },
  { id: "dashboard.widgets", area: "dashboard", kind: "portal" },
  { id: "dashboard.serverlist.before", area: "dashboard", kind: "portal" },
  { id: "dashboard.serverlist.after", area: "dashboard", kind: "portal" },
  { id: "dashboard.serverrow.name.before", area: "dashboard", kind: "portal" },
  { id: "dashboard.serverrow.name.after", area: "dashboard", kind: "portal" },
  { id: "dashboard.serverrow.description.before", area: "dashboard", kind: "portal" },
  { id: "dashboard.serverrow.description.after", area: "dashboard", kind: "portal" },
  { id: "dashboard.serverrow.limits", area: "dashboard", kind: "portal" },
  { id: "dashboard.footer", area: "dashboard", kind: "portal" },
  { id: "dashboard.page", area: "dashboard", kind: "route" },
  { id: "account.header", area: "account", kind: "portal" },
  { id: "account.page", area: "account", kind: "route" },
  { id: "account.footer", area: "account", kind: "portal" },
  { id: "account.subnav", area: "account", kind: "nav" },
  { id: "account.subnav.before", area: "account", kind: "nav" },
  { id: "account.subnav.after", area: "account", kind: "nav" },
  { id: "account.overview.before", area: "account", kind: "portal" },
  { id: "account.overview.after", area: "account", kind: "portal" },
  { id: "account.api.before", area: "account", kind: "portal" },
  { id: "account.api.after", area: "account", kind: "portal" },
  { id: "account.ssh.before", area: "account", kind: "portal" },
  { id: "account.ssh.after", area: "account", kind: "portal" },
  { id: "auth.container.before", area: "auth", kind: "portal" },
  { id: "auth.container.after", area: "auth", kind: "portal" },
]

export const slotIds: ReadonlyArray<string> = slotDefinitions.map((slot) => slot.id)

const knownSlotIds: ReadonlySet<string> = new Set(slotIds)

export const isKnownSlot = (id: string): boolean => knownSlotIds.has(id)

const SLOT_REFERENCE = /\bslot\s*:\s*(["'`])([^"'`]+)\1/g

/** Slot ids a prebuilt bundle registers into (`{ slot: "…" }` in its createExtension call), by static scan. */
export const bundleSlotReferences = (bundle: string): ReadonlyArray<string> =>
  [...bundle.matchAll(SLOT_REFERENCE)].map((match) => match[2]!)

/** An extension page a prebuilt bundle registers (`routes: [{ area, path, name, … }]`), as far as its text shows. */
export interface BundleRoute {
  readonly area: "server" | "dashboard" | "account"
  readonly path: string
  readonly name: string | null
  readonly permission: string | null
  readonly hidden: boolean
}

const ROUTE_AREA = /\barea\s*:\s*(["'`])(server|dashboard|account)\1/g
const STRING_FIELD = (field: string) => new RegExp(`(?:^|[,{\\s])${field}\\s*:\\s*(["'\`])((?:\\\\.|(?!\\1).)*)\\1`)

/** The index just past the string literal that opens at `start`. */
const skipString = (text: string, start: number): number => {
  const quote = text[start]
  let index = start + 1
  while (index < text.length && text[index] !== quote) index += text[index] === "\\" ? 2 : 1
  return index + 1
}

/** The object literal around `index` with everything nested inside it blanked out, or undefined. */
const enclosingObject = (text: string, index: number): string | undefined => {
  let open = index
  for (let depth = 0; open >= 0; open--) {
    if (text[open] === "}") depth++
    else if (text[open] === "{") {
      if (depth === 0) break
      depth--
    }
  }
  if (open < 0) return undefined
  let own = ""
  let depth = 0
  for (let at = open; at < text.length;) {
    const char = text[at]!
    if (char === '"' || char === "'" || char === "`") {
      const end = skipString(text, at)
      if (depth === 1) own += text.slice(at, end)
      at = end
      continue
    }
    if (char === "{") depth++
    if (char === "}" && --depth === 0) return `${own}}`
    if (depth === 1 || (depth === 0 && char !== "}")) own += char
    at++
  }
  return undefined
}

/**
 * The pages a prebuilt bundle registers, by static scan of the object literals holding an `area`: what the admin
 * screens list as an extension's pages and what the Pelican plugin links in the panel's navigation
 * (docs/panels.md "Extension pages under a real panel"). Fields the text does not spell out come back null.
 */
export const bundleRoutes = (bundle: string): ReadonlyArray<BundleRoute> => {
  const found = new Map<string, BundleRoute>()
  for (const match of bundle.matchAll(ROUTE_AREA)) {
    const own = enclosingObject(bundle, match.index)
    if (own === undefined) continue
    const field = (name: string) => STRING_FIELD(name).exec(own)?.[2] ?? null
    const path = field("path")
    if (path === null) continue
    const area = match[2] as BundleRoute["area"]
    if (found.has(`${area} ${path}`)) continue
    found.set(`${area} ${path}`, {
      area,
      path,
      name: field("name"),
      permission: field("permission"),
      hidden: /(?:^|[,{\s])hidden\s*:\s*(?:!0|true)\b/.test(own)
    })
  }
  return [...found.values()]
}
