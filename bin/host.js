#!/usr/bin/env node
// `host`: loads the esbuild bundle made by `npm run build` (run by `npm install`).
import { existsSync } from "node:fs"

const bundle = new URL("../dist/host.mjs", import.meta.url)
if (!existsSync(bundle)) {
  process.stderr.write("error: host: the CLI is not built; run `npm run build` (or `npm install`) first\n")
  process.exit(1)
}
await import(bundle.href)
