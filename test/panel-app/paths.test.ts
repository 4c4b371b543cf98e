import { describe, expect, it } from "vitest"
import { makeDirectory } from "../../src/panel/Panel.js"
import { classifyPanelPath, serverView } from "../../src/panel/PanelView.js"

// Which paths are panel pages (the shell's status and `server`), and what the panel JSON says of a server.

describe("classifyPanelPath", () => {
  it("knows the pages of the three areas and their extension-page paths", () => {
    expect(classifyPanelPath("/")).toEqual({ kind: "page", area: "dashboard" })
    expect(classifyPanelPath("/ext/acme/full")).toEqual({ kind: "page", area: "dashboard", extension: "acme/full" })
    expect(classifyPanelPath("/ext/acme/full/stats/week")).toEqual({ kind: "page", area: "dashboard", extension: "acme/full" })
    for (const path of ["/account", "/account/", "/account/api", "/account/ssh"]) {
      expect(classifyPanelPath(path), path).toEqual({ kind: "page", area: "account" })
    }
    expect(classifyPanelPath("/account/ext/acme/full/profile")).toEqual({ kind: "page", area: "account", extension: "acme/full" })
    for (const page of ["", "/", "/files", "/files/edit/server.properties", "/files/edit/config/a%20b.yml", "/databases", "/schedules",
      "/schedules/7", "/users", "/backups", "/network", "/startup", "/settings"]) {
      expect(classifyPanelPath(`/server/abc-123${page}`), page).toEqual({ kind: "page", area: "server", serverUuid: "abc-123" })
    }
    for (const page of ["/ext/acme/full", "/ext/acme/full/players/steve"]) {
      expect(classifyPanelPath(`/server/abc-123${page}`), page).toEqual({ kind: "page", area: "server", serverUuid: "abc-123", extension: "acme/full" })
    }
  })

  it("calls everything else unknown", () => {
    for (const path of ["/nope", "/ext", "/ext/acme", "/account/nope", "/account/api/x", "/server", "/server/abc/nope",
      "/server/abc/files/x", "/server/abc/files/edit", "/server/abc/schedules/1/2", "/server/abc/ext/acme", "/server/%E0%A4%A"]) {
      expect(classifyPanelPath(path), path).toEqual({ kind: "unknown" })
    }
  })
})

describe("serverView", () => {
  const directory = makeDirectory({
    users: [
      { id: 1, username: "root", email: "", admin: true, permissions: [] },
      { id: 2, username: "owner", email: "o@x", admin: false, permissions: [] },
      { id: 3, username: "helper", email: "h@x", admin: false, permissions: [] },
      { id: 4, username: "manager", email: "m@x", admin: false, permissions: [] }
    ],
    servers: [{
      uuid: "s1",
      name: "One",
      owner: "owner",
      subusers: [{ user: "helper", permissions: ["file.read"] }, { user: "manager", permissions: ["user.read"] }]
    }]
  })
  const user = (name: string) => directory.userByName(name)!
  const view = (name: string) => serverView(directory, user(name), directory.serverAccess(user(name), "s1")!, true)

  it("tells the user's role and permissions", () => {
    expect(view("owner")).toMatchObject({ role: "owner", isOwner: true, permissions: ["*"], owner: { id: 2, username: "owner" } })
    expect(view("root")).toMatchObject({ role: "admin", isOwner: false, permissions: ["*"] })
    expect(view("helper")).toMatchObject({ role: "subuser", isOwner: false, permissions: ["file.read"] })
  })

  it("lists subusers only to who may manage them", () => {
    const expected = [
      { id: 3, username: "helper", email: "h@x", permissions: ["file.read"] },
      { id: 4, username: "manager", email: "m@x", permissions: ["user.read"] }
    ]
    expect(view("owner").subusers).toEqual(expected)
    expect(view("root").subusers).toEqual(expected)
    expect(view("manager").subusers).toEqual(expected)
    expect(view("helper").subusers).toBeUndefined()
    expect(serverView(directory, user("owner"), directory.serverAccess(user("owner"), "s1")!).subusers).toBeUndefined()
  })
})
