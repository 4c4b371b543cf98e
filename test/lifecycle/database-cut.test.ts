import { spawn } from "node:child_process"
import net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixture, hostBin, tempDir } from "../support/cli.js"
import { makeDatabase } from "../support/databases.js"

// A database connection cut in the middle of `host add` (docs/decisions.md "Database cuts"): a TCP proxy
// on 127.0.0.1:0 in front of MariaDB drops the connection at the k-th thing the client sends, for every k
// of an add's transaction. Every failure is one typed line naming the database, the step and "nothing was
// changed" — never "unexpected failure" — and nothing is half-installed.

const mysqlUrl = process.env.HOST_TEST_MYSQL_URL ?? ""

describe.skipIf(mysqlUrl === "")("a database cut during host add [mysql]", () => {
  let proxy: net.Server
  let port = 0
  let chunks = 0
  let cutAt = Number.POSITIVE_INFINITY
  const upstream = new URL(mysqlUrl)

  beforeAll(async () => {
    proxy = net.createServer((client) => {
      const server = net.connect(Number(upstream.port || 3306), upstream.hostname)
      client.on("data", (data) => {
        chunks++
        if (chunks === cutAt) {
          client.destroy()
          server.destroy()
          return
        }
        server.write(data)
      })
      server.on("data", (data) => client.write(data))
      for (const [a, b] of [[client, server], [server, client]] as const) {
        a.on("error", () => b.destroy())
        a.on("close", () => b.destroy())
      }
    })
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
    port = (proxy.address() as net.AddressInfo).port
  })

  afterAll(() => new Promise<void>((resolve) => proxy.close(() => resolve())))

  const host = (root: string, url: string, ...args: Array<string>) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [hostBin, "--root", root, ...args], { env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", HOST_DATABASE_URL: url } })
      let stderr = ""
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
      child.stdout.resume()
      child.on("close", (code) => resolve({ code, stderr }))
    })

  it("every cut inside the operation names the database, the step and what was changed", async () => {
    const seen: Array<string> = []
    // Past the framework tables and the lock (their own messages are tested elsewhere): the add's checks and transaction.
    for (let k = 16; k <= 32; k++) {
      const { database, drop } = await makeDatabase("mysql")
      const root = tempDir("host-cut-")
      try {
        const url = database.url(root.path).replace(/@[^/]+\//, `@127.0.0.1:${port}/`)
        cutAt = Number.POSITIVE_INFINITY
        expect((await host(root.path, url, "list")).code).toBe(0)
        chunks = 0
        cutAt = k
        const run = await host(root.path, url, "add", fixture("extensions", "hello-world"))
        cutAt = Number.POSITIVE_INFINITY
        const errors = run.stderr.split("\n").filter((line) => line.startsWith("error: "))
        const installed = await database.query<{ extension_id: string }>(root.path, "SELECT extension_id FROM host_extensions")
        if (run.code === 0) {
          expect(installed.map((row) => row.extension_id)).toEqual(["acme/hello-world"])
          continue
        }
        seen.push(errors[0] ?? "")
        expect(errors, `cut at ${k}: ${run.stderr}`).toHaveLength(1)
        expect(errors[0]).not.toContain("unexpected failure")
        expect(errors[0], `cut at ${k}`).toMatch(/^error: add .* failed while [a-z].*: database mysql:\/\/[^ ]+: .*; nothing was changed$/)
        expect(installed, `cut at ${k}`).toEqual([])
      } finally {
        root.cleanup()
        await drop()
      }
    }
    // The cuts fell inside the transaction too (the case that was an "unexpected failure").
    expect(seen.some((line) => line.includes("failed while recording"))).toBe(true)
  })
})
