import { describe, expect, it } from "vitest"
import { request, serveOneExtension } from "./helpers.js"

// The runtime a handler's awaited statements run on is made when it first reads `sql` (http/ExtensionRoutes.ts,
// docs/decisions.md "Extension routes copy the request's context less"): read at once or only after the
// handler awaited something else, the statement runs and answers the same.

const routes = `import { defineRoutes } from "@host/sdk/server"
export default defineRoutes((r) => {
  r.get("/now", async ({ sql }) => {
    const [row] = await sql\`SELECT 41 + 1 AS answer\`
    return row
  })
  r.get("/later", async (context) => {
    await new Promise((resolve) => setTimeout(resolve, 10))
    const [row] = await context.sql\`SELECT 41 + 1 AS answer\`
    return row
  })
  r.get("/never", () => ({ sql: "unused" }))
})
`

const server = serveOneExtension("route-runtime", { id: "acme/rt", version: "1.0.0", files: { "src/routes/api-client.ts": routes } })

describe("an extension route's SQL", () => {
  it("runs when the handler reads `sql` at once, after an await, and is not needed otherwise", async () => {
    for (const path of ["now", "later"]) {
      const answer = await request(`${server().url}/api/client/host/acme/rt/${path}`, { as: "dave" })
      expect(answer.status, path).toBe(200)
      expect(answer.json, path).toEqual({ answer: 42 })
    }
    const never = await request(`${server().url}/api/client/host/acme/rt/never`, { as: "dave" })
    expect(never.status).toBe(200)
    expect(never.json).toEqual({ sql: "unused" })
  })
})
