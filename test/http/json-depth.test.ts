import { createHmac } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixture, tempDir } from "../support/cli.js"
import { install, request, type RunningServer, startServer, writePanelConfig } from "./helpers.js"

// JSON bodies nesting 100,000 levels (200 KB, well inside the 1 MiB body limit) are refused with a 400
// naming the limit, and the server keeps serving (docs/decisions.md "JSON from outside nests at most 64
// levels"). Before the bound every case here but the extension route answered a 500: the schema's
// refusal formatted the value and ran out of stack ("Maximum call stack size exceeded"), or the settings
// check stringified it; the extension route handed the value to the extension's handler.

const root = tempDir("host-json-depth-")
const secret = "s3cret-webhook-key-for-tests-0123456789"
let server: RunningServer

beforeAll(async () => {
  writePanelConfig(root.path)
  await install(root.path, fixture("runtime", "probe"))
  server = await startServer(root.path, { env: { HOST_WEBHOOK_SECRET: secret } })
})

afterAll(async () => {
  await server?.stop()
  root.cleanup()
})

const levels = 100_000
const arrays = "[".repeat(levels) + "]".repeat(levels)
const objects = '{"a":'.repeat(levels) + "1" + "}".repeat(levels)
const limit = "the JSON nests arrays and objects more than 64 levels deep; that is the limit"
const detailOf = (json: unknown) => (json as { errors: Array<{ detail: string }> }).errors[0]!.detail

const api = (path: string) => `${server.url}/admin/host/api${path}`
const adminCases: ReadonlyArray<readonly [string, string, string]> = [
  ["PUT", "/extensions/acme/probe/settings", "a JSON object of setting key → value"],
  ["POST", "/extensions/acme/probe/disable", "{force?, keepData?, disabled?, noMigrate?}"],
  ["POST", "/registry/install", "{id, version?}"],
  ["POST", "/servers", "{uuid, name, owner}"],
  ["POST", "/desired-state/adopt", "{write?, expected_sha256?}"],
  ["POST", "/reconcile", "{dry_run?, prune?, allow_destroy?}"]
]

describe("deeply nested JSON bodies", () => {
  it("the admin API refuses each with a 400 naming the limit", async () => {
    for (const [method, path, shape] of adminCases) {
      for (const body of [arrays, objects, `{"greeting":${arrays}}`, `{"values":{"greeting":${arrays}}}`]) {
        const answer = await request(api(path), { as: "admin", method, body })
        expect([path, answer.status, detailOf(answer.json)]).toEqual([path, 400, `the body must be ${shape}: ${limit}`])
      }
    }
    // The extension was left as it was: the refused disable did nothing.
    expect((await request(api("/extensions/acme/probe"), { as: "admin" })).json).toMatchObject({ data: { enabled: true } })
  })

  it("the signed webhook refuses it with a 400 naming the limit", async () => {
    const timestamp = Math.floor(Date.now() / 1000)
    const signature = `t=${timestamp},v1=${createHmac("sha256", secret).update(`${timestamp}.d-deep.${arrays}`).digest("hex")}`
    const answer = await request(`${server.url}/admin/host/reconcile`, {
      method: "POST",
      body: arrays,
      headers: { "content-type": "application/json", "x-host-delivery": "d-deep", "x-host-signature-256": signature }
    })
    expect([answer.status, detailOf(answer.json)]).toEqual([400, `the body must be {dry_run?, prune?, allow_destroy?}: ${limit}`])
  })

  it("diagnostics reports refuse it with a 400 naming the limit", async () => {
    for (const body of [arrays, `{"extensionId":${arrays}}`]) {
      const answer = await request(`${server.url}/api/client/host/diagnostics`, { as: "dave", method: "POST", body })
      expect([answer.status, detailOf(answer.json)]).toEqual([400, `the body must be JSON: {extensionId, message, stack?, componentStack?}; ${limit}`])
    }
  })

  it("an extension route refuses it before the handler sees it, and still takes 64 levels", async () => {
    const echo = `${server.url}/api/client/host/acme/probe/echo`
    const refused = await request(echo, { as: "dave", method: "POST", body: `{"a":${arrays}}` })
    expect([refused.status, detailOf(refused.json)]).toEqual([400, `the body is refused: ${limit}`])
    const sixtyFour = JSON.parse("[".repeat(63) + "1" + "]".repeat(63)) as unknown
    const taken = await request(echo, { as: "dave", method: "POST", body: { a: sixtyFour } })
    expect(taken.status).toBe(200)
    expect(taken.json).toMatchObject({ body: { a: sixtyFour } })
    expect((await request(echo, { as: "dave", method: "POST", body: "{nope" })).json).toMatchObject({ errors: [{ detail: "the body is not valid JSON" }] })
  })

  it("the server is still serving, and logged no defect", async () => {
    expect((await request(`${server.url}/host/ready`)).status).toBe(200)
    expect(server.process.exitCode).toBe(null)
    expect(server.stderr()).not.toContain("unexpected defect")
  })
})
