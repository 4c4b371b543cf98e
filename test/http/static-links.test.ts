import { mkdirSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixture, tempDir } from "../support/cli.js"
import { install, request, type RunningServer, startServer, writePanelConfig } from "./helpers.js"

// Finding 5 of issue 16: static files are served only when their real path is inside the extension.

const root = tempDir("host-static-links-")
let server: RunningServer
const dist = () => join(root.path, "host", "extensions", "acme", "probe", "resources", "frontend", "dist")

beforeAll(async () => {
  writePanelConfig(root.path)
  await install(root.path, fixture("runtime", "probe"))
  mkdirSync(join(root.path, "storage", "host"), { recursive: true })
  writeFileSync(join(root.path, "config", "secret.txt"), "config secret\n")
  symlinkSync("/etc/passwd", join(dist(), "p.txt"))
  symlinkSync(join(root.path, "config"), join(dist(), "config"))
  symlinkSync(join(root.path, "storage", "host", "session.key"), join(dist(), "key.txt"))
  symlinkSync("extension.css", join(dist(), "inside.css"))
  server = await startServer(root.path)
})

afterAll(async () => {
  await server?.stop()
  root.cleanup()
})

describe("static files and links", () => {
  it.each(["p.txt", "config/secret.txt", "key.txt"])("a link out of the extension (%s) is a 404", async (file) => {
    const answer = await request(`${server.url}/host/ext/acme/probe/resources/frontend/dist/${file}`)
    expect(answer.status).toBe(404)
    expect(answer.text).not.toContain("root:")
    expect(answer.text).not.toContain("config secret")
  })

  it("a link to a file inside the extension is served, as is a regular file", async () => {
    expect((await request(`${server.url}/host/ext/acme/probe/resources/frontend/dist/inside.css`)).status).toBe(200)
    expect((await request(`${server.url}/host/ext/acme/probe/resources/frontend/dist/extension.css`)).status).toBe(200)
  })
})
