import { Effect, Stream } from "effect"
import { createServer, request as httpRequest } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fastLaneRoutes, makeFastLane } from "../../src/http/FastLane.js"
import { HostApi } from "../../src/http/contracts/Api.js"
import { embeddedAccess, type PanelAccess } from "../../src/panel/Access.js"
import { hashToken, makeDirectory } from "../../src/panel/Panel.js"
import { precompute } from "../../src/runtime/ClientView.js"
import type { LiveGeneration, LiveRuntimeService } from "../../src/runtime/LiveState.js"
import { fixture, tempDir } from "../support/cli.js"
import { writePanelRoot } from "../support/panel-root.js"
import { noSessions } from "../support/sessions.js"
import { machines, type PanelStandIn, people, startPanelStandIn } from "../support/pterodactyl-api.js"
import { install, type RunningServer, startServer, tokens, writePanelConfig } from "./helpers.js"

// DESIGN §23 "the precomputed client answers": the fast lane (http/Server.ts, http/FastLane.ts) answers
// GET /api/client/host/slots|extensions|config exactly as the router does, for every credential state, or
// leaves the request to the router. Two `host serve` processes on one root, one with the fast lane
// (ListenOptions.fastPath) and one without (HOST_HTTP_FAST_PATH=0), are asked the same requests in the
// same order; status, headers (in order, as written on the wire) and body bytes must be equal. Both run
// with one base_url, so /config and its ETag are the same bytes on both.
//
// Excluded from the comparison, by name: `Date` (the second the answer was written). Nothing else.
const perMoment = new Set(["date"])

interface WireAnswer {
  readonly status: number | undefined
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body: string
}

/** One request on a fresh connection; the answer as it came over the wire (raw header lines, body as hex). */
const ask = (base: string, method: string, path: string, headers: Readonly<Record<string, string>>) =>
  new Promise<WireAnswer>((resolve, reject) => {
    const sent = httpRequest(`${base}${path}`, { method, headers, agent: false }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        const pairs: Array<readonly [string, string]> = []
        for (let index = 0; index < response.rawHeaders.length; index += 2) {
          const name = response.rawHeaders[index]!
          if (!perMoment.has(name.toLowerCase())) pairs.push([name, response.rawHeaders[index + 1]!])
        }
        resolve({ status: response.statusCode, headers: pairs, body: Buffer.concat(chunks).toString("hex") })
      })
      response.on("error", reject)
    })
    sent.on("error", reject)
    sent.end()
  })

const endpoints = ["slots", "extensions", "config"] as const

/** Asks the fast-lane server, then the router-only one, the same request; both answers. */
const both = async (servers: { fast: RunningServer; router: RunningServer }, method: string, path: string, headers: Readonly<Record<string, string>> = {}) => {
  const fast = await ask(servers.fast.url, method, path, headers)
  const router = await ask(servers.router.url, method, path, headers)
  return { fast, router }
}

/** Every endpoint asked in one credential state: equal answers, each with the status expected. */
const compareAll = async (
  servers: { fast: RunningServer; router: RunningServer },
  state: string,
  headers: Readonly<Record<string, string>>,
  expected: number,
  options: { readonly method?: string; readonly query?: string } = {}
) => {
  for (const endpoint of endpoints) {
    const { fast, router } = await both(servers, options.method ?? "GET", `/api/client/host/${endpoint}${options.query ?? ""}`, headers)
    expect(fast, `${state}: ${endpoint}`).toEqual(router)
    expect(fast.status, `${state}: ${endpoint}`).toBe(expected)
  }
}

/** The ETags of the three bodies, as the router gives them to `headers`' caller. */
const etagsOf = async (servers: { fast: RunningServer; router: RunningServer }, headers: Readonly<Record<string, string>>) => {
  const etags: Record<string, string> = {}
  for (const endpoint of endpoints) {
    const answer = await ask(servers.router.url, "GET", `/api/client/host/${endpoint}`, headers)
    etags[endpoint] = answer.headers.find(([name]) => name.toLowerCase() === "etag")?.[1] ?? ""
    expect(etags[endpoint]).not.toBe("")
  }
  return etags
}

