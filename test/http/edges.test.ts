import { randomBytes } from "node:crypto"
import { request as httpRequest } from "node:http"
import { connect, type Socket } from "node:net"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixture, tempDir } from "../support/cli.js"
import { writePanelRoot } from "../support/panel-root.js"
import { machines, type PanelStandIn, people, startPanelStandIn } from "../support/pterodactyl-api.js"
import { until } from "../support/wait.js"
import { install, type RunningServer, startServer, tokens, writePanelConfig } from "./helpers.js"

// The edges of `host serve` (DESIGN §24, docs/http.md "Limits"), over real sockets against real servers:
// the panel is not an amplifier (lookups of unseen credentials limited per address, 429 + Retry-After),
// a 503 for a panel that is down says nothing internal, chunked bodies past the limit get 413, uploads are
// refused before their body is read and the connection closed, slow headers are cut off, and connections
// per address are capped. Before the fixes: 300 panel lookups, the panel's URL and socket error in the
// answer, a connection reset, a connection held for 30 s, Node's 60 s header timeout, no connection cap.

/** What a raw socket received until the server closed it (or `timeoutMs` passed: then `closed` is false). */
const exchange = (port: number, text: string, options: { readonly localAddress?: string; readonly timeoutMs?: number } = {}) =>
  new Promise<{ readonly data: string; readonly closed: boolean }>((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }) })
    let data = ""
    const timer = setTimeout(() => {
      socket.destroy()
      resolve({ data, closed: false })
    }, options.timeoutMs ?? 15_000)
    socket.on("data", (chunk: Buffer) => (data += chunk.toString()))
    socket.on("error", () => undefined)
    socket.on("close", () => {
      clearTimeout(timer)
      resolve({ data, closed: true })
    })
    socket.on("connect", () => socket.write(text))
    socket.on("error", (error) => (data === "" ? undefined : reject(error)))
  })

const statusOf = (raw: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0)
const bodyOf = (raw: string) => raw.slice(raw.indexOf("\r\n\r\n") + 4)

describe("the panel is not an amplifier; a panel that is down is not described", () => {
  let root: ReturnType<typeof tempDir>
  let standIn: PanelStandIn
  let server: RunningServer

  beforeAll(async () => {
    root = tempDir("host-edges-panel-")
    const panelRoot = writePanelRoot(join(root.path, "panel"), { version: "1.11.8" })
    await install(root.path, fixture("runtime", "probe"))
    standIn = await startPanelStandIn({ users: people, servers: machines })
    server = await startServer(root.path, { env: { HOST_PANEL_DRIVER: "pterodactyl", HOST_PANEL_URL: standIn.url, HOST_PANEL_ROOT: panelRoot } })
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await standIn?.close()
    root?.cleanup()
  })

  // From 127.0.0.1, a trusted proxy by default: `client` is the address it forwards (each its own limit).
  const open = (cookie: string, client = "198.51.100.1") =>
    fetch(`${server.url}/api/client/host/acme/probe/open`, { headers: { cookie: `pterodactyl_session=${cookie}`, "x-forwarded-for": client } })

  it("300 requests with random session cookies make at most panel.lookups_per_second (10) a second, plus a burst of 10; the rest are 429 with Retry-After; cached credentials pass", async () => {
    expect((await open("sess-alice")).status).toBe(200)
    const before = standIn.count("/api/client/account")
    const started = Date.now()
    const answers = await Promise.all(
      Array.from({ length: 300 }, async () => {
        const response = await open(randomBytes(16).toString("hex"))
        return { status: response.status, retryAfter: response.headers.get("retry-after"), body: await response.text() }
      })
    )
    const seconds = (Date.now() - started) / 1000
    const lookups = standIn.count("/api/client/account") - before
    // A token bucket of 10, refilled at 10 a second, over the time the burst took.
    expect(lookups).toBeLessThanOrEqual(10 + Math.ceil(seconds * 10))
    const limited = answers.filter((answer) => answer.status === 429)
    expect(answers.filter((answer) => answer.status === 401).length).toBe(lookups)
    expect(limited.length).toBe(300 - lookups)
    for (const answer of limited) {
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1)
      expect(JSON.parse(answer.body)).toEqual({
        errors: [{ code: "RateLimited", status: "429", detail: expect.stringContaining("(panel.lookups_per_second: 10)") }]
      })
    }
    // A credential the panel has answered for is cached, and not limited.
    for (let i = 0; i < 20; i++) expect((await open("sess-alice")).status).toBe(200)
  }, 60_000)

  it("a typed endpoint's lookups are limited the same way (its statement's check takes the server's limit)", async () => {
    // Another client than the burst above, so its bucket is full.
    const slots = (cookie: string) =>
      fetch(`${server.url}/api/client/host/slots`, { headers: { cookie: `pterodactyl_session=${cookie}`, "x-forwarded-for": "198.51.100.3" } })
    const before = standIn.count("/api/client/account")
    const started = Date.now()
    const statuses = await Promise.all(Array.from({ length: 60 }, async () => (await slots(randomBytes(16).toString("hex"))).status))
    const seconds = (Date.now() - started) / 1000
    const lookups = standIn.count("/api/client/account") - before
    expect(lookups).toBeLessThanOrEqual(10 + Math.ceil(seconds * 10))
    expect(statuses.filter((status) => status === 401).length).toBe(lookups)
    expect(statuses.filter((status) => status === 429).length).toBe(60 - lookups)
  }, 60_000)

  it("a panel that is down is a 503 saying only that; its URL and socket error go to the log", async () => {
    standIn.mode = "down"
    try {
      // Another client than the burst's, whose limit is spent.
      const response = await open(randomBytes(16).toString("hex"), "198.51.100.2")
      const text = await response.text()
      expect(response.status).toBe(503)
      expect(JSON.parse(text)).toEqual({ errors: [{ code: "PanelUnavailable", status: "503", detail: "the panel is unavailable; try again shortly" }] })
      expect(text).not.toContain(new URL(standIn.url).host)
      await until(async () => server.stderr().includes(standIn.url), "the log to name the panel's URL", 10_000)
    } finally {
      standIn.mode = "ok"
    }
  }, 30_000)
})

