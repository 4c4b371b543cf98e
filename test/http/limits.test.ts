import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixture, runHost, tempDir } from "../support/cli.js"
import { install, request, type RunningServer, startServer, tokens, waitFor, writePanelConfig } from "./helpers.js"

// Malformed and oversized requests each get their 4xx error body (docs/operations.md "Limits",
// docs/http.md "Errors"), uploads leave nothing behind, and the admin API answers a wrong method
// with 405 and Allow. Every case here answered a 500, a connection reset, the wrong refusal or a
// 404 before the fixes.

const root = tempDir("host-limits-")
const work = tempDir("host-limits-work-")
let server: RunningServer
let archive: string

const archiveLimit = 256 * 1024

beforeAll(async () => {
  writePanelConfig(root.path)
  writeFileSync(join(root.path, "config", "host.yaml"), `limits:\n  archive_bytes: ${archiveLimit}\n`)
  await install(root.path, fixture("extensions", "hello-world"))
  const exported = await runHost(["--root", root.path, "export", fixture("runtime", "probe"), "--output", `${work.path}/`, "--json"])
  archive = (JSON.parse(exported.stdout) as { archive: string }).archive
  server = await startServer(root.path)
})

afterAll(async () => {
  await server?.stop()
  root.cleanup()
  work.cleanup()
})

const api = (path: string) => `${server.url}/admin/host/api${path}`
const uploads = () => join(root.path, "storage", "host", "uploads")
const uploadFolders = () => (existsSync(uploads()) ? readdirSync(uploads()) : [])

/** A raw request over node:http, so headers and framing are exactly what the test says. */
const raw = (
  path: string,
  options: { readonly method?: string; readonly headers?: Record<string, string>; readonly chunks?: ReadonlyArray<Buffer> }
) =>
  new Promise<{ status: number; headers: Record<string, string | Array<string> | undefined>; body: string }>((resolve, reject) => {
    const url = new URL(server.url)
    const call = httpRequest(
      { host: url.hostname, port: url.port, path, method: options.method ?? "POST", headers: options.headers, agent: false },
      (answer) => {
        let body = ""
        answer.on("data", (chunk: Buffer) => (body += chunk.toString()))
        answer.on("end", () => resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body }))
      }
    )
    call.on("error", reject)
    for (const chunk of options.chunks ?? []) call.write(chunk)
    call.end()
  })

