// The admin screens' route table, written from the contract: every endpoint of the `admin` group of
// HostApi (src/http/contracts/Admin.ts) with its method, path and success statuses. The admin app
// (src/admin-app/api.ts) calls endpoints by name; their types come from the contract through type-only
// imports, and their method and path from this table, so the browser bundle carries no Effect code
// (docs/decisions.md "The admin client is derived from the contract").
//
// scripts/generate-admin-routes.mjs writes src/admin-app/routes.generated.ts with it at build time;
// test/admin-app/routes.test.ts fails when the committed file differs from what the contract says.
import { HttpApi } from "@effect/platform"
import { HostApi } from "../src/http/contracts/Api.js"

export const adminRoutesFile = "src/admin-app/routes.generated.ts"

export interface AdminRoute {
  readonly name: string
  readonly method: string
  readonly path: string
  /** The statuses whose body is the endpoint's success schema (a stopped reconcile answers its plan with 422). */
  readonly successes: ReadonlyArray<number>
}

/** The `admin` group's endpoints, in the contract's order. */
export const adminRoutes = (api: typeof HostApi = HostApi): ReadonlyArray<AdminRoute> => {
  const routes: Array<AdminRoute> = []
  HttpApi.reflect(api, {
    predicate: ({ group }) => group.identifier === "admin",
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, successes }) => {
      routes.push({
        name: endpoint.name,
        method: endpoint.method,
        path: endpoint.path,
        successes: [...successes.keys()].sort((a, b) => a - b)
      })
    }
  })
  return routes
}

const quote = (text: string) => JSON.stringify(text)

/** The text of src/admin-app/routes.generated.ts. */
export const renderAdminRoutes = (api: typeof HostApi = HostApi): string => {
  const lines = adminRoutes(api).map((route) =>
    `  ${route.name}: { method: ${quote(route.method)}, path: ${quote(route.path)}, successes: [${route.successes.join(", ")}] },`
  )
  return [
    "// Generated from HostApi (src/http/contracts/Api.ts, the `admin` group) by scripts/generate-admin-routes.mjs,",
    "// which `npm run build` runs. Do not edit: test/admin-app/routes.test.ts fails when this differs from the contract.",
    "export const adminRoutes = {",
    ...lines.map((line, index) => (index === lines.length - 1 ? line.slice(0, -1) : line)),
    "} as const",
    ""
  ].join("\n")
}
