import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { HostApi } from "../../src/http/contracts/Api.js"
import { type Caller, endpointsOf } from "../../src/http/contracts/Security.js"
import { fixture, tempDir } from "../support/cli.js"
import { type Answer, install, type PanelUserName, request, type RunningServer, startServer, writePanelConfig } from "./helpers.js"

// The HttpApi as the one list of Host's endpoints (DESIGN.md §23): the OpenAPI document generated from it
// names every endpoint and nothing else, and every path in it is served. (Each endpoint answering its
// declared caller is test/http/authz.test.ts "R5: every endpoint of the HttpApi".)

const root = tempDir("host-api-contract-")
let server: RunningServer

beforeAll(async () => {
  writePanelConfig(root.path)
  await install(root.path, fixture("runtime", "probe"))
  server = await startServer(root.path)
})

afterAll(async () => {
  await server?.stop()
  root.cleanup()
})

const endpoints = endpointsOf(HostApi)

/** A path of the API with its parameters filled: `{server}` is alice's server, the others a dummy. */
const concrete = (path: string) =>
  path.replace(/:server\b/, "srv-alice").replace(/:action\b/, "enable").replace(/:vendor\b/, "acme").replace(/:name\b/, "probe")
    .replace(/:\w+/g, "dummy")

/**
 * One request of an endpoint. Unsafe methods carry a body no payload schema accepts, so an allowed caller
 * gets 400 (or the endpoint's own refusal) and nothing changes: the caller is judged before the body.
 */
const call = (method: string, path: string, as: PanelUserName | undefined): Promise<Answer> =>
  request(`${server.url}${concrete(path)}`, {
    method,
    ...(as === undefined ? {} : { as }),
    ...(method === "GET" ? {} : { body: "not json", headers: { "content-type": "application/json" } })
  })

/**
 * The answer of a path the router does not serve, to tell a route miss from a handler's 404: the server's
 * plain "not found", a 405, or (under a group prefix such as /admin/host/api) the extension routes' miss.
 */
const isRouteMiss = (answer: Answer) => {
  if (answer.status === 405) return true
  if (answer.status !== 404) return false
  const detail = (answer.json as { errors?: ReadonlyArray<{ detail?: string }> } | undefined)?.errors?.[0]?.detail ?? ""
  return detail === "not found" || detail.startsWith("no enabled extension ")
}

describe("the HttpApi as the list of endpoints", () => {
  it("GET /host/openapi.json is the OpenAPI 3.1 document, public, revalidated by its ETag", async () => {
    const answer = await request(`${server.url}/host/openapi.json`)
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/)
    const etag = answer.headers.get("etag")
    expect(etag).toMatch(/^".+"$/)
    expect(answer.headers.get("cache-control")).toBe("public, no-cache")
    const document = answer.json as { openapi: string; paths: Record<string, Record<string, { security: unknown; "x-host-caller": Caller }>>; components: { securitySchemes: Record<string, unknown> } }
    expect(document.openapi).toBe("3.1.0")
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(["bearerToken", "panelSession", "webhookSignature"])
    // Alternatives (any one satisfies); the bearer scheme first (http/contracts/Security.ts `signedIn` says why).
    expect(document.paths["/admin/host/reconcile"]?.post?.security).toEqual([{ bearerToken: [] }, { webhookSignature: [] }, { panelSession: [] }])
    expect(document.paths["/host/openapi.json"]?.get?.security).toEqual([])
    // Each operation's security and caller are its endpoint's statement (the middleware on it), whatever the kind.
    const securityOf: Record<Caller, unknown> = {
      anyone: [],
      user: [{ bearerToken: [] }, { panelSession: [] }],
      server: [{ bearerToken: [] }, { panelSession: [] }],
      admin: [{ bearerToken: [] }, { panelSession: [] }],
      "admin-or-signed": [{ bearerToken: [] }, { webhookSignature: [] }, { panelSession: [] }]
    }
    const misdocumented = endpoints.flatMap((endpoint) => {
      const operation = document.paths[endpoint.path.replace(/:(\w+)/g, "{$1}")]?.[endpoint.method.toLowerCase()]
      return JSON.stringify(operation?.security) === JSON.stringify(securityOf[endpoint.caller]) && operation?.["x-host-caller"] === endpoint.caller
        ? []
        : [`${endpoint.group}.${endpoint.name} (${endpoint.caller}): ${JSON.stringify(operation?.security)} ${operation?.["x-host-caller"]}`]
    })
    expect(misdocumented).toEqual([])
    // The statements: the webhook and both reconciles take a signature, the access endpoints the server's owner, the document anyone.
    const callerOf = (name: string) => endpoints.find((endpoint) => `${endpoint.group}.${endpoint.name}` === name)?.caller
    expect([callerOf("webhook.reconcile"), callerOf("admin.reconcile"), callerOf("client.accessGrant"), callerOf("meta.openapi"), callerOf("admin.install")])
      .toEqual(["admin-or-signed", "admin-or-signed", "server", "anyone", "admin"])
    const again = await request(`${server.url}/host/openapi.json`, { headers: { "if-none-match": etag ?? "" } })
    expect(again.status).toBe(304)
    expect(again.text).toBe("")

    // Every endpoint of the API is in the document, and nothing else is.
    const declared = endpoints.map((endpoint) => `${endpoint.method.toLowerCase()} ${endpoint.path.replace(/:(\w+)/g, "{$1}")}`).sort()
    const documented = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`)).sort()
    expect(documented).toEqual(declared)

    // Every path in the document is served: an admin's request of it reaches its handler, never a route miss.
    const missed: Array<string> = []
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of Object.keys(item)) {
        const answer = await call(method.toUpperCase(), path.replace(/\{(\w+)\}/g, ":$1"), "admin")
        if (isRouteMiss(answer)) missed.push(`${method} ${path}: ${answer.status} ${answer.text}`)
      }
    }
    expect(missed).toEqual([])
    // …and the check can fail: a path Host does not serve is a route miss.
    const miss = await call("GET", "/admin/host/api/no-such-endpoint", "admin")
    expect(isRouteMiss(miss), miss.text).toBe(true)
    const elsewhere = await call("GET", "/host/no-such-document.json", "admin")
    expect(isRouteMiss(elsewhere), elsewhere.text).toBe(true)
  })
})
