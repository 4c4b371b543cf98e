// An esbuild plugin for the CLI bundle: `@effect/platform-node/NodeHttpClient` is bundled as the node:http
// client alone, without its undici client.
//
// Why: Host makes its HTTP clients with `NodeHttpClient.layer` (node:http; the registry, `host doctor`,
// `host setup`), but the module also re-exports the undici client, which brings undici itself: 527 KB of
// the bundle's 2.15 MB. A command never evaluates it (the client loads on first use), yet every start reads
// those bytes and copies them into a string (bin/host.js), so they cost fresh memory and page faults
// (docs/decisions.md "P1 floor: the bundle is read once"). The plugin's module exports what the package's
// module exports from its node:http client, under the same names, read from that module (a module of
// another shape fails the build); a use of the undici client in src/ would fail the build ("No matching
// export") rather than load something else.
import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

const require = createRequire(import.meta.url)

export const httpClientWithoutUndici = {
  name: "http-client-without-undici",
  setup(build) {
    build.onResolve({ filter: /^@effect\/platform-node\/NodeHttpClient$/ }, () => ({
      path: "NodeHttpClient",
      namespace: "http-client-without-undici"
    }))
    build.onLoad({ filter: /.*/, namespace: "http-client-without-undici" }, async () => {
      const dist = join(dirname(require.resolve("@effect/platform-node/package.json")), "dist", "esm")
      // The names are the package's own: each `export const name = internal.name` of its module, where
      // `internal` is its node:http client (the undici client's exports name `internalUndici`).
      const module = await readFile(join(dist, "NodeHttpClient.js"), "utf8")
      const names = [...module.matchAll(/^export const (\w+) = internal\.(\w+);$/gm)].map(([, name, inner]) => `${inner} as ${name}`)
      if (names.length === 0 || !module.includes('import * as internal from "./internal/httpClient.js"')) {
        return { errors: [{ text: "@effect/platform-node's NodeHttpClient.js no longer has the shape scripts/http-client-without-undici.mjs reads; update the plugin" }] }
      }
      return {
        loader: "js",
        resolveDir: join(dist, "internal"),
        contents: `export { ${names.join(", ")} } from ${JSON.stringify(join(dist, "internal", "httpClient.js"))}\n`
      }
    })
  }
}
