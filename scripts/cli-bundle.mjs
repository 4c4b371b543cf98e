// What dist/host.cjs is made of: the entry, what stays outside the bundle and the plugins. scripts/build.mjs
// builds it; test/layering/startup-graph.test.ts reads the same graph to see what a command evaluates at start.
import { deepImports } from "./deep-imports.mjs"
import { httpClientWithoutUndici } from "./http-client-without-undici.mjs"
import { sqliteAddon } from "./sqlite-addon.mjs"

export const cliBundleOptions = {
  entryPoints: ["src/cli/bin.ts"],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  // esbuild is the authoring commands' own build tool; mysql2 and pg load only on their dialect
  // (store/Dialect.ts) and stay out of the bundle every command reads.
  external: ["esbuild", "better-sqlite3/package.json", "mysql2", "mysql2/*", "pg", "pg-cursor"],
  // The framework imports @host/sdk as a package; the workspace's `host-source` export condition
  // (sdk/package.json, docs/decisions.md) points it at the TypeScript source, so a bundle never waits for sdk/dist.
  conditions: ["host-source"],
  plugins: [deepImports, sqliteAddon, httpClientWithoutUndici]
}

// How dist/host.cjs is written: minified, and pure ASCII, because bin/host.js reads the bundle as latin1,
// which is only right for ASCII (esbuild escapes non-ASCII text in code with this charset; scripts/build.mjs
// sends the licence comments, which may not be ASCII, to dist/host.cjs.LEGAL.txt and checks the result).
// It is written already wrapped as Node wraps a CommonJS module (Module.wrap's text, which bin/host.js
// calls with the module's five arguments): V8 then compiles the string read from the file as it is, where
// joining the wrapper around a 2 MB string made V8 copy all of it into its heap once more (docs/decisions.md
// "P1 floor: the bundle is read once"). So dist/host.cjs is only run by bin/host.js, never required.
// The startup bench builds its floor program the same way (bench/cli-floor.mjs).
export const cliOutputOptions = {
  minify: true,
  charset: "ascii",
  banner: { js: "(function (exports, require, module, __filename, __dirname) { " },
  footer: { js: "\n})" }
}
