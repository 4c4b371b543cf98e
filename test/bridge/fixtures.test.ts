import { NodeContext } from "@effect/platform-node"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { frontendBuildOptions, resolveFrontendTarget } from "../../src/archive/ExtensionFrontend.js"
import { fixture } from "../support/cli.js"

// The fixtures' committed bundles are what their TSX sources build to through `host build`'s code path
// (src/archive/ExtensionFrontend.ts over FrontendBuild's shared settings): rebuilt in memory here and
// compared byte for byte, so an edited source without a rebuilt bundle (or the reverse) fails.

const freshBuild = async (folder: string) => {
  const target = await Effect.runPromise(resolveFrontendTarget(folder).pipe(Effect.provide(NodeContext.layer)))
  const { build } = await import("esbuild")
  const result = await build(frontendBuildOptions(target, { write: false }))
  return { target, files: result.outputFiles ?? [] }
}

describe("fixture frontends", () => {
  for (const name of ["hello-world", "full"]) {
    it(`${name}: the committed bundle equals a fresh build of resources/frontend/src`, async () => {
      const folder = fixture("extensions", name)
      const { files, target } = await freshBuild(folder)
      expect(target.entry).toBe("resources/frontend/src/index.tsx")
      expect(files.length).toBeGreaterThanOrEqual(2)
      for (const file of files) {
        const path = relative(folder, file.path)
        expect(readFileSync(join(folder, path), "utf8"), `${name}/${path} is stale: run host build ${folder}`).toBe(file.text)
      }
      const bundle = files.find((file) => file.path.endsWith("extension.js"))!.text
      // React and the SDK come from the page, never from the bundle.
      expect(bundle).toContain("window.ReactJSXRuntime")
      expect(bundle).toContain("window.__HOST__")
      expect(bundle).not.toContain("react.production")
      expect(bundle).not.toContain("useSyncExternalStore")
    })
  }

  it("full ships its isolated stylesheet beside the bundle", async () => {
    const { files } = await freshBuild(fixture("extensions", "full"))
    const css = files.find((file) => file.path.endsWith("extension.css"))
    expect(css?.text).toContain(".host-ext--acme-full .card")
  })
})
