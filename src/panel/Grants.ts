import { Effect, Option } from "effect"
import { CoreKeys, CoreRows, type PanelGrants } from "../store/CoreRows.js"

// Host-held extension-permission grants for a real panel's subusers (docs/panels.md "Extension
// permissions"): per server uuid and panel username, in the host/core row `panel_grants`. Pterodactyl
// checks them (its subuser permissions are a fixed list); a grant counts only while the panel still lets
// that user open the server as a subuser (panel/RealPanel.ts).

/** The grants on one server: username → permissions. */
export const grantsOn = (serverUuid: string) =>
  Effect.map(Effect.flatMap(CoreRows, (rows) => rows.get(CoreKeys.panelGrants)), (all) =>
    Option.match(all, { onNone: () => ({}), onSome: (grants) => grants[serverUuid] ?? {} }) as Readonly<Record<string, ReadonlyArray<string>>>)

/** Gives (`true`) or takes back (`false`) one permission; returns whether anything changed. */
export const setGrant = (serverUuid: string, username: string, permission: string, granted: boolean) =>
  Effect.gen(function*() {
    const rows = yield* CoreRows
    const all: PanelGrants = Option.getOrElse(yield* rows.get(CoreKeys.panelGrants), () => ({}))
    const users = { ...(all[serverUuid] ?? {}) }
    const held = users[username] ?? []
    if (held.includes(permission) === granted) return false
    const next = granted ? [...held, permission].sort() : held.filter((entry) => entry !== permission)
    if (next.length === 0) delete users[username]
    else users[username] = next
    const servers = { ...all }
    if (Object.keys(users).length === 0) delete servers[serverUuid]
    else servers[serverUuid] = users
    yield* rows.put(CoreKeys.panelGrants, servers)
    return true
  })
