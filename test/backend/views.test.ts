import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { operationsLayer, platformLayer } from "../../src/CompositionRoot.js"
import { Lifecycle } from "../../src/lifecycle/Lifecycle.js"
import { SourceSpec } from "../../src/lifecycle/Source.js"
import { bootForCli } from "../../src/runtime/Backend.js"
import { renderView, viewNamespaces } from "../../src/runtime/Views.js"
import { repoRoot, tempDir } from "../support/cli.js"
import { writeExtension } from "../support/extensions.js"

/** acme/pages: an entrypoint declaring the view namespace `pages` under resources/views, plus `files`. */
const writePages = (dir: string, files: Readonly<Record<string, string>>) =>
  writeExtension(dir, {
    id: "acme/pages",
    version: "1.0.0",
    files: {
        "src/PagesExtension.ts": `import { HostExtension } from "@host/sdk/server"
export class PagesExtension extends HostExtension {
  getViewsPath() { return "resources/views" }
  getViewNamespace() { return "pages" }
}
`,
      ...files
    }
  })

describe("view namespaces", () => {
  it.effect("render namespace::view with auto-escaping, and name what is wrong", () => {
    const root = tempDir("host-root-")
    const src = tempDir("host-src-")
    const extension = writePages(src.path, {
        "resources/views/hello.eta": "<h1>Hello <%= it.name %></h1><%~ include('./footer', it) %>",
        "resources/views/footer.eta": "<footer><%= it.note %></footer>",
        "resources/views/broken.eta": "<%= it.missing.deeper %>"
    })
    return Effect.gen(function*() {
      yield* Effect.flatMap(Lifecycle, (lifecycle) => lifecycle.add(SourceSpec.Directory({ path: extension }), { actor: { type: "cli" } }))
      const namespaces = yield* Effect.flatMap(bootForCli, viewNamespaces)
      expect([...namespaces.keys()]).toEqual(["pages"])
      expect(yield* renderView(namespaces, "pages::hello", { name: "<b>Ann</b>", note: "a & b" }))
        .toBe("<h1>Hello &lt;b&gt;Ann&lt;/b&gt;</h1><footer>a &amp; b</footer>")
      const errors = yield* Effect.all([
        Effect.flip(renderView(namespaces, "hello")),
        Effect.flip(renderView(namespaces, "other::hello")),
        Effect.flip(renderView(namespaces, "pages::../../etc/passwd")),
        Effect.flip(renderView(namespaces, "pages::nope")),
        Effect.flip(renderView(namespaces, "pages::broken"))
      ])
      expect(errors.map((error) => error.message)).toEqual([
        "view hello: name views as <namespace>::<view>",
        `view other::hello: no enabled extension declares the namespace "other"`,
        `view pages::../../etc/passwd: ".." is not allowed in a view name`,
        expect.stringContaining("view pages::nope: "),
        expect.stringContaining("view pages::broken: ")
      ])
    }).pipe(
      Effect.provide(Layer.fresh(operationsLayer({ frameworkRoot: repoRoot, root: root.path, verbose: false, env: {} }).pipe(Layer.provideMerge(platformLayer)))),
      Effect.ensuring(Effect.sync(() => {
        root.cleanup()
        src.cleanup()
      }))
    )
  })
})

describe("views from route handlers", () => {
  it("a web route renders namespace::view through its context", async () => {
    const { install, request, startServer, writePanelConfig } = await import("../http/helpers.js")
    const root = tempDir("host-root-")
    const src = tempDir("host-src-")
    writePanelConfig(root.path)
    const extension = writePages(src.path, {
        "src/routes/web.ts": `import { defineRoutes } from "@host/sdk/server"
export default defineRoutes((r) => {
  r.get("/hello", async ({ query, view }) =>
    new Response(await view("pages::hello", { name: query.name ?? "you" }), { headers: { "content-type": "text/html" } }))
})
`,
        "resources/views/hello.eta": "<h1>Hello <%= it.name %></h1>"
    })
    await install(root.path, extension)
    const server = await startServer(root.path)
    try {
      const page = await request(`${server.url}/host/acme/pages/hello?name=%3Cscript%3E`, { as: "alice" })
      expect(page.status).toBe(200)
      expect(page.headers.get("content-type")).toContain("text/html")
      expect(page.text).toBe("<h1>Hello &lt;script&gt;</h1>")
    } finally {
      await server.stop()
      root.cleanup()
      src.cleanup()
    }
  })
})