describe("bodies and connections", () => {
  const root = tempDir("host-edges-")
  const tight = tempDir("host-edges-connections-")
  let server: RunningServer
  let capped: RunningServer
  let port: number
  let cappedPort: number

  beforeAll(async () => {
    writePanelConfig(root.path)
    writeFileSync(join(root.path, "config", "host.yaml"), "server:\n  headers_timeout: 1\nlimits:\n  archive_bytes: 262144\n")
    await install(root.path, fixture("runtime", "probe"))
    server = await startServer(root.path)
    port = Number(new URL(server.url).port)
    writePanelConfig(tight.path)
    // 127.0.0.1 is a trusted proxy here; the capped clients connect from 127.0.0.2.
    writeFileSync(join(tight.path, "config", "host.yaml"), "server:\n  connections_per_address: 4\ntrusted_proxies: [127.0.0.1]\n")
    capped = await startServer(tight.path)
    cappedPort = Number(new URL(capped.url).port)
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await capped?.stop()
    root.cleanup()
    tight.cleanup()
  })

  const chunked = (path: string, chunks: ReadonlyArray<Buffer>) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const call = httpRequest(
        {
          host: "127.0.0.1",
          port,
          path,
          method: "POST",
          agent: false,
          headers: { authorization: `Bearer ${tokens.alice}`, "content-type": "application/json", "transfer-encoding": "chunked" }
        },
        (answer) => {
          let body = ""
          answer.on("data", (chunk: Buffer) => (body += chunk.toString()))
          answer.on("end", () => resolve({ status: answer.statusCode ?? 0, body }))
        }
      )
      call.on("error", reject)
      for (const chunk of chunks) call.write(chunk)
      call.end()
    })

  it("a chunked body past 1 MiB is a 413 with its error body like a declared one; a chunked body within it reaches the route", async () => {
    const big = await chunked("/api/client/host/acme/probe/echo", [Buffer.from('{"a":"'), Buffer.alloc(1024 * 1024, 120), Buffer.alloc(512 * 1024, 120), Buffer.from('"}')])
    expect(big.status).toBe(413)
    expect(JSON.parse(big.body)).toEqual({
      errors: [{ code: "PayloadTooLarge", status: "413", detail: "the request body is more than 1.0 MiB; the limit is 1.0 MiB" }]
    })
    const small = await chunked("/api/client/host/acme/probe/echo?x=1", [Buffer.from('{"a":'), Buffer.from("1}")])
    expect(small.status, small.body).toBe(200)
    expect(JSON.parse(small.body)).toEqual({ body: { a: 1 }, query: { x: "1" } })
  })

  const upload = (authorization: string | undefined) =>
    "POST /admin/host/api/extensions HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
    (authorization === undefined ? "" : `Authorization: ${authorization}\r\n`) +
    "Content-Type: multipart/form-data; boundary=x\r\nContent-Length: 60000000\r\n\r\n"

  it("an upload declaring 60 MB and sending nothing: 401 / 403 / 413 at once, and the connection closed", async () => {
    const anonymous = await exchange(port, upload(undefined))
    expect(anonymous.closed).toBe(true)
    expect(statusOf(anonymous.data)).toBe(401)
    const user = await exchange(port, upload(`Bearer ${tokens.alice}`))
    expect(user.closed).toBe(true)
    expect(statusOf(user.data)).toBe(403)
    // An administrator's upload is judged by its declared size, after authentication, without reading it.
    const admin = await exchange(port, upload(`Bearer ${tokens.admin}`))
    expect(admin.closed).toBe(true)
    expect(statusOf(admin.data)).toBe(413)
    expect(JSON.parse(bodyOf(admin.data)).errors[0]).toMatchObject({ code: "SourceRejected", detail: expect.stringContaining("(archive-too-large)") })
    // A client waiting for `100 Continue` is refused without it; an administrator's upload gets it.
    const waiting = (authorization: string | undefined) =>
      upload(authorization).replace("Content-Length: 60000000", "Content-Length: 1000\r\nExpect: 100-continue")
    const refused = await exchange(port, waiting(undefined))
    expect(refused.closed).toBe(true)
    expect(statusOf(refused.data)).toBe(401)
    const allowed = await exchange(port, waiting(`Bearer ${tokens.admin}`), { timeoutMs: 1_500 })
    expect(allowed.data.startsWith("HTTP/1.1 100 Continue\r\n")).toBe(true)
  }, 20_000)

  it("a reconcile declaring a body and sending none: 401 signed out and 403 for a user at once, its caller judged before its body", async () => {
    // The request's head goes out, its body never does: only an answer that does not wait for the body arrives.
    const statusWithoutBody = (path: string, authorization: string | undefined) =>
      new Promise<number>((resolve, reject) => {
        const call = httpRequest({
          host: "127.0.0.1",
          port,
          path,
          method: "POST",
          agent: false,
          headers: { ...(authorization === undefined ? {} : { authorization }), "content-type": "application/json", "content-length": "1000" }
        }, (answer) => {
          resolve(answer.statusCode ?? 0)
          call.destroy()
        })
        call.on("error", (error) => (call.destroyed ? undefined : reject(error)))
        call.flushHeaders()
      })
    for (const path of ["/admin/host/reconcile", "/admin/host/api/reconcile"]) {
      expect(await statusWithoutBody(path, undefined), path).toBe(401)
      expect(await statusWithoutBody(path, `Bearer ${tokens.alice}`), path).toBe(403)
    }
  })

  it("request headers must arrive within server.headers_timeout (here 1 s): 408 and the connection closed", async () => {
    const slow = await exchange(port, "GET /host/ready HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    expect(slow.closed).toBe(true)
    expect(statusOf(slow.data)).toBe(408)
  }, 20_000)

  it("at most server.connections_per_address open connections per address; the next is closed at once; a trusted proxy is not capped", async () => {
    const sockets: Array<Socket> = []
    const served = (socket: Socket) =>
      new Promise<string>((resolve) => {
        let data = ""
        socket.on("data", (chunk: Buffer) => {
          data += chunk.toString()
          if (data.includes("\r\n\r\n")) resolve(data)
        })
        socket.write("GET /host/ready HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
      })
    try {
      for (let i = 0; i < 4; i++) {
        const socket = connect({ host: "127.0.0.1", port: cappedPort, localAddress: "127.0.0.2" })
        socket.on("error", () => undefined)
        sockets.push(socket)
        expect(statusOf(await served(socket))).toBe(200)
      }
      const fifth = await exchange(cappedPort, "GET /host/ready HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", { localAddress: "127.0.0.2" })
      expect(fifth).toEqual({ data: "", closed: true })
      // The trusted proxy's address is not capped: six at once are served.
      const proxied = Array.from({ length: 6 }, () => connect({ host: "127.0.0.1", port: cappedPort }))
      sockets.push(...proxied)
      for (const socket of proxied) socket.on("error", () => undefined)
      for (const socket of proxied) expect(statusOf(await served(socket))).toBe(200)
      // One closed, one more is accepted (once the server has seen the close).
      sockets[0]!.destroy()
      await until(async () => statusOf((await exchange(cappedPort, "GET /host/ready HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", { localAddress: "127.0.0.2" })).data) === 200, "a fifth connection after one closed", 10_000)
    } finally {
      for (const socket of sockets) socket.destroy()
    }
  }, 30_000)
})
