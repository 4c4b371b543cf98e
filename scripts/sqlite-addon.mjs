// An esbuild plugin for the CLI bundle: better-sqlite3's JavaScript is bundled (so it runs from the
// bundle's code cache), and only its native addon is loaded from node_modules.
//
// Why: kept external, better-sqlite3 cost every command about 7 ms of its cold start — a dozen files
// resolved, read and compiled without a cache — and `bindings` another 1–2 ms searching for the addon
// (docs/architecture.md, "Startup"). The addon is where `npm install` puts it, build/Release of the
// installed package; anywhere else, `bindings` searches as before.
export const sqliteAddon = {
  name: "sqlite-addon",
  setup(build) {
    build.onResolve({ filter: /^bindings$/ }, (args) =>
      /[\\/]better-sqlite3[\\/]/.test(args.importer) ? { path: "bindings", namespace: "sqlite-addon" } : undefined)
    build.onLoad({ filter: /.*/, namespace: "sqlite-addon" }, () => ({
      loader: "js",
      resolveDir: process.cwd(),
      contents: `
        const { existsSync } = require("node:fs")
        const { createRequire } = require("node:module")
        const { dirname, join } = require("node:path")
        module.exports = (name) => {
          const packageJson = require.resolve("better-sqlite3/package.json")
          const addon = join(dirname(packageJson), "build", "Release", name)
          return existsSync(addon) ? require(addon) : createRequire(packageJson)("bindings")(name)
        }
      `
    }))
  }
}
