import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixture, runHost, tempDir } from "../support/cli.js"
import { sessionCookie } from "../support/browser.js"
import { install, request, type RunningServer, startServer, tokens, writePanelConfig } from "../http/helpers.js"

// The bridge's two endpoints over real HTTP against `host serve`: the events stream (a generation event
// on connect and after a change made by another process) and the diagnostics endpoint (decoding,
// authentication, CSRF, rate limit, what is kept and where `host status` reads it).

const root = tempDir("host-bridge-http-")
let server: RunningServer

beforeAll(async () => {
  writePanelConfig(root.path)
  await install(root.path, fixture("extensions", "hello-world"))
  await install(root.path, fixture("extensions", "full"))
  server = await startServer(root.path)
})

afterAll(async () => {
  await server?.stop()
  root.cleanup()
})

interface GenerationEvent {
  readonly generation: number
  readonly extensions: ReadonlyArray<{ readonly id: string; readonly bundle: string | null }>
}

/** Reads `generation` events from the stream until `until` says stop. */
const readEvents = async (until: (events: ReadonlyArray<GenerationEvent>) => boolean, onFirst?: () => Promise<void>) => {
  const controller = new AbortController()
  const response = await fetch(`${server.url}/api/client/host/events`, {
    headers: { authorization: `Bearer ${tokens.alice}` },
    signal: controller.signal
  })
  expect(response.status).toBe(200)
  expect(response.headers.get("content-type")).toContain("text/event-stream")
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  const events: Array<GenerationEvent> = []
  let buffer = ""
  let raw = ""
  try {
    while (!until(events)) {
      const { done, value } = await reader.read()
      if (done) break
      buffer += decoder.decode(value, { stream: true })
      raw += decoder.decode(value)
      let end: number
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const lines = frame.split("\n")
        if (lines.includes("event: generation")) {
          const data = lines.find((line) => line.startsWith("data: "))!.slice(6)
          events.push(JSON.parse(data) as GenerationEvent)
          if (events.length === 1) await onFirst?.()
        }
      }
    }
  } finally {
    controller.abort()
  }
  return { events, raw }
}

describe("GET /api/client/host/events", () => {
  it("needs a user", async () => {
    const answer = await request(`${server.url}/api/client/host/events`)
    expect(answer.status).toBe(401)
  })

  it("sends the current generation on connect, and a new one after host disable in another process", async () => {
    const { events, raw } = await readEvents(
      (events) => events.length >= 2,
      async () => {
        const run = await runHost(["--root", root.path, "disable", "acme/full"])
        expect(run.code, run.stderr).toBe(0)
      }
    )
    expect(raw.startsWith("retry: 2000\n\n")).toBe(true)
    expect(events[0]!.extensions.map((e) => e.id).sort()).toEqual(["acme/full", "acme/hello-world"])
    expect(events[0]!.extensions.find((e) => e.id === "acme/full")!.bundle).toMatch(/^\/host\/ext\/acme\/full\/.*extension\.js\?v=/)
    expect(events[1]!.generation).toBeGreaterThan(events[0]!.generation)
    expect(events[1]!.extensions.map((e) => e.id)).toEqual(["acme/hello-world"])
    const back = await runHost(["--root", root.path, "enable", "acme/full"])
    expect(back.code, back.stderr).toBe(0)
  })
})

describe("POST /api/client/host/diagnostics", () => {
  const post = (body: unknown, as: "alice" | "bob" | null = "alice") =>
    request(`${server.url}/api/client/host/diagnostics`, { method: "POST", body, ...(as === null ? {} : { as }) })

  it("accepts a report (202) and keeps it where host status reads it, counting repeats", async () => {
    const report = { extensionId: "acme/hello-world", message: "TypeError: x is undefined", stack: "at Widget", componentStack: "in Widget", slot: "dashboard.widgets" }
    expect((await post(report)).status).toBe(202)
    expect((await post(report, "bob")).status).toBe(202)
    const status = await runHost(["--root", root.path, "status", "--json"])
    const errors = (JSON.parse(status.stdout) as { frontendErrors: Record<string, Array<Record<string, unknown>>> }).frontendErrors
    expect(errors["acme/hello-world"]).toEqual([
      expect.objectContaining({ message: "TypeError: x is undefined", slot: "dashboard.widgets", version: "1.0.0", user: "bob", count: 2 })
    ])
    const text = await runHost(["--root", root.path, "status"])
    expect(text.stdout).toMatch(/Recent frontend errors:\nacme\/hello-world:\n  \S+  TypeError: x is undefined \(×2\) in dashboard\.widgets \(v1\.0\.0, bob\)/)
  })

  it("refuses what it cannot use, saying what was wrong", async () => {
    expect((await post({ extensionId: "acme/hello-world", message: "x" }, null)).status).toBe(401)
    const invalid = await post({ extensionId: "not an id", message: "" })
    expect(invalid.status).toBe(400)
    expect(invalid.text).toContain("extensionId must be an extension id")
    const notJson = await post("{nope")
    expect(notJson.status).toBe(400)
    expect(notJson.text).toContain("the body must be JSON")
    const unknown = await post({ extensionId: "acme/nothing", message: "x" })
    expect(unknown.status).toBe(404)
    expect(unknown.text).toContain("no enabled extension acme/nothing")
  })

  it("a session needs the CSRF token", async () => {
    const cookie = await sessionCookie(server.url, "alice")
    const without = await request(`${server.url}/api/client/host/diagnostics`, {
      method: "POST",
      body: { extensionId: "acme/full", message: "x" },
      headers: { cookie: `${cookie.name}=${cookie.value}` }
    })
    expect(without.status).toBe(403)
    expect(without.text).toContain("CsrfTokenMismatch")
  })

  it("is rate-limited per user and extension", async () => {
    const statuses: Array<number> = []
    for (let index = 0; index < 12; index++) statuses.push((await post({ extensionId: "acme/full", message: `failure ${index}` })).status)
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(202))
    expect(statuses.slice(10)).toEqual([429, 429])
    // Another user is not limited by alice's reports.
    expect((await post({ extensionId: "acme/full", message: "bob's failure" }, "bob")).status).toBe(202)
    const status = await runHost(["--root", root.path, "status", "--json"])
    const kept = (JSON.parse(status.stdout) as { frontendErrors: Record<string, Array<{ message: string }>> }).frontendErrors["acme/full"]!
    // The newest ten, newest first.
    expect(kept.length).toBe(10)
    expect(kept[0]!.message).toBe("bob's failure")
    expect(kept.map((e) => e.message)).not.toContain("failure 0")
  })
})
