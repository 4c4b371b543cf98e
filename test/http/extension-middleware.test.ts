import { describe, expect, it } from "vitest"
import { request, serveOneExtension } from "./helpers.js"

// HasMiddleware's steps as the route handler runs them (http/ExtensionRoutes.ts runMiddleware): in order,
// until one answers with a Response; a step may answer at once or with a promise (or any thenable), and a
// step that throws or rejects is the extension's failure (500, nothing of it shown).

const entrypoint = `import { type HasMiddleware, HostExtension, type Middleware } from "@host/sdk/server"

const asked = (request: Request, name: string) => new URL(request.url).searchParams.has(name)

export class MwExtension extends HostExtension implements HasMiddleware {
  getMiddleware(): Readonly<Record<string, ReadonlyArray<Middleware>>> {
    const first: Middleware = ({ request, extensionId }) => {
      if (asked(request, "sync")) return new Response("sync " + extensionId, { status: 409 })
      if (asked(request, "throw")) throw new Error("middleware secret")
      return undefined
    }
    const second: Middleware = async ({ request }) => {
      if (asked(request, "reject")) throw new Error("middleware secret")
      return asked(request, "async") ? new Response("async", { status: 418 }) : undefined
    }
    const third: Middleware = ({ request }) =>
      ({ then: (resolve: (value: unknown) => void) => resolve(asked(request, "thenable") ? new Response("thenable", { status: 202 }) : "not a response") }) as never
    const fourth: Middleware = ({ request }) => asked(request, "sync") ? new Response("never reached", { status: 500 }) : undefined
    return { api: [first, second, third, fourth], web: [first] }
  }
}
`

const server = serveOneExtension("middleware", {
  id: "acme/mw",
  version: "1.0.0",
  files: {
    "src/MwExtension.ts": entrypoint,
    "src/routes/api-client.ts": `import { defineRoutes } from "@host/sdk/server"\nexport default defineRoutes((r) => { r.get("/open", () => ({ handled: true })) })\n`,
    "src/routes/web.ts": `import { defineRoutes } from "@host/sdk/server"\nexport default defineRoutes((r) => { r.get("/open", () => ({ web: true })) })\n`
  }
})

describe("extension middleware", () => {
  it("every step passing reaches the handler, whatever each step answered with (nothing, a promise, a thenable of a non-Response)", async () => {
    const answer = await request(`${server().url}/api/client/host/acme/mw/open`, { as: "dave" })
    expect(answer.status).toBe(200)
    expect(answer.json).toEqual({ handled: true })
    expect((await request(`${server().url}/host/acme/mw/open`)).json).toEqual({ web: true })
  })

  it("a step answers at once, with a promise or with a thenable, and the steps after it do not run", async () => {
    const sync = await request(`${server().url}/api/client/host/acme/mw/open?sync`, { as: "dave" })
    expect([sync.status, sync.text]).toEqual([409, "sync acme/mw"])
    const web = await request(`${server().url}/host/acme/mw/open?sync`)
    expect([web.status, web.text]).toEqual([409, "sync acme/mw"])
    const later = await request(`${server().url}/api/client/host/acme/mw/open?async`, { as: "dave" })
    expect([later.status, later.text]).toEqual([418, "async"])
    const thenable = await request(`${server().url}/api/client/host/acme/mw/open?thenable`, { as: "dave" })
    expect([thenable.status, thenable.text]).toEqual([202, "thenable"])
  })

  it("a step that throws or rejects is a 500 that shows nothing of it", async () => {
    for (const query of ["throw", "reject"]) {
      const failed = await request(`${server().url}/api/client/host/acme/mw/open?${query}`, { as: "dave" })
      expect(failed.status).toBe(500)
      expect(failed.json).toEqual({ errors: [{ code: "InternalServerError", status: "500", detail: "the server failed to handle this request" }] })
      expect(failed.text).not.toContain("middleware secret")
    }
  })
})
