import { HttpApi, type HttpApiGroup } from "@effect/platform"

// Who may call each endpoint of the HttpApi, stated once per group (and per endpoint where it differs):
// the OpenAPI document names the security schemes from it (http/api/OpenApiDocument.ts), and the
// authorization test tries every endpoint of the API against it (test/http/authz.test.ts "R5: every endpoint of the HttpApi").
// The handlers enforce it (http/Context.ts `requireUser`, http/admin `adminActor`, http/ServerAccess.ts,
// http/admin/Webhook.ts); docs/http.md "Authentication" and "Admin JSON API".

/**
 * - `anyone`: no credential needed;
 * - `user`: a signed-in user (panel session cookie or bearer token);
 * - `server`: a user with access to the path's `{server}` (its owner, or a subuser holding the grant);
 * - `admin`: a signed-in panel administrator;
 * - `admin-or-signed`: an administrator, or a webhook delivery signed with `webhook_secret`.
 */
export type Caller = "anyone" | "user" | "server" | "admin" | "admin-or-signed"

const byGroup: Record<string, Caller> = {
  meta: "anyone",
  client: "user",
  panel: "user",
  admin: "admin",
  webhook: "admin-or-signed"
}

/** Endpoints whose caller is not their group's. */
const byEndpoint: Record<string, Caller> = {
  "client.accessList": "server",
  "client.accessGrant": "server",
  "client.accessRevoke": "server"
}

/** The declared caller of `group.endpoint`; an unknown group is a programming error, caught by the tests. */
export const callerOf = (group: string, endpoint: string): Caller => {
  const caller = byEndpoint[`${group}.${endpoint}`] ?? byGroup[group]
  if (caller === undefined) throw new Error(`http/contracts/Security.ts: no caller declared for the group ${group}`)
  return caller
}

/** Every group and endpoint of an HttpApi, for the document and the tests that walk the API. */
export const endpointsOf = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(api: HttpApi.HttpApi<Id, Groups, E, R>) => {
  const endpoints: Array<{ readonly group: string; readonly name: string; readonly method: string; readonly path: string; readonly caller: Caller }> = []
  HttpApi.reflect(api, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, group }) => {
      endpoints.push({ group: group.identifier, name: endpoint.name, method: endpoint.method, path: endpoint.path, caller: callerOf(group.identifier, endpoint.name) })
    }
  })
  return endpoints
}

/** The security schemes of the OpenAPI document (https://spec.openapis.org/oas/v3.1.0#security-scheme-object). */
export const securitySchemes = {
  panelSession: {
    type: "apiKey",
    in: "cookie",
    name: "host_session",
    description: "The panel's session cookie (embedded panel: host_session; under Pterodactyl or Pelican, the panel's own session cookie). Unsafe methods also need the CSRF header (docs/http.md \"Errors\", 403 CsrfTokenMismatch)."
  },
  bearerToken: { type: "http", scheme: "bearer", description: "An API token of the panel (Authorization: Bearer …)." },
  webhookSignature: {
    type: "apiKey",
    in: "header",
    name: "X-Host-Signature-256",
    description: "HMAC-SHA256 of the delivery with webhook_secret (docs/gitops.md \"Apply with a signed webhook\")."
  }
} as const

/** The OpenAPI security requirements for a caller: any one of the listed alternatives suffices. */
export const securityOf = (caller: Caller): ReadonlyArray<Record<string, ReadonlyArray<string>>> => {
  switch (caller) {
    case "anyone":
      return []
    case "user":
    case "server":
    case "admin":
      return [{ panelSession: [] }, { bearerToken: [] }]
    case "admin-or-signed":
      return [{ webhookSignature: [] }, { panelSession: [] }, { bearerToken: [] }]
  }
}
