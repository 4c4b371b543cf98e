import { HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { Cause, Effect, Layer, Logger, Stream } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { layer as hostConfigLayer } from "../../src/config/HostConfig.js"
import { bootScript } from "../../src/http/BootScript.js"
import { ServerSessions, ServerSettings } from "../../src/http/Context.js"
import { withErrorBodies } from "../../src/http/Errors.js"
import * as ServerState from "../../src/http/ServerState.js"
import { embeddedAccess, type PanelAccess, PanelUnavailable } from "../../src/panel/Access.js"
import { makeDirectory } from "../../src/panel/Panel.js"
import { LiveRuntime, type LiveGeneration, type LiveRuntimeService } from "../../src/runtime/LiveState.js"
import { tempDirsPerTest } from "../support/cli.js"
import { noSessions } from "../support/sessions.js"

// GET /host/boot.js when inlining the caller's bootstrap cannot be done (http/BootScript.ts): a refusal
// (the panel not answering) and a page path that does not decode leave the plain file, which asks the
// endpoint itself; a defect — a bug, not a refusal — is not swallowed into the plain file but logged and
// answered 500 the way the server answers every defect (DESIGN §23 "No failure is swallowed").
// Run in process with the panel driver given: no real driver has a defect to show, so this one is made
// to have one (or to refuse), and everything else the request reaches is the server's own.

const temp = tempDirsPerTest()
const plainScript = "/* the plain boot.js */\n"


/** Runs boot.js for a signed-in page's request with `authenticate` as the panel driver's; the answer and the errors logged. */
const bootFor = async (referer: string, authenticate: PanelAccess["authenticate"]) => {
  const root = temp("host-root-")
  const publicDirectory = temp("host-public-")
  mkdirSync(publicDirectory, { recursive: true })
  writeFileSync(join(publicDirectory, "boot.js"), plainScript)
  let asked = 0
  const access: PanelAccess = {
    ...embeddedAccess(makeDirectory({ users: [], servers: [] })),
    peek: () => undefined,
    authenticate: (credentials, sessions) => {
      asked++
      return authenticate(credentials, sessions)
    }
  }
  // Only `access` is read on the way to the driver; the rest of a generation is not reached.
  const live = { access } as unknown as LiveGeneration
  const runtime: LiveRuntimeService = {
    current: Effect.succeed(live),
    currentNow: () => live,
    changes: Stream.die("not reached"),
    refresh: () => Effect.die("not reached"),
    baseUrl: Effect.die("not reached"),
    useListenUrl: () => Effect.die("not reached")
  }
  const request = HttpServerRequest.fromWeb(new Request("http://panel.test/host/boot.js", {
    headers: { "sec-fetch-site": "same-origin", cookie: "host_session=anything", referer }
  }))
  const logged: Array<string> = []
  const logger = Logger.make(({ cause, logLevel, message }) => {
    if (logLevel._tag === "Error") logged.push(`${String(message)} ${Cause.pretty(cause)}`)
  })
  const services = Layer.mergeAll(
    Layer.succeed(HttpServerRequest.HttpServerRequest, request),
    Layer.succeed(LiveRuntime, runtime),
    Layer.succeed(ServerSessions, noSessions),
    Layer.succeed(ServerSettings, { publicDirectories: [publicDirectory], frameworkRoot: root, env: {} }),
    ServerState.layer,
    Layer.provideMerge(hostConfigLayer({ root, env: {} }), NodeContext.layer),
    Logger.replace(Logger.defaultLogger, logger)
  )
  const response: HttpServerResponse.HttpServerResponse = await Effect.runPromise(withErrorBodies(bootScript).pipe(Effect.provide(services)))
  const body = response.body._tag === "Uint8Array" ? Buffer.from(response.body.body).toString("utf8") : ""
  return { status: response.status, body, logged, asked }
}

describe("/host/boot.js when the bootstrap cannot be inlined", () => {
  it("a defect is logged and answered 500, not swallowed into the plain file", async () => {
    const answer = await bootFor("http://panel.test/", () => Effect.die(new Error("a bug in the panel driver")))
    expect(answer.status).toBe(500)
    expect(JSON.parse(answer.body)).toEqual({ errors: [{ code: "InternalServerError", status: "500", detail: expect.any(String) }] })
    expect(answer.body).not.toContain("a bug in the panel driver")
    expect(answer.logged.join("\n")).toContain("a bug in the panel driver")
  })

  it("a refusal (the panel not answering) leaves the plain file, whose request to the endpoint meets it", async () => {
    const answer = await bootFor("http://panel.test/", () => Effect.fail(new PanelUnavailable({ url: "http://panel.internal", reason: "no answer within 5 s" })))
    expect(answer).toMatchObject({ status: 200, body: plainScript, logged: [], asked: 1 })
  })

  it("a page whose server segment does not decode leaves the plain file without asking the panel", async () => {
    const answer = await bootFor("http://panel.test/server/%E0%A4/files", () => Effect.die(new Error("must not be asked")))
    expect(answer).toMatchObject({ status: 200, body: plainScript, logged: [], asked: 0 })
  })
})