const multipart = (boundary: string, filename: string, content: Buffer, fields: Record<string, string> = {}) =>
  Buffer.concat([
    ...Object.entries(fields).map(([name, value]) =>
      Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
    ),
    Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="archive"; filename="${filename}"\r\ncontent-type: application/octet-stream\r\n\r\n`),
    content,
    Buffer.from(`\r\n--${boundary}--\r\n`)
  ])

describe("request limits", () => {
  it("a body over 1 MiB is a 413 with its error body, not a connection reset", async () => {
    const answer = await raw("/host/acme/hello-world/anything", {
      headers: { "content-type": "text/plain", "content-length": String(1024 * 1024 + 100) },
      chunks: [Buffer.alloc(1024 * 1024 + 100, 120)]
    })
    expect(answer.status).toBe(413)
    expect(JSON.parse(answer.body)).toEqual({
      errors: [{ code: "PayloadTooLarge", status: "413", detail: "the request body is 1.0 MiB; the limit is 1.0 MiB" }]
    })
  })

  it("an upload over limits.archive_bytes gets the archive-size refusal, declared or streamed", async () => {
    const big = Buffer.alloc(archiveLimit * 8, 7)
    const body = multipart("b0undary", "big.host", big)
    const declared = await raw("/admin/host/api/extensions", {
      headers: { authorization: `Bearer ${tokens.admin}`, "content-type": "multipart/form-data; boundary=b0undary", "content-length": String(body.length) },
      chunks: [body]
    })
    expect(declared.status).toBe(413)
    expect(JSON.parse(declared.body).errors[0]).toMatchObject({ code: "SourceRejected", detail: expect.stringContaining("(archive-too-large)") })

    // Chunked: no length to judge by, so the size is found while the upload is written.
    const streamed = await raw("/admin/host/api/extensions", {
      headers: { authorization: `Bearer ${tokens.admin}`, "content-type": "multipart/form-data; boundary=b0undary", "transfer-encoding": "chunked" },
      chunks: [body.subarray(0, 1000), body.subarray(1000)]
    })
    expect(streamed.status, streamed.body).toBe(413)
    expect(JSON.parse(streamed.body).errors[0]).toMatchObject({ code: "SourceRejected", detail: expect.stringContaining("(archive-too-large)") })
    expect(uploadFolders()).toEqual([])
  })

  it("multipart without a boundary and an over-long file name are 400s that leave no upload folder", async () => {
    const noBoundary = await raw("/admin/host/api/extensions", {
      headers: { authorization: `Bearer ${tokens.admin}`, "content-type": "multipart/form-data" },
      chunks: [Buffer.from("--x\r\n\r\n")]
    })
    expect(noBoundary.status).toBe(400)
    expect(JSON.parse(noBoundary.body).errors[0]).toMatchObject({ status: "400", detail: expect.stringContaining("boundary") })

    const longName = `${"a".repeat(300)}.host`
    const body = multipart("xyz", longName, readFileSync(archive))
    const named = await raw("/admin/host/api/extensions", {
      headers: { authorization: `Bearer ${tokens.admin}`, "content-type": "multipart/form-data; boundary=xyz", "content-length": String(body.length) },
      chunks: [body]
    })
    expect(named.status).toBe(400)
    expect(JSON.parse(named.body).errors[0]).toMatchObject({ status: "400", detail: expect.stringContaining("305 bytes long; the limit is 255") })
    expect(uploadFolders()).toEqual([])
  })

  it("a session's upload may carry its CSRF token as the form field _token", async () => {
    const login = await fetch(`${server.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", token: tokens.admin })
    })
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!
    const csrf = ((await login.json()) as { data: { csrfToken: string } }).data.csrfToken
    const body = (fields: Record<string, string>) => multipart("tok", "acme-probe-1.0.0.host", readFileSync(archive), fields)
    const send = (fields: Record<string, string>) => {
      const content = body(fields)
      return raw("/admin/host/api/extensions/preview", {
        headers: { cookie, "content-type": "multipart/form-data; boundary=tok", "content-length": String(content.length) },
        chunks: [content]
      })
    }
    const without = await send({})
    expect(without.status).toBe(403)
    expect(JSON.parse(without.body).errors[0]).toMatchObject({ code: "CsrfTokenMismatch" })
    const wrong = await send({ _token: "nope" })
    expect(wrong.status).toBe(403)
    const withToken = await send({ _token: csrf })
    expect(withToken.status, withToken.body).toBe(200)
    expect(JSON.parse(withToken.body).data).toMatchObject({ id: "acme/probe", installable: true })
    expect(uploadFolders()).toEqual([])
  })

  it("a wrong method on an admin API path is 405 with Allow; an unknown path stays 404", async () => {
    const answer = await request(api("/extensions"), { as: "admin", method: "DELETE" })
    expect(answer.status).toBe(405)
    expect(answer.headers.get("allow")).toBe("GET, HEAD, POST")
    expect(answer.json).toMatchObject({ errors: [{ code: "MethodNotAllowed", status: "405" }] })
    const activity = await request(api("/activity"), { as: "admin", method: "POST", body: {} })
    expect(activity.status).toBe(405)
    expect(activity.headers.get("allow")).toBe("GET, HEAD")
    expect((await request(api("/nothing/here"), { as: "admin" })).status).toBe(404)
  })
})

