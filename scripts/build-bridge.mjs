// /host/bridge.js (src/bridge, docs/frontend.md) → dist/public/host/bridge.js, where `host serve` finds
// framework assets. It uses the panel's React through the shared globals mapping of
// src/archive/FrontendBuild.ts (compiled for this script), and never bundles React itself.
import { mkdirSync, readFileSync } from "node:fs"
import { build } from "esbuild"

const out = "dist/public/host"

export const buildBridge = async () => {
  mkdirSync(out, { recursive: true })
  await build({
    entryPoints: ["src/archive/FrontendBuild.ts"],
    outfile: "dist/build/frontend-build-bridge.mjs",
    bundle: true,
    platform: "node",
    format: "esm",
    packages: "external",
    logLevel: "warning"
  })
  const { browserBundleOptions } = await import(new URL("../dist/build/frontend-build-bridge.mjs", import.meta.url).href + `?t=${Date.now()}`)
  const sdkVersion = JSON.parse(readFileSync("sdk/package.json", "utf8")).version
  const common = browserBundleOptions({ minify: true })
  await build({
    ...common,
    entryPoints: ["src/bridge/main.ts"],
    outfile: `${out}/bridge.js`,
    sourcemap: "linked",
    define: { ...common.define, __HOST_SDK_VERSION__: JSON.stringify(sdkVersion) }
  })
  // /host/boot.js: the real panels' include (src/bridge/boot.ts); no React, no imports, ≤ 3 KB gzip.
  await build({
    entryPoints: ["src/bridge/boot.ts"],
    outfile: `${out}/boot.js`,
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2020",
    minify: true,
    logLevel: "warning"
  })
}

if (import.meta.url === `file://${process.argv[1]}`) await buildBridge()