const conditionalStates = async (servers: { fast: RunningServer; router: RunningServer }, headers: Readonly<Record<string, string>>) => {
  const etags = await etagsOf(servers, headers)
  for (const endpoint of endpoints) {
    const path = `/api/client/host/${endpoint}`
    const match = await both(servers, "GET", path, { ...headers, "if-none-match": etags[endpoint]! })
    expect(match.fast, `If-None-Match match: ${endpoint}`).toEqual(match.router)
    expect(match.fast.status).toBe(304)
    const mismatch = await both(servers, "GET", path, { ...headers, "if-none-match": "\"another\"" })
    expect(mismatch.fast, `If-None-Match mismatch: ${endpoint}`).toEqual(mismatch.router)
    expect(mismatch.fast.status).toBe(200)
  }
}

const startPair = async (root: string, env: Readonly<Record<string, string>>) => {
  const [fast, router] = await Promise.all([
    startServer(root, { env }),
    startServer(root, { env: { ...env, HOST_HTTP_FAST_PATH: "0" } })
  ])
  return { fast, router }
}

describe("the fast lane's routes come from the contract", () => {
  it("one per precomputed body, at the path and with the content type the client group declares", () => {
    const client = HostApi.groups["client"]!
    expect([...fastLaneRoutes.entries()].map(([path, route]) => [path, route.body])).toEqual(
      endpoints.map((endpoint) => [client.endpoints[endpoint]!.path, endpoint])
    )
    for (const route of fastLaneRoutes.values()) expect(route.contentType).toBe("application/json")
  })
})

/**
 * The fast lane alone in a node server over a stand-in generation whose only parts it reads are `access` and
 * `bodies`; anything it leaves is answered 500 "the router's answer". The generation is there only to be read
 * synchronously (`currentNow`): `current`, the Effect, dies, so a lane that ran it would throw out of node's listener.
 */
