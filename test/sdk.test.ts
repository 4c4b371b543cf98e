import { Either } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { parse } from "yaml"
import { describe, expect, it } from "vitest"
import {
  defineRoutes,
  extensionContextKey,
  hasCommands,
  hasHealthChecks,
  hasRoutes,
  HostExtension,
  isExtension
} from "@host/sdk/server"
import { decodeDesiredState } from "../src/domain/DesiredState.js"
import { fixture, repoRoot } from "./support/cli.js"

class Probe extends HostExtension {
  getRouteFiles() {
    return { web: "src/routes/web.ts" }
  }
}

describe("@host/sdk/server", () => {
  it("HostExtension reads id, name and version from the manifest found by walking up", () => {
    const extension = new Probe({ modulePath: fixture("extensions", "full", "src", "FullExtension.ts") })
    expect(extension.getBasePath()).toBe(fixture("extensions", "full"))
    expect([extension.getId(), extension.getName(), extension.getVersion()]).toEqual(["acme/full", "Full Example", "1.2.0"])
  })

  it("accepts a file: URL as module path, and reports when no manifest is above it", () => {
    const url = new URL(`file://${fixture("extensions", "hello-world", "resources", "x.js")}`).href
    expect(new Probe({ modulePath: url }).getId()).toBe("acme/hello-world")
    expect(() => new Probe({ basePath: "/" }).getId()).toThrow("no extension.yaml found above /")
  })

  it("never guesses the base path from the current folder; the runtime hands the context over after new", () => {
    class OwnConstructor extends HostExtension {
      readonly started = true
      constructor() {
        super()
      }
    }
    const extension = new OwnConstructor()
    expect(() => extension.getId()).toThrow("HostExtension: no base path; pass the constructor's context on")
    extension[extensionContextKey]({ basePath: fixture("extensions", "hello-world") })
    expect(extension.getId()).toBe("acme/hello-world")
  })

  it("detects contracts structurally", () => {
    const extension = new Probe({ basePath: fixture("extensions", "full") })
    expect(isExtension(extension)).toBe(true)
    expect(hasRoutes(extension)).toBe(true)
    expect(hasCommands(extension)).toBe(false)
    expect(hasHealthChecks({ getHealthChecks: () => [] })).toBe(true)
    expect(isExtension({ getId: () => "x" })).toBe(false)
  })

  it("defineRoutes collects routes with their options", () => {
    const handler = () => ({ ok: true })
    const file = defineRoutes((r) => {
      r.get("/stats", handler, { permission: "a.view" })
      r.post("/things", handler)
      r.delete("/things/{id}", handler)
    })
    expect(file.routes.map((route) => [route.method, route.path, route.options])).toEqual([
      ["GET", "/stats", { permission: "a.view" }],
      ["POST", "/things", {}],
      ["DELETE", "/things/{id}", {}]
    ])
  })
})

describe("desired-state/extensions.yaml", () => {
  it("is a valid desired-state file naming the demo extensions", () => {
    const raw = parse(readFileSync(join(repoRoot, "desired-state", "extensions.yaml"), "utf8")) as unknown
    const decoded = decodeDesiredState(raw)
    expect(Either.isRight(decoded)).toBe(true)
    if (Either.isRight(decoded)) expect(decoded.right.extensions.map((e) => e.id)).toEqual(["acme/full", "acme/hello-world"])
  })
})
