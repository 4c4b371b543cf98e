// An esbuild plugin for the CLI bundle: `@effect/platform-node/NodeHttpClient` is bundled as the node:http
// client alone, without its undici client.
//
// Why: Host makes its HTTP clients with `NodeHttpClient.layer` (node:http; the registry, `host doctor`,
// `host setup`), but the module also re-exports the undici client, which brings undici itself: 527 KB of
// the bundle's 2.15 MB. A command never evaluates it (the client loads on first use), yet every start reads
// those bytes and copies them into a string (bin/host.js), so they cost fresh memory and page faults
// (docs/decisions.md "P1 floor: the bundle is read once"). This module exports what the package's
// module exports from its node:http client, under the same names; a use of the undici client in src/ would
// fail the build ("No matching export") rather than load something else.
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
    build.onLoad({ filter: /.*/, namespace: "http-client-without-undici" }, () => {
      const internal = join(dirname(require.resolve("@effect/platform-node/package.json")), "dist", "esm", "internal", "httpClient.js")
      return {
        loader: "js",
        resolveDir: dirname(internal),
        contents: `export { HttpAgentTypeId, HttpAgent, makeAgent, agentLayer, makeAgentLayer, make, layer, layerWithoutAgent } from ${JSON.stringify(internal)}\n`
      }
    })
  }
}
