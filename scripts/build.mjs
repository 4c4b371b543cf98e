// Bundles the CLI (dist/host.cjs, loaded by bin/host.js with V8's code cache) and the SDK (sdk/dist)
// with esbuild. Unbundled Effect ESM starts about 4x slower; better-sqlite3's native addon is loaded from
// node_modules (scripts/sqlite-addon.mjs).
import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { build } from "esbuild"
import { chmod, readFile } from "node:fs/promises"
import { buildBridge } from "./build-bridge.mjs"
import { cliBundleOptions, cliOutputOptions } from "./cli-bundle.mjs"

const sdkSource = cliBundleOptions.conditions

await Promise.all([
  // /host/bridge.js (src/bridge): the browser runtime extension bundles register with.
  buildBridge(),
  // The reference panel's browser files and /host/utility.css (scripts/build-panel.mjs).
  import("./build-panel.mjs").then((panel) => panel.buildPanel()),
  // The admin screens: /host/admin.js and /host/admin.css (scripts/build-admin.mjs), after their route
  // table is written from the contract (scripts/generate-admin-routes.mjs).
  import("./generate-admin-routes.mjs")
    .then((routes) => routes.generateAdminRoutes())
    .then(() => import("./build-admin.mjs"))
    .then((admin) => admin.buildAdmin()),
  build({
    ...cliBundleOptions,
    outfile: "dist/host.cjs",
    sourcemap: "linked",
    // Minified and ASCII (scripts/cli-bundle.mjs); the licence comments of the bundled packages, which may
    // not be ASCII, go to dist/host.cjs.LEGAL.txt (checked below).
    ...cliOutputOptions,
    legalComments: "external",
    logLevel: "warning"
  }),
  // The worker thread that inspects admin uploads off the server's event loop (src/http/UploadWorker.ts).
  build({
    entryPoints: ["src/http/UploadWorker.ts"],
    conditions: sdkSource,
    outfile: "dist/upload-worker.cjs",
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    minify: true,
    logLevel: "warning"
  }),
  build({
    entryPoints: ["sdk/src/index.ts", "sdk/src/server.ts"],
    outdir: "sdk/dist",
    bundle: true,
    platform: "neutral",
    format: "esm",
    target: "es2022",
    external: ["yaml", "node:*"],
    logLevel: "warning"
  }),
  // @host/sdk/testing: the authors' test harness (node built-ins only; it drives bin/host.js).
  build({
    entryPoints: ["sdk/src/testing.ts"],
    outdir: "sdk/dist",
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning"
  }),
  // host-pack / host-keygen: self-contained bundles of the framework's own src/archive code, so an
  // author's host-pack and a panel's host export are one implementation writing the same bytes.
  build({
    entryPoints: ["sdk/src/bin/host-pack.ts", "sdk/src/bin/host-keygen.ts"],
    outdir: "sdk/dist/bin",
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    banner: {
      js: "#!/usr/bin/env node\nimport { createRequire as __hostCreateRequire } from 'node:module'; const require = __hostCreateRequire(import.meta.url);"
    },
    logLevel: "warning"
  }).then(() => Promise.all(["host-pack.js", "host-keygen.js"].map((file) => chmod(`sdk/dist/bin/${file}`, 0o755))))
])

if (!(await readFile("dist/host.cjs")).every((byte) => byte < 0x80)) {
  throw new Error("dist/host.cjs is not pure ASCII; bin/host.js reads it as latin1")
}

// One run on a scratch root writes `host list`'s code cache, so the first real command starts fast too;
// each other command writes its own on its first run, and the first `host serve` the server's
// (bin/host.js). The old caches go first: V8 checks a cache against the length of the source, not its
// text, so a rebuilt bundle of the same length would run the previous build's compiled functions (seen in
// P4, session 10).
const oldCaches = readdirSync("dist").filter((name) => /^host\.cjs\.(.+\.)?cache$/.test(name))
for (const cache of oldCaches) rmSync(join("dist", cache), { force: true })
const scratch = mkdtempSync(join(tmpdir(), "host-build-"))
try {
  execFileSync(process.execPath, ["bin/host.js", "list", "--json", "--root", scratch], { stdio: "ignore" })
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
