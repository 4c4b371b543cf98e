import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { AccountView } from "./Client.js"
import { SignedIn } from "./Security.js"
import { failsWith } from "./Statuses.js"

// The reference panel's JSON (docs/frontend.md "Reference panel") as typed contracts: the signed-in account,
// the servers it may see with its permissions on each, and one server (404 for one it may not see).

/** panel/PanelView.ts `serverView`: `subusers` only in the detail, for users who may manage them. */
export const ServerView = Schema.Struct({
  uuid: Schema.String,
  name: Schema.String,
  owner: Schema.Struct({ id: AccountView.fields.id, username: Schema.String }),
  isOwner: Schema.Boolean,
  role: Schema.Literal("admin", "owner", "subuser"),
  permissions: Schema.Array(Schema.String),
  subusers: Schema.optional(Schema.Array(Schema.Struct({
    id: AccountView.fields.id,
    username: Schema.String,
    email: Schema.String,
    permissions: Schema.Array(Schema.String)
  })))
})
export type ServerView = typeof ServerView.Type

export const AccountBody = Schema.Struct({ data: AccountView })
export const ServersBody = Schema.Struct({ data: Schema.Array(ServerView) })
export const ServerBody = Schema.Struct({ data: ServerView })

export class PanelApi extends HttpApiGroup.make("panel")
  .add(HttpApiEndpoint.get("account", "/api/client/account").middleware(SignedIn).addSuccess(AccountBody).pipe(failsWith(401)))
  .add(HttpApiEndpoint.get("servers", "/api/client/servers").middleware(SignedIn).addSuccess(ServersBody).pipe(failsWith(401)))
  .add(
    HttpApiEndpoint.get("server", "/api/client/servers/:uuid").middleware(SignedIn)
      .setPath(Schema.Struct({ uuid: Schema.String }))
      .addSuccess(ServerBody)
      .pipe(failsWith(401, 404))
  )
{}
