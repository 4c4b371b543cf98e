// The reference panel's browser files (docs/frontend.md), written to dist/public/host/ where `host serve`
// finds framework assets:
//   vendor.js   React 18 as the page's globals (window.React, window.ReactDOM, window.ReactJSXRuntime)
//   panel.js    the panel single-page app (src/panel-app), using those globals
//   panel.css   the panel's own look (theme variables on :root, components)
//   favicon.svg the panel's icon
//   utility.css Tailwind CSS v4 from the panel app's classes plus the safelist in src/panel-app/utility.css
import { execFileSync } from "node:child_process"
import { copyFileSync, mkdirSync } from "node:fs"
import { createRequire } from "node:module"
import { build } from "esbuild"

const out = "dist/public/host"
const require = createRequire(import.meta.url)

/** src/archive/FrontendBuild.ts (TypeScript) compiled for this script: the one copy of the globals mapping. */
const frontendBuild = async () => {
  await build({
    entryPoints: ["src/archive/FrontendBuild.ts"],
    outfile: "dist/build/frontend-build.mjs",
    bundle: true,
    platform: "node",
    format: "esm",
    packages: "external",
    logLevel: "warning"
  })
  return import(new URL("../dist/build/frontend-build.mjs", import.meta.url).href + `?t=${Date.now()}`)
}

const tailwind = () => {
  // The CLI of @tailwindcss/cli, run with this node: scans the panel app's sources named by @source.
  const cli = require.resolve("@tailwindcss/cli/package.json").replace(/package\.json$/, "dist/index.mjs")
  execFileSync(process.execPath, [cli, "--input", "src/panel-app/utility.css", "--output", `${out}/utility.css`, "--minify"], {
    stdio: ["ignore", "ignore", "pipe"]
  })
}

export const buildPanel = async () => {
  mkdirSync(out, { recursive: true })
  const { browserBundleOptions } = await frontendBuild()
  const common = browserBundleOptions({ minify: true })
  await Promise.all([
    // The vendor script is the one place React itself is bundled, so it must not map React to globals.
    build({ ...common, plugins: [], entryPoints: ["src/panel-app/vendor.ts"], outfile: `${out}/vendor.js` }),
    build({ ...common, entryPoints: ["src/panel-app/main.tsx"], outfile: `${out}/panel.js` }),
    build({ entryPoints: ["src/panel-app/panel.css"], outfile: `${out}/panel.css`, bundle: true, minify: true, logLevel: "warning" }),
    Promise.resolve().then(tailwind)
  ])
  copyFileSync("src/panel-app/favicon.svg", `${out}/favicon.svg`)
}

if (import.meta.url === `file://${process.argv[1]}`) await buildPanel()
