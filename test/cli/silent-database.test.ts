import { createServer, type Server, type Socket } from "node:net"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runHost, tempDirsPerTest } from "../support/cli.js"

// A database server that accepts the connection and then says nothing (a cut during the handshake, a
// firewall that drops the replies): the command fails with the connect timeout naming the database, and the
// process exits instead of waiting on the driver's abandoned socket (docs/decisions.md "A finished command
// exits"). Before, `host` printed the error and then hung until killed.

const temp = tempDirsPerTest()
let silent: Server
let url: string
const sockets = new Set<Socket>()

beforeAll(async () => {
  silent = createServer((socket) => {
    sockets.add(socket)
    socket.on("data", () => undefined)
  })
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))
  url = `127.0.0.1:${(silent.address() as AddressInfo).port}`
})

afterAll(async () => {
  for (const socket of sockets) socket.destroy()
  await new Promise((resolve) => silent.close(resolve))
})

describe("a database server that goes silent", () => {
  it.each([["mysql", "mysql://root@"], ["postgres", "postgres://postgres@"]])("%s: the command fails naming the database, and exits", async (_, prefix) => {
    const root = temp("host-silent-")
    const run = await runHost(["--root", root, "list"], { env: { HOST_DATABASE_URL: `${prefix}${url}/host` } })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(`error: list: database: connecting to ${prefix}${url}/host failed`)
  }, 30_000)
})
