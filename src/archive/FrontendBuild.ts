import type { BuildOptions, Plugin } from "esbuild"
import sdkPackage from "../../sdk/package.json" with { type: "json" }

// The one place that says how browser code is bundled for the panel (docs/frontend.md): the panel app,
// the admin app, the bridge and every extension bundle share the panel's single React and the bridge's
// SDK instead of bundling their own copies. esbuild resolves these imports to the page's globals, set
// by the panel's vendor script (React) and by /host/bridge.js (`window.__HOST__.sdk`).

/** The @host/sdk version bundles are built against (the bridge warns on another major: docs/frontend.md). */
export const sdkVersion: string = sdkPackage.version

/**
 * `@host/sdk` in a bundle: the bridge's SDK object, asked for a copy whose `createExtension` remembers
 * the SDK version the bundle was built with; a clear error when the page has no bridge.
 */
const sdkGlobal = `(function(h){if(!h||!h.sdk)throw new Error("@host/sdk: window.__HOST__ is missing; extension bundles run inside a Host panel page, after /host/bridge.js");` +
  `return typeof h.sdk.forBundle==="function"?h.sdk.forBundle(${JSON.stringify(sdkVersion)}):h.sdk})(window.__HOST__)`

/** Import specifier → the global expression it stands for on a panel page. */
export const hostGlobals: Readonly<Record<string, string>> = {
  "react": "window.React",
  "react-dom": "window.ReactDOM",
  "react-dom/client": "window.ReactDOM",
  "react/jsx-runtime": "window.ReactJSXRuntime",
  "@host/sdk": sdkGlobal
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")

/** An esbuild plugin resolving the `hostGlobals` imports to their globals (never bundled). */
export const hostGlobalsPlugin = (globals: Readonly<Record<string, string>> = hostGlobals): Plugin => ({
  name: "host-globals",
  setup(build) {
    const filter = new RegExp(`^(${Object.keys(globals).map(escapeRegExp).join("|")})$`)
    build.onResolve({ filter }, (args) => ({ path: args.path, namespace: "host-global" }))
    // CommonJS modules, so both `import X from` and `import * as X from` / named imports work.
    build.onLoad({ filter: /.*/, namespace: "host-global" }, (args) => ({
      contents: `module.exports = ${globals[args.path]};`,
      loader: "js"
    }))
  }
})

/** The esbuild options every browser bundle of the panel starts from (IIFE, automatic JSX runtime). */
export const browserBundleOptions = (options: { readonly minify?: boolean } = {}): BuildOptions => ({
  bundle: true,
  platform: "browser",
  format: "iife",
  target: "es2020",
  jsx: "automatic",
  charset: "utf8",
  legalComments: "none",
  minify: options.minify ?? true,
  define: { "process.env.NODE_ENV": "\"production\"" },
  plugins: [hostGlobalsPlugin()],
  logLevel: "warning"
})
