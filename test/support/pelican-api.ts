import { type PanelStandIn, startPanelStandIn, type StandInServer, type StandInUser } from "./pterodactyl-api.js"

// Pelican's client API as a stand-in (docs/panels.md "Drivers"): the account has a `uuid` and no numeric
// id, `root_admin` marks an administrator, the session cookie is `pelican_session`, and no client endpoint
// has a 2FA guard. The rest is Pterodactyl's shape (pterodactyl-api.ts).
export const startPelicanStandIn = (options: {
  readonly users: ReadonlyArray<StandInUser>
  readonly servers: ReadonlyArray<StandInServer>
}): Promise<PanelStandIn> => startPanelStandIn({ ...options, kind: "pelican" })