const laneAlone = async (access: PanelAccess) => {
  const body = precompute({ data: {} })
  const live = { access, bodies: { slots: body, extensions: body, config: body } } as unknown as LiveGeneration
  const runtime: LiveRuntimeService = {
    current: Effect.die("the fast lane reads the generation synchronously"),
    currentNow: () => live,
    changes: Stream.die("not reached"),
    refresh: () => Effect.die("not reached"),
    baseUrl: Effect.die("not reached"),
    useListenUrl: () => Effect.die("not reached")
  }
  const fast = makeFastLane(runtime, noSessions)
  const server = createServer((request, response) => {
    if (fast(request, response)) return
    response.writeHead(500, { "content-type": "text/plain" })
    response.end("the router's answer")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    body,
    ask: (headers: Readonly<Record<string, string>>) => ask(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, "GET", "/api/client/host/slots", headers),
    close: () => new Promise((resolve) => server.close(resolve))
  }
}

describe("the fast lane on its own", () => {
  it("answers a known user from the generation it reads synchronously, without running an Effect", async () => {
    const directory = makeDirectory({ users: [{ id: 1, username: "dave", email: "dave@panel.test", admin: false, permissions: [], token_sha256: hashToken(tokens.dave) }], servers: [] })
    const lane = await laneAlone(embeddedAccess(directory))
    try {
      const answer = await lane.ask({ authorization: `Bearer ${tokens.dave}` })
      expect(answer.status).toBe(200)
      expect(Buffer.from(answer.body, "hex")).toEqual(Buffer.from(lane.body.bytes))
    } finally {
      await lane.close()
    }
  })

  it("leaves the request to the router (which logs the defect and answers 500) when the driver's synchronous answer throws, instead of throwing out of node's listener", async () => {
    const lane = await laneAlone({
      ...embeddedAccess(makeDirectory({ users: [], servers: [] })),
      peek: () => {
        throw new Error("a bug in the panel driver")
      }
    })
    try {
      const answer = await lane.ask({ authorization: "Bearer x" })
      expect(answer.status).toBe(500)
      expect(Buffer.from(answer.body, "hex").toString()).toBe("the router's answer")
    } finally {
      await lane.close()
    }
  })
})

describe("under the embedded panel", () => {
  const root = tempDir("host-fast-lane-")
  let servers: { fast: RunningServer; router: RunningServer }

  beforeAll(async () => {
    writePanelConfig(root.path)
    await install(root.path, fixture("extensions", "hello-world"))
    await install(root.path, fixture("extensions", "full"))
    servers = await startPair(root.path, { HOST_BASE_URL: "http://panel.test" })
  }, 60_000)
  afterAll(async () => {
    await servers?.fast.stop()
    await servers?.router.stop()
    root.cleanup()
  })

  const signIn = async (user: "dave" | "admin") => {
    const response = await fetch(`${servers.router.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: user, token: tokens[user] }),
      redirect: "manual"
    })
    expect(response.status).toBe(200)
    const body = (await response.json()) as { data: { csrfToken: string } }
    return { cookie: (response.headers.get("set-cookie") ?? "").split(";")[0]!, csrfToken: body.data.csrfToken }
  }

  it("answer alike without credentials, with an invalid token, a user's and an admin's token", async () => {
    await compareAll(servers, "no credentials", {}, 401)
    await compareAll(servers, "invalid bearer token", { authorization: "Bearer not-a-token" }, 401)
    // A wrong token is 401 whatever else the request carries.
    await compareAll(servers, "invalid bearer token with a session", { authorization: "Bearer not-a-token", cookie: (await signIn("dave")).cookie }, 401)
    await compareAll(servers, "user token", { authorization: `Bearer ${tokens.dave}` }, 200)
    await compareAll(servers, "admin token", { authorization: `Bearer ${tokens.admin}` }, 200)
    await compareAll(servers, "another scheme", { authorization: "Basic ZGF2ZTp4" }, 401)
  })

  it("answer alike with a session cookie, and with one signed out", async () => {
    const session = await signIn("dave")
    await compareAll(servers, "session cookie", { cookie: session.cookie }, 200)
    await compareAll(servers, "session cookie beside others", { cookie: `a=b; ${session.cookie}; c=d` }, 200)
    const out = await fetch(`${servers.router.url}/auth/logout`, { method: "POST", headers: { cookie: session.cookie, "x-csrf-token": session.csrfToken } })
    expect(out.status).toBe(204)
    await compareAll(servers, "revoked session", { cookie: session.cookie }, 401)
    await compareAll(servers, "forged session", { cookie: "host_session=forged.value" }, 401)
  })

  it("answer alike to If-None-Match (matching and not), a query string and HEAD", async () => {
    const dave = { authorization: `Bearer ${tokens.dave}` }
    await conditionalStates(servers, dave)
    await conditionalStates(servers, { cookie: (await signIn("admin")).cookie })
    await compareAll(servers, "query string", dave, 200, { query: "?a=1&b=%20" })
    await compareAll(servers, "empty query string", dave, 200, { query: "?" })
    const head = await both(servers, "HEAD", "/api/client/host/slots", dave)
    expect(head.fast).toEqual(head.router)
    const headAnonymous = await both(servers, "HEAD", "/api/client/host/slots", {})
    expect(headAnonymous.fast).toEqual(headAnonymous.router)
    for (const endpoint of endpoints) {
      const trailing = await both(servers, "GET", `/api/client/host/${endpoint}/`, dave)
      expect(trailing.fast, `trailing slash: ${endpoint}`).toEqual(trailing.router)
    }
  })
})

describe("under Pterodactyl (the stand-in of its client API)", () => {
  const root = tempDir("host-fast-lane-ptero-")
  let standIn: PanelStandIn
  let servers: { fast: RunningServer; router: RunningServer }
  const cookie = (session: string) => `pterodactyl_session=${session}`
  const accountCalls = () => standIn.count("/api/client/account")

  beforeAll(async () => {
    await install(root.path, fixture("extensions", "hello-world"))
    await install(root.path, fixture("extensions", "full"))
    standIn = await startPanelStandIn({ users: people, servers: machines })
    const panelRoot = writePanelRoot(join(root.path, "panel"), { version: "1.11.8" })
    servers = await startPair(root.path, {
      HOST_BASE_URL: "http://panel.test",
      HOST_PANEL_DRIVER: "pterodactyl",
      HOST_PANEL_URL: standIn.url,
      HOST_PANEL_ROOT: panelRoot
    })
  }, 60_000)
  afterAll(async () => {
    await servers?.fast.stop()
    await servers?.router.stop()
    await standIn?.close()
    root.cleanup()
  })

  it("answer alike in every credential state", async () => {
    await compareAll(servers, "no credentials", {}, 401)
    await compareAll(servers, "invalid bearer token", { authorization: "Bearer ptlc_nobody" }, 401)
    await compareAll(servers, "user key", { authorization: "Bearer ptlc_alice" }, 200)
    await compareAll(servers, "admin key", { authorization: "Bearer ptlc_admin" }, 200)
    await compareAll(servers, "session cookie", { cookie: cookie("sess-dave") }, 200)
    await compareAll(servers, "session cookie with remember-me", { cookie: `${cookie("sess-dave")}; remember_web_1=r` }, 200)
    await compareAll(servers, "a user the 2FA policy stops", { cookie: cookie("sess-erin") }, 401)
    await compareAll(servers, "unknown session", { cookie: cookie("sess-nobody") }, 401)
    await conditionalStates(servers, { authorization: "Bearer ptlc_alice" })
    await conditionalStates(servers, { cookie: cookie("sess-dave") })
    await compareAll(servers, "query string", { cookie: cookie("sess-dave") }, 200, { query: "?x=1" })
    const head = await both(servers, "HEAD", "/api/client/host/config", { authorization: "Bearer ptlc_alice" })
    expect(head.fast).toEqual(head.router)
  })

  it("a session the panel ended: reads keep the cache until an unsafe request asks the panel, then 401 on both", async () => {
    const index = standIn.users.findIndex((user) => user.username === "bob")
    const bob = standIn.users[index]!
    standIn.users[index] = { ...bob, sessions: [...bob.sessions, "sess-bob-ending"] }
    const ending = { cookie: cookie("sess-bob-ending") }
    await compareAll(servers, "session before it ends", ending, 200)
    standIn.users[index] = bob
    // Within the cache window a read is answered from the identity cache, on both (docs/panels.md "Identity").
    await compareAll(servers, "ended session, cached", ending, 200)
    // An unsafe request is asked of the panel every time; its answer replaces the cached one.
    for (const base of [servers.fast.url, servers.router.url]) {
      const unsafe = await fetch(`${base}/api/client/host/diagnostics`, { method: "POST", headers: { ...ending, "content-type": "application/json" }, body: "{}" })
      expect(unsafe.status).toBe(401)
    }
    await compareAll(servers, "revoked session", ending, 401)
  })

  it("after one request that asks the panel, the next is answered from the warm identity cache, identically", async () => {
    const key = { authorization: "Bearer ptlc_bob" }
    const before = accountCalls()
    const first = await ask(servers.fast.url, "GET", "/api/client/host/slots", key)
    expect(first.status).toBe(200)
    expect(accountCalls()).toBe(before + 1)
    for (const endpoint of endpoints) {
      const again = await ask(servers.fast.url, "GET", `/api/client/host/${endpoint}`, key)
      expect(again.status).toBe(200)
      if (endpoint === "slots") expect(again).toEqual(first)
    }
    expect(accountCalls()).toBe(before + 1)
  })
})
