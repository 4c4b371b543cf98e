// The admin screens' browser files (docs/admin.md), written to dist/public/host/ where `host serve` finds
// framework assets: admin.js (src/admin-app, on the panel's React globals through src/archive/FrontendBuild.ts)
// and admin.css.
import { mkdirSync } from "node:fs"
import { build } from "esbuild"

const out = "dist/public/host"

/** src/archive/FrontendBuild.ts compiled for this script: the one copy of the globals mapping. */
const frontendBuild = async () => {
  await build({
    entryPoints: ["src/archive/FrontendBuild.ts"],
    outfile: "dist/build/frontend-build-admin.mjs",
    bundle: true,
    platform: "node",
    format: "esm",
    packages: "external",
    logLevel: "warning"
  })
  return import(new URL("../dist/build/frontend-build-admin.mjs", import.meta.url).href + `?t=${Date.now()}`)
}

export const buildAdmin = async () => {
  mkdirSync(out, { recursive: true })
  const { browserBundleOptions } = await frontendBuild()
  await Promise.all([
    build({ ...browserBundleOptions({ minify: true }), entryPoints: ["src/admin-app/main.tsx"], outfile: `${out}/admin.js` }),
    build({ entryPoints: ["src/admin-app/admin.css"], outfile: `${out}/admin.css`, bundle: true, minify: true, logLevel: "warning" })
  ])
}

if (import.meta.url === `file://${process.argv[1]}`) await buildAdmin()
