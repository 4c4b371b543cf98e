import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { decodeManifest } from "../../src/domain/Manifest.js"
import { pelicanKeyClashes, pelicanPermissionGroup, pelicanPermissionName } from "../../src/domain/PelicanPermissions.js"
import { bundleRoutes } from "../../src/domain/Slots.js"
import { fixture } from "../support/cli.js"

// Pelican splits a subuser permission on its first dot and uses the group as a form field name, where a dot
// means a nested path (docs/panels.md "Extension permissions"): Host's names have exactly one dot.

describe("Pelican permission names", () => {
  it("have exactly one dot, one dotless group per extension, and a key Pelican's form can label", () => {
    expect(pelicanPermissionName("acme/full", "full.view")).toBe("host_acme_full.full-view")
    expect(pelicanPermissionName("acme-corp/probe-kit", "probe.view")).toBe("host_acme-corp_probe-kit.probe-view")
    for (const [id, permission] of [["acme/full", "full.view"], ["a-b/c", "x_y.z-w"], ["a/b-c", "a.b"]] as const) {
      const name = pelicanPermissionName(id, permission)
      expect(name.split(".")).toHaveLength(2)
      expect(name.split(".", 1)[0]).toBe(pelicanPermissionGroup(id))
    }
    // Ids never hold "_", so "_" between vendor and name keeps two extensions' groups apart.
    expect(pelicanPermissionGroup("a-b/c")).not.toBe(pelicanPermissionGroup("a/b-c"))
  })

  it("refuses, in the manifest, two permissions Pelican would see as one", () => {
    expect(pelicanKeyClashes(["a-b.c", "a.b-c", "x.y"])).toEqual([["a-b.c", "a.b-c"]])
    const result = decodeManifest({
      host: "1.0",
      id: "acme/clash",
      name: "Clash",
      version: "1.0.0",
      description: "Two permissions that clash on Pelican",
      license: "MIT",
      backend: { permissions: ["a-b.c", "a.b-c"] }
    })
    expect(result.errors.map((problem) => problem.message).join("\n")).toContain(
      `permissions "a-b.c" and "a.b-c" are one permission on Pelican (a-b-c): rename one`
    )
  })
})

describe("bundleRoutes", () => {
  it("reads each page a built bundle registers, with its name, permission and hidden flag", () => {
    const bundle = readFileSync(fixture("extensions", "full", "resources", "frontend", "dist", "extension.js"), "utf8")
    expect(bundleRoutes(bundle)).toEqual([
      { area: "server", path: "/", name: "Full Example", permission: null, hidden: false },
      { area: "server", path: "/:section", name: "Full Example", permission: null, hidden: true }
    ])
  })

  it("reads fields in any order and ignores what nested objects say", () => {
    const text = `x({routes:[{path:"/a",area:"account",component:()=>{return {name:"inner",hidden:!0}},name:'Outer',permission:"a.view"},{area:"dashboard",component:y}]})`
    expect(bundleRoutes(text)).toEqual([{ area: "account", path: "/a", name: "Outer", permission: "a.view", hidden: false }])
  })
})
