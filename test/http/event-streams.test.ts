import { writeFileSync } from "node:fs"
import http from "node:http"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runHost, tempDir } from "../support/cli.js"
import { eventually } from "../support/wait.js"
import { type PanelUserName, type RunningServer, startServer, tokens, writePanelConfig } from "./helpers.js"

// Caps on `/api/client/host/events` (docs/http.md "Live updates: caps"): at most 8 streams per user (a
// ninth ends the oldest), at most `limits.event_streams` in all (503 past it), and the open count in
// `host status`.

interface OpenStream {
  readonly status: number
  readonly body: () => string
  readonly ended: Promise<void>
  readonly close: () => void
}

/** Opens a stream and resolves once it answered: its first `generation` event, or its error body. */
const openStream = (url: string, user: PanelUserName): Promise<OpenStream> =>
  new Promise((resolve, reject) => {
    const request = http.get(`${url}/api/client/host/events`, { headers: { authorization: `Bearer ${tokens[user]}` }, agent: false }, (response) => {
      let text = ""
      let resolved = false
      const ended = new Promise<void>((done) => response.on("end", done).on("close", done))
      const answer = () => {
        if (resolved) return
        resolved = true
        resolve({ status: response.statusCode ?? 0, body: () => text, ended, close: () => request.destroy() })
      }
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => {
        text += chunk
        if (response.statusCode !== 200 || text.includes("event: generation")) answer()
      })
      response.on("end", answer)
    })
    request.on("error", reject)
  })

let root: ReturnType<typeof tempDir>
let server: RunningServer
const opened: Array<OpenStream> = []

beforeAll(async () => {
  root = tempDir("host-root-")
  writePanelConfig(root.path)
  writeFileSync(join(root.path, "config", "host.yaml"), "limits: { event_streams: 10 }\n")
  server = await startServer(root.path)
})

afterAll(async () => {
  for (const stream of opened) stream.close()
  await server?.stop()
  root?.cleanup()
})

const status = async () => {
  const run = await runHost(["--root", root.path, "status", "--json"])
  expect(run.code, run.stderr).toBe(0)
  return JSON.parse(run.stdout) as { replica?: { event_streams?: { open: number; cap: number; per_user: number } } }
}

describe("event stream caps", () => {
  it("a user's ninth stream ends the oldest; the others stay open", async () => {
    const alice: Array<OpenStream> = []
    for (let index = 0; index < 8; index++) alice.push(await openStream(server.url, "alice"))
    opened.push(...alice)
    expect(alice.map((stream) => stream.status)).toEqual(Array(8).fill(200))
    let firstEnded = false
    void alice[0]!.ended.then(() => (firstEnded = true))
    const ninth = await openStream(server.url, "alice")
    opened.push(ninth)
    expect(ninth.status).toBe(200)
    await alice[0]!.ended
    expect(firstEnded).toBe(true)
    // Told to come back later rather than at once (a ninth tab would otherwise take turns with it).
    expect(alice[0]!.body()).toContain("retry: 60000")
    let secondEnded = false
    void alice[1]!.ended.then(() => (secondEnded = true))
    // A keep-alive of the others would show here; the second stream is still open after the ninth answered.
    const tenth = await openStream(server.url, "bob")
    expect(tenth.status).toBe(200)
    opened.push(tenth)
    expect(secondEnded).toBe(false)
  })

  it("past limits.event_streams in all, a new stream is 503; a closed one frees its place; host status shows the count", async () => {
    // 8 of alice's and 1 of bob's are open: one place left.
    const carol = await openStream(server.url, "carol")
    opened.push(carol)
    expect(carol.status).toBe(200)
    const refused = await openStream(server.url, "dave")
    expect(refused.status).toBe(503)
    expect(JSON.parse(refused.body())).toMatchObject({ errors: [{ code: "TooManyStreams", status: "503" }] })
    expect(JSON.parse(refused.body()).errors[0].detail).toContain("limits.event_streams")
    const shown = await eventually(status, (report) => report.replica?.event_streams?.open === 10, { what: "host status showing 10 open streams" })
    expect(shown.replica?.event_streams).toEqual({ open: 10, cap: 10, per_user: 8 })
    const text = await runHost(["--root", root.path, "status"])
    expect(text.stdout).toMatch(/Event streams:\s+10 open \(at most 10, 8 per user\)/)
    carol.close()
    const again = await eventually(() => openStream(server.url, "dave"), (stream) => stream.status === 200, { what: "a place freed by a closed stream" })
    opened.push(again)
  })
})
