import { Option, Schema } from "effect"
import type { PanelKind, PanelUser } from "./Panel.js"

// What differs between the two real panels Host knows (docs/panels.md "Drivers"): how each names its
// session cookie, how its account answer reads, and whether its own permission list carries extension
// permissions.

export interface Flavor {
  readonly kind: Exclude<PanelKind, "embedded">
  /** The session cookie when `.env` sets neither SESSION_COOKIE nor (Pterodactyl) APP_NAME. */
  readonly defaultCookie: string
  /** Pterodactyl exempts /api/client/account from its 2FA policy: another endpoint must be asked too. */
  readonly twoFactorProbe: boolean
  /** Whether the cookie name follows APP_NAME (Pterodactyl) or is fixed (Pelican). */
  readonly cookieFromAppName: boolean
  readonly decodeUser: (body: unknown) => Option.Option<PanelUser>
  /** Whether a subuser holds an extension permission through the panel's own permission list. */
  readonly panelGrants: boolean
}

const PteroAccount = Schema.Struct({
  attributes: Schema.Struct({
    id: Schema.Int,
    admin: Schema.Boolean,
    username: Schema.String,
    email: Schema.optionalWith(Schema.String, { default: () => "" })
  })
})

const PelicanAccount = Schema.Struct({
  attributes: Schema.Struct({
    uuid: Schema.String,
    username: Schema.String,
    email: Schema.optionalWith(Schema.String, { default: () => "" }),
    root_admin: Schema.optionalWith(Schema.Boolean, { default: () => false })
  })
})

const userOf = (id: number | string, username: string, email: string, admin: boolean): PanelUser => ({
  id,
  username,
  email,
  admin,
  permissions: [],
  credentialStamp: ""
})

export const flavors: Readonly<Record<Exclude<PanelKind, "embedded">, Flavor>> = {
  pterodactyl: {
    kind: "pterodactyl",
    defaultCookie: "pterodactyl_session",
    twoFactorProbe: true,
    cookieFromAppName: true,
    decodeUser: (body) =>
      Option.map(Schema.decodeUnknownOption(PteroAccount)(body), ({ attributes: a }) => userOf(a.id, a.username, a.email, a.admin)),
    panelGrants: false
  },
  pelican: {
    kind: "pelican",
    defaultCookie: "pelican_session",
    twoFactorProbe: false,
    cookieFromAppName: false,
    decodeUser: (body) =>
      Option.map(Schema.decodeUnknownOption(PelicanAccount)(body), ({ attributes: a }) => userOf(a.uuid, a.username, a.email, a.root_admin)),
    panelGrants: true
  }
}
