import { describe, expect, it } from "vitest"
import { addFrontendError, keptErrors } from "../../src/domain/FrontendErrors.js"
import { extensionPageOf, holdsPermission, matchPath, pageBase, whenHolds } from "../../src/bridge/match.js"
import { getHostApi } from "@host/sdk"

// The pure rules under the bridge and the diagnostics store: route patterns, extension-page paths,
// permission and `when` gating, and how reported errors are kept.

const alice = { id: 2, username: "alice", email: "", admin: false }
const admin = { ...alice, admin: true }
const server = (permissions: ReadonlyArray<string>, isOwner = false) => ({ uuid: "s1", name: "S", permissions, isOwner })

describe("route patterns", () => {
  it("matches params and a trailing *, and nothing else", () => {
    expect(matchPath("/", "/")).toEqual({})
    expect(matchPath("/files/:name", "/files/a%20b.txt")).toEqual({ name: "a b.txt" })
    expect(matchPath("/files/:name", "/files")).toBeUndefined()
    expect(matchPath("/files/:name", "/files/a/b")).toBeUndefined()
    expect(matchPath("/docs/*", "/docs/a/b")).toEqual({ "*": "a/b" })
    expect(matchPath("/stats", "/stats/")).toEqual({})
  })

  it("finds the extension page a panel path points at", () => {
    expect(extensionPageOf("/server/u1/ext/acme/full")).toEqual({ area: "server", extensionId: "acme/full", rest: "/" })
    expect(extensionPageOf("/server/u1/ext/acme/full/a/b")).toEqual({ area: "server", extensionId: "acme/full", rest: "/a/b" })
    expect(extensionPageOf("/account/ext/acme/full/keys")).toEqual({ area: "account", extensionId: "acme/full", rest: "/keys" })
    expect(extensionPageOf("/ext/acme/full")).toEqual({ area: "dashboard", extensionId: "acme/full", rest: "/" })
    expect(extensionPageOf("/server/u1/files")).toBeUndefined()
    expect(pageBase("server", "acme/full", undefined)).toBeUndefined()
    expect(pageBase("account", "acme/full", "u1")).toBe("/account/ext/acme/full")
  })
})

describe("gating", () => {
  it("permission: admins, owners, * and the permission itself", () => {
    expect(holdsPermission("full.manage", admin, null)).toBe(true)
    expect(holdsPermission("full.manage", alice, server([], true))).toBe(true)
    expect(holdsPermission("full.manage", alice, server(["*"]))).toBe(true)
    expect(holdsPermission("full.manage", alice, server(["full.manage"]))).toBe(true)
    expect(holdsPermission("full.manage", alice, server(["full.view"]))).toBe(false)
    expect(holdsPermission("full.manage", alice, null)).toBe(false)
    expect(holdsPermission("full.manage", null, null)).toBe(false)
  })

  it("when: every condition must hold; booleans and pathStartsWith like Notur's", () => {
    const at = (area: "server" | "dashboard" | "account", path: string) => ({ area, path })
    expect(whenHolds(undefined, at("server", "/server/s1"), alice, null)).toBe(true)
    expect(whenHolds({ area: ["server", "account"] }, at("account", "/account"), alice, null)).toBe(true)
    expect(whenHolds({ area: "server" }, at("dashboard", "/"), alice, null)).toBe(false)
    expect(whenHolds({ server: true }, at("dashboard", "/"), alice, null)).toBe(false)
    expect(whenHolds({ server: true, dashboard: true }, at("dashboard", "/"), alice, null)).toBe(true)
    expect(whenHolds({ dashboard: false }, at("dashboard", "/"), alice, null)).toBe(false)
    expect(whenHolds({ path: "/server/:id/files" }, at("server", "/server/s1/files"), alice, null)).toBe(true)
    expect(whenHolds({ path: /files$/ }, at("server", "/server/s1/files"), alice, null)).toBe(true)
    expect(whenHolds({ pathStartsWith: ["/account", "/server/s1/f"] }, at("server", "/server/s1/files"), alice, null)).toBe(true)
    expect(whenHolds({ pathStartsWith: "/account" }, at("server", "/server/s1/files"), alice, null)).toBe(false)
    expect(whenHolds({ area: "server", permission: "x.y" }, at("server", "/server/s1"), alice, server(["x.y"]))).toBe(true)
    expect(whenHolds({ area: "server", permission: ["x.y", "x.z"] }, at("server", "/server/s1"), alice, server(["x.y"]))).toBe(false)
  })
})

describe("kept frontend errors", () => {
  const at = (n: number) => ({ version: "1.0.0", user: "alice", at: `2026-01-01T00:00:${String(n).padStart(2, "0")}Z` })

  it("puts the newest first, counts a repeated message, and keeps the newest few", () => {
    let list = addFrontendError([], { extensionId: "a/b", message: "one" }, at(1))
    list = addFrontendError(list, { extensionId: "a/b", message: "two", slot: "navbar" }, at(2))
    list = addFrontendError(list, { extensionId: "a/b", message: "one" }, at(3))
    expect(list.map((e) => [e.message, e.count, e.firstAt, e.lastAt])).toEqual([
      ["one", 2, at(1).at, at(3).at],
      ["two", 1, at(2).at, at(2).at]
    ])
    // Another version of the same message is its own entry.
    list = addFrontendError(list, { extensionId: "a/b", message: "one" }, { ...at(4), version: "1.1.0" })
    expect(list.length).toBe(3)
    for (let index = 0; index < 20; index++) list = addFrontendError(list, { extensionId: "a/b", message: `m${index}` }, at(5))
    expect(list.length).toBe(keptErrors)
    expect(list[0]!.message).toBe("m19")
  })

  it("clips what it keeps", () => {
    const [entry] = addFrontendError([], { extensionId: "a/b", message: "x".repeat(5000), stack: "s".repeat(10_000) }, at(1))
    expect(entry!.message.length).toBeLessThanOrEqual(1001)
    expect(entry!.stack!.length).toBeLessThanOrEqual(4001)
  })
})

describe("@host/sdk outside a panel page", () => {
  it("getHostApi throws a clear error when the bridge is absent", () => {
    expect(() => getHostApi()).toThrow("window.__HOST__ is missing")
  })
})