describe("the base URL", () => {
  it("is base_url when configured (HOST_BASE_URL), else the listen address", async () => {
    const configured = await startServer(root.path, { env: { HOST_BASE_URL: "https://panel.example.test" } })
    try {
      const answer = await request(`${configured.url}/api/client/host/config`, { as: "dave" })
      expect((answer.json as { data: { baseUrl: string } }).data.baseUrl).toBe("https://panel.example.test")
    } finally {
      await configured.stop()
    }
    const listening = await request(`${server.url}/api/client/host/config`, { as: "dave" })
    expect((listening.json as { data: { baseUrl: string } }).data.baseUrl).toBe(server.url)
  })
})

describe("uploads cut short", () => {
  it("a server killed mid-upload leaves a folder that status reports and the next command removes", async () => {
    const panel = tempDir("host-limits-kill-")
    try {
      writePanelConfig(panel.path)
      const victim = await startServer(panel.path)
      const folder = join(panel.path, "storage", "host", "uploads")
      const url = new URL(victim.url)
      const content = readFileSync(archive)
      const head = multipart("kill", "acme-probe-1.0.0.host", content).subarray(0, 200 + content.length / 2)
      // Half the body is sent and the request kept open: the server is now writing the upload.
      const call = httpRequest({
        host: url.hostname,
        port: url.port,
        path: "/admin/host/api/extensions",
        method: "POST",
        headers: { authorization: `Bearer ${tokens.admin}`, "content-type": "multipart/form-data; boundary=kill", "content-length": String(content.length * 2) }
      })
      call.on("error", () => undefined)
      call.write(head)
      const written = () =>
        existsSync(folder) && readdirSync(folder).some((name) => readdirSync(join(folder, name)).some((file) => statSync(join(folder, name, file)).size > 0))
      await waitFor(async () => written(), 10_000)
      victim.process.kill("SIGKILL")
      await new Promise((resolve) => victim.process.once("exit", resolve))
      call.destroy()
      const [left] = readdirSync(folder)
      expect(left).toMatch(new RegExp(`^${victim.process.pid}-`))

      const status = await runHost(["--root", panel.path, "status", "--json"])
      expect(status.code).toBe(0)
      const report = JSON.parse(status.stdout) as { leftovers: { uploads: Array<{ path: string; bytes: number }>; staging: Array<unknown> } }
      expect(report.leftovers.uploads).toEqual([{ path: `storage/host/uploads/${left}`, bytes: expect.any(Number) }])
      expect(report.leftovers.uploads[0]!.bytes).toBeGreaterThan(0)
      const text = await runHost(["--root", panel.path, "status"])
      expect(text.stdout).toMatch(new RegExp(`Leftovers: +storage/host/uploads/${left} \\(.+\\); the next host command removes them`))
      // status only reports; any other command's recovery removes them.
      expect(readdirSync(folder)).toEqual([left])
      expect((await runHost(["--root", panel.path, "list"])).code).toBe(0)
      expect(readdirSync(folder)).toEqual([])
      const after = JSON.parse((await runHost(["--root", panel.path, "status", "--json"])).stdout) as { leftovers: unknown }
      expect(after.leftovers).toEqual({ uploads: [], staging: [] })
    } finally {
      panel.cleanup()
    }
  })

  it("staging entries no journal names are reported and removed the same way", async () => {
    const panel = tempDir("host-limits-staging-")
    try {
      expect((await runHost(["--root", panel.path, "list"])).code).toBe(0)
      const staging = join(panel.path, "storage", "host", "staging", "op-gone.acme-x")
      mkdirSync(staging, { recursive: true })
      writeFileSync(join(staging, "extension.yaml"), "id: acme/x\n")
      const report = JSON.parse((await runHost(["--root", panel.path, "status", "--json"])).stdout) as { leftovers: { staging: unknown } }
      expect(report.leftovers.staging).toEqual([{ path: "storage/host/staging/op-gone.acme-x", bytes: 11 }])
      expect((await runHost(["--root", panel.path, "list"])).code).toBe(0)
      expect(existsSync(staging)).toBe(false)
    } finally {
      panel.cleanup()
    }
  })
})
