// Writes src/admin-app/routes.generated.ts, the admin screens' route table, from HostApi
// (scripts/admin-routes.ts compiled for this script). scripts/build.mjs runs it before the admin bundle;
// the file is committed too, so the type check and a lone `node scripts/build-admin.mjs` find it.
import { readFileSync, writeFileSync } from "node:fs"
import { build } from "esbuild"
import { cliBundleOptions } from "./cli-bundle.mjs"

export const generateAdminRoutes = async () => {
  await build({
    entryPoints: ["scripts/admin-routes.ts"],
    outfile: "dist/build/admin-routes.mjs",
    bundle: true,
    platform: "node",
    format: "esm",
    packages: "external",
    conditions: cliBundleOptions.conditions,
    logLevel: "warning"
  })
  const { adminRoutesFile, renderAdminRoutes } = await import(new URL("../dist/build/admin-routes.mjs", import.meta.url).href + `?t=${Date.now()}`)
  const text = renderAdminRoutes()
  let current
  try {
    current = readFileSync(adminRoutesFile, "utf8")
  } catch {
    current = undefined
  }
  // Written only when it changed, so a build does not touch a file the working tree already has right.
  if (current !== text) writeFileSync(adminRoutesFile, text)
}

if (import.meta.url === `file://${process.argv[1]}`) await generateAdminRoutes()
