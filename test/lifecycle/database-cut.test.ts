import { spawn } from "node:child_process"
import net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixture, hostBin, tempDir } from "../support/cli.js"
import { makeDatabase } from "../support/databases.js"

// A database connection cut during `host add` (docs/decisions.md "Database cuts"): a TCP proxy on
// 127.0.0.1:0 in front of the server drops the connection at the k-th thing the client sends, for every k
// from the first byte until the add no longer reaches the cut: connecting, creating the framework tables,
// the lock, the add's checks and its transaction. Every failure is one typed line naming the database and
// what was left as it was — never "unexpected failure" — and nothing is half-installed.

const servers = [
  { dialect: "mysql", url: process.env.HOST_TEST_MYSQL_URL ?? "", defaultPort: 3306 },
  { dialect: "pg", url: process.env.HOST_TEST_PG_URL ?? "", defaultPort: 5432 }
] as const

/** More cut points than an add sends on either server: reaching it means the loop never ended. */
const cutLimit = 120

describe.concurrent.each(servers)("a database cut during host add [$dialect]", ({ defaultPort, dialect, url: serverUrl }) => {
  if (serverUrl === "") {
    it.skip(`needs ${dialect === "mysql" ? "HOST_TEST_MYSQL_URL" : "HOST_TEST_PG_URL"}`, () => {})
    return
  }
  let proxy: net.Server
  let port = 0
  let chunks = 0
  let cutAt = Number.POSITIVE_INFINITY
  const upstream = new URL(serverUrl)

  beforeAll(async () => {
    proxy = net.createServer((client) => {
      const server = net.connect(Number(upstream.port || defaultPort), upstream.hostname)
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

  it("every cut, from connecting to committing, names the database and what was left as it was", async () => {
    const seen: Array<string> = []
    let reachedEnd = false
    for (let k = 1; k <= cutLimit && !reachedEnd; k++) {
      const { database, drop } = await makeDatabase(dialect)
      const root = tempDir("host-cut-")
      try {
        const url = database.url(root.path).replace(/@[^/]+\//, `@127.0.0.1:${port}/`)
        cutAt = Number.POSITIVE_INFINITY
        expect((await host(root.path, url, "list")).code).toBe(0)
        chunks = 0
        cutAt = k
        const run = await host(root.path, url, "add", fixture("extensions", "hello-world"))
        // The add sent fewer than k things: every cut point before it has been tried.
        reachedEnd = chunks < k
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
        expect(errors[0], `cut at ${k}`).toMatch(
          /^error: add(:| .* failed while [a-z][^:]*:) database( [a-z]+:\/\/[^ ]+:|: connecting to [a-z]+:\/\/[^ ]+) .*; (nothing was changed|no extension was changed; the framework tables are completed on the next run)$/
        )
        expect(installed, `cut at ${k}`).toEqual([])
      } finally {
        root.cleanup()
        await drop()
      }
    }
    expect(reachedEnd, `an add sends fewer than ${cutLimit} things`).toBe(true)
    // Cuts fell in each stage: opening the database, the lock, and the transaction (once an "unexpected failure").
    expect(seen.some((line) => line.includes(": connecting to "))).toBe(true)
    expect(seen.some((line) => line.includes("lock failed"))).toBe(true)
    expect(seen.some((line) => line.includes("failed while recording"))).toBe(true)
    // About forty cut points, each a fresh database and two commands: more than the default minute on a busy machine.
  }, 300_000)
})
