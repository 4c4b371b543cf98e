import { Args, Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { ConfigInvalid } from "../../domain/Errors.js"
import { problem } from "../../domain/Problems.js"
import { permissionGrants, setPermissionGrant } from "../../usecases/PanelAccess.js"
import { CliInvocation } from "../Invocation.js"
import { formatTable, printJson } from "../Output.js"
import { operationsLayer } from "../Runtime.js"

// `host permissions:grant|revoke <server> <user> <permission>` and `host permissions:list <server> [--json]`
// (docs/panels.md "Extension permissions"): Host-held extension-permission grants for a real panel's
// subusers, by panel username. `<server>` is the server's uuid, or its short id when the panel's
// application API is configured (`panel.application_key`) so Host knows the list. The grant counts only
// while the panel lists the user as a subuser of the server.

const serverArg = Args.text({ name: "server" }).pipe(Args.withDescription("the server's uuid (or short id with panel.application_key)"))

const badArgument = (name: string, message: string) =>
  new ConfigInvalid({ source: "arguments", problems: [problem(name, message)] })

const write = (granted: boolean) =>
  ({ permission, server, user }: { readonly server: string; readonly user: string; readonly permission: string }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      if (!/^[a-z][a-z0-9_-]*\.[a-z][a-z0-9_-]*$/.test(permission)) {
        return yield* badArgument("<permission>", `"${permission}" must have the shape <area>.<action> (as in an extension's backend.permissions)`)
      }
      yield* Effect.gen(function*() {
        const { changed, uuid } = yield* setPermissionGrant({ server, user, permission, granted })
        yield* Console.log(
          changed
            ? `${granted ? "granted" : "revoked"} ${permission} ${granted ? "to" : "from"} ${user} on ${uuid}`
            : `${user} ${granted ? "already holds" : "does not hold"} ${permission} on ${uuid}`
        )
      }).pipe(Effect.provide(operationsLayer(invocation, { listeners: false })))
    })

const userArg = Args.text({ name: "user" }).pipe(Args.withDescription("the subuser's panel username"))
const permissionArg = Args.text({ name: "permission" }).pipe(Args.withDescription("an extension permission (backend.permissions)"))

export const permissionsGrantCommand = Command.make("permissions:grant", { server: serverArg, user: userArg, permission: permissionArg }, write(true))
  .pipe(Command.withDescription("Grant an extension permission to a subuser of a server (Pterodactyl; Host keeps the grant)"))

export const permissionsRevokeCommand = Command.make("permissions:revoke", { server: serverArg, user: userArg, permission: permissionArg }, write(false))
  .pipe(Command.withDescription("Take back an extension permission from a subuser of a server"))

export const permissionsListCommand = Command.make(
  "permissions:list",
  { server: serverArg, json: Options.boolean("json").pipe(Options.withDescription("print {server, grants: [{user, permissions}]} as JSON")) },
  ({ json, server }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      yield* Effect.gen(function*() {
        const { grants: entries, server: uuid } = yield* permissionGrants(server)
        if (json) return yield* printJson({ server: uuid, grants: entries })
        if (entries.length === 0) return yield* Console.log(`no extension-permission grants on ${uuid}`)
        yield* Console.log(formatTable(["USER", "PERMISSIONS"], entries.map((entry) => [entry.user, entry.permissions.join(", ")])))
      }).pipe(Effect.provide(operationsLayer(invocation, { listeners: false })))
    })
).pipe(Command.withDescription("List the extension-permission grants Host keeps for a server's subusers"))
