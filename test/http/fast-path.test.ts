import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixture, runHost, tempDir } from "../support/cli.js"
import { until } from "../support/wait.js"
import { install, request, type RunningServer, startServer, writePanelConfig } from "./helpers.js"

// The three precomputed client bodies are answered twice over: by the fast path (http/Server.ts) and,
// with HOST_HTTP_FAST_PATH=0 or whenever the fast path declines, by the Effect route, which hands out
// answers built once per body (http/Static.ts `withCachedETag`). Both must give the same bytes and headers,
// again and again, and a new generation's bytes as soon as there is one.

const root = tempDir("host-fast-path-")
let effectRoute: RunningServer

const endpoints = ["slots", "extensions", "config"] as const
// Per connection or per moment, not part of the answer.
const varying = new Set(["date", "connection", "keep-alive"])

const answer = async (url: string, headers: Record<string, string> = {}) => {
  const got = await request(url, { as: "dave", headers })
  return { status: got.status, text: got.text, headers: [...got.headers].filter(([name]) => !varying.has(name)) }
}

// /config names the address the server listens on, a port of its own each time, and so does its ETag.
const portFree = (base: string, got: Awaited<ReturnType<typeof answer>>) => ({
  ...got,
  text: got.text.replaceAll(base, "<base>"),
  headers: got.headers.map(([name, value]) => [name, name === "etag" ? "<etag>" : value])
})

const answersOf = async (base: string) => {
  const all: Record<string, unknown> = {}
  for (const endpoint of endpoints) {
    const url = `${base}/api/client/host/${endpoint}`
    const ok = await answer(url)
    const etag = ok.headers.find(([name]) => name === "etag")?.[1] ?? ""
    const answers = { ok, notModified: await answer(url, { "if-none-match": etag }), otherTag: await answer(url, { "if-none-match": "\"other\"" }) }
    all[endpoint] = endpoint === "config"
      ? { ok: portFree(base, answers.ok), notModified: portFree(base, answers.notModified), otherTag: portFree(base, answers.otherTag) }
      : answers
  }
  return all
}

beforeAll(async () => {
  writePanelConfig(root.path)
  await install(root.path, fixture("extensions", "hello-world"))
  await install(root.path, fixture("extensions", "full"))
})

afterAll(async () => {
  await effectRoute?.stop()
  root.cleanup()
})

describe("the precomputed client bodies", () => {
  it("are answered the same by the fast path and the Effect route, every time", async () => {
    const fast = await startServer(root.path)
    const byFastPath = await answersOf(fast.url).finally(() => fast.stop())
    effectRoute = await startServer(root.path, { env: { HOST_HTTP_FAST_PATH: "0" } })
    const first = await answersOf(effectRoute.url)
    expect(first).toEqual(byFastPath)
    expect(await answersOf(effectRoute.url)).toEqual(first)
  })

  it("change on the Effect route with the generation", async () => {
    const before = await answer(`${effectRoute.url}/api/client/host/slots`)
    expect(before.text).toContain("acme/full")
    expect((await runHost(["--root", root.path, "disable", "acme/full"])).code).toBe(0)
    await until(async () => !(await answer(`${effectRoute.url}/api/client/host/slots`)).text.includes("acme/full"), "the new generation on the Effect route", 15_000)
    const after = await answer(`${effectRoute.url}/api/client/host/slots`)
    expect(after.status).toBe(200)
    expect(after.headers.find(([name]) => name === "etag")).not.toEqual(before.headers.find(([name]) => name === "etag"))
    const stale = before.headers.find(([name]) => name === "etag")?.[1] ?? ""
    expect((await answer(`${effectRoute.url}/api/client/host/slots`, { "if-none-match": stale })).status).toBe(200)
  })
})
