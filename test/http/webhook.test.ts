import { Either } from "effect"
import { createHmac } from "node:crypto"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { decodeConfig } from "../../src/config/HostConfig.js"
import { fixture, tempDirsPerTest } from "../support/cli.js"
import { inspectDatabase } from "../support/extensions.js"
import { request, startServer, writePanelConfig } from "./helpers.js"

// Signed reconcile webhooks (docs/gitops.md) against a real `host serve`.

const temp = tempDirsPerTest()
const secret = "s3cret-webhook-key-for-tests-0123456789"

/** The legacy form: the body alone (accepted only with webhook_legacy_signatures: true). */
const signBodyOnly = (body: string, key = secret) => `sha256=${createHmac("sha256", key).update(body).digest("hex")}`
const now = () => Math.floor(Date.now() / 1000)
/** The form senders use: `t=<unix seconds>,v1=<HMAC of "<t>.<delivery>.<body>">`. */
const signAt = (timestamp: number, delivery: string, body: string, key = secret) =>
  `t=${timestamp},v1=${createHmac("sha256", key).update(`${timestamp}.${delivery}.${body}`).digest("hex")}`
/** Signed headers of one delivery of `body`, made now. */
const signed = (delivery: string, body: string, key = secret) => ({
  "x-host-signature-256": signAt(now(), delivery, body, key),
  "x-host-delivery": delivery
})

/** A signed POST of `body` (exactly these bytes) to the webhook path. */
const webhook = (url: string, body: string, headers: Record<string, string>) =>
  request(`${url}/admin/host/reconcile`, { method: "POST", body, headers: { "content-type": "application/json", ...headers } })

const errorOf = (json: unknown) => (json as { errors: Array<{ code: string; status: string; detail: string }> }).errors[0]!

const panelRoot = (desired: string) => {
  const root = temp("host-root-")
  writePanelConfig(root)
  mkdirSync(join(root, "desired-state"))
  writeFileSync(join(root, "desired-state", "extensions.yaml"), desired)
  return root
}
const helloDesired = `host: "1.0"\nextensions:\n  acme/hello-world:\n    source: { path: ${fixture("extensions", "hello-world")} }\n`

describe("webhook_secret", () => {
  it("is read from config/host.yaml and HOST_WEBHOOK_SECRET, and refused when short", () => {
    const fromFile = decodeConfig({ webhook_secret: secret }, {}, "config/host.yaml")
    expect(Either.map(fromFile, (result) => result.config.webhook_secret)).toEqual(Either.right(secret))
    const fromEnv = decodeConfig({ webhook_secret: secret }, { HOST_WEBHOOK_SECRET: `${secret}-env` }, "config/host.yaml")
    expect(Either.map(fromEnv, (result) => result.config.webhook_secret)).toEqual(Either.right(`${secret}-env`))
    const short = decodeConfig({}, { HOST_WEBHOOK_SECRET: "hunter2" }, "config/host.yaml")
    expect(Either.isLeft(short)).toBe(true)
    const message = Either.isLeft(short) ? short.left.message : ""
    expect(message).toContain("webhook_secret (from HOST_WEBHOOK_SECRET)")
    expect(message).toContain("must be at least 16 characters")
    expect(message).not.toContain("hunter2")
  })
})

describe("POST /admin/host/reconcile, signed", () => {
  it("refuses unsigned and wrongly signed requests, applies a signed one once, and remembers it across a restart", async () => {
    const root = panelRoot(helloDesired)
    let server = await startServer(root, { env: { HOST_WEBHOOK_SECRET: secret } })
    try {
      const unsigned = await webhook(server.url, "{}", { "x-host-delivery": "d-unsigned" })
      expect(unsigned.status).toBe(401)
      expect(errorOf(unsigned.json)).toMatchObject({ code: "Unauthorized", status: "401" })
      expect(errorOf(unsigned.json).detail).toContain("X-Host-Signature-256".toLowerCase())

      const wrongKey = await webhook(server.url, "{}", signed("d-wrong", "{}", `${secret}-other`))
      expect(wrongKey.status).toBe(401)
      expect(errorOf(wrongKey.json)).toMatchObject({ code: "SignatureInvalid", status: "401" })
      const tampered = await webhook(server.url, `{"dry_run":false}`, { "x-host-signature-256": signAt(now(), "d-tampered", `{"dry_run":true}`), "x-host-delivery": "d-tampered" })
      expect(tampered.status).toBe(401)
      const malformed = await webhook(server.url, "{}", { "x-host-signature-256": "sha1=abc", "x-host-delivery": "d-malformed" })
      expect(malformed.status).toBe(401)
      expect(errorOf(malformed.json).detail).toContain("t=<unix seconds>,v1=<64 hex characters")
      // The signature decides: an admin token beside a wrong signature does not make it pass.
      const tokenAndWrong = await webhook(server.url, "{}", {
        authorization: "Bearer host_test_admin_token",
        ...signed("d-token", "{}", `${secret}-other`)
      })
      expect(tokenAndWrong.status).toBe(401)
      const noDelivery = await webhook(server.url, "{}", { "x-host-signature-256": signAt(now(), "", "{}") })
      expect(noDelivery.status).toBe(400)
      expect(errorOf(noDelivery.json).code).toBe("DeliveryMissing")
      const badBody = await webhook(server.url, `{"dry_run":"yes"}`, signed("d-bad", `{"dry_run":"yes"}`))
      expect(badBody.status).toBe(400)
      expect(inspectDatabase(root).extensions).toEqual([])
      expect(inspectDatabase(root).activity).toEqual([])

      // A dry run changes nothing and answers the plan.
      const dryBody = `{"dry_run": true}`
      const dry = await webhook(server.url, dryBody, signed("d-dry", dryBody))
      expect(dry.status, dry.text).toBe(200)
      expect((dry.json as { data: { summary: { install: number }; apply?: unknown } }).data.summary.install).toBe(1)
      expect((dry.json as { data: { apply?: unknown } }).data.apply).toBeUndefined()
      expect(inspectDatabase(root).extensions).toEqual([])
      expect(inspectDatabase(root).activity).toEqual([])

      // Signed, without a session, a token or a CSRF token: applied, and the activity names the delivery.
      const applied = await webhook(server.url, "{}", signed("d-apply-1", "{}"))
      expect(applied.status, applied.text).toBe(200)
      const data = (applied.json as { data: { id: string; apply: { applied: Array<{ id: string }>; failed: unknown } } }).data
      expect(data.apply.applied.map((action) => action.id)).toEqual(["acme/hello-world"])
      expect(data.apply.failed).toBeNull()
      const db = inspectDatabase(root)
      expect(db.extensions.map((e) => e.extension_id)).toEqual(["acme/hello-world"])
      expect(db.activity.map((row) => row.action)).toEqual(["installed"])
      expect(JSON.parse(db.activity[0]!.context)).toMatchObject({ actor: { type: "api", user: "webhook" }, delivery: "d-apply-1", plan: data.id })
      expect(db.settings.filter((row) => row.extension_id === "host/core" && row.key.startsWith("webhook_delivery:")).map((row) => row.key).sort())
        .toEqual(["webhook_delivery:d-apply-1", "webhook_delivery:d-dry"])
      const listed = await request(`${server.url}/api/client/host/extensions`, { as: "alice" })
      expect((listed.json as { data: Array<{ id: string }> }).data.map((extension) => extension.id)).toEqual(["acme/hello-world"])

      const repeat = await webhook(server.url, "{}", signed("d-apply-1", "{}"))
      expect(repeat.status).toBe(409)
      expect(errorOf(repeat.json)).toMatchObject({ code: "DeliveryRepeated", status: "409" })
      const repeatDry = await webhook(server.url, dryBody, signed("d-dry", dryBody))
      expect(repeatDry.status).toBe(409)

      // The session/token path is unchanged: an admin token needs no signature.
      const byToken = await request(`${server.url}/admin/host/reconcile`, { as: "admin", method: "POST", body: { dry_run: true } })
      expect(byToken.status).toBe(200)
      expect((byToken.json as { data: { actions: Array<unknown> } }).data.actions).toEqual([])
      const notAdmin = await request(`${server.url}/admin/host/reconcile`, { as: "alice", method: "POST", body: {} })
      expect(notAdmin.status).toBe(403)
      expect(inspectDatabase(root).activity).toHaveLength(1)

      // Deliveries live in the database: a restarted server (or another replica) still refuses a repeat.
      await server.stop()
      server = await startServer(root, { env: { HOST_WEBHOOK_SECRET: secret } })
      const afterRestart = await webhook(server.url, "{}", signed("d-apply-1", "{}"))
      expect(afterRestart.status).toBe(409)
    } finally {
      await server.stop()
    }
  })

  it("forgets a delivery that changed nothing, so its retry is answered", async () => {
    const root = panelRoot(`host: "1.0"\nextensions:\n  acme/hello-world:\n    source: { path: ${join(fixture("extensions"), "missing")} }\n`)
    const server = await startServer(root, { env: { HOST_WEBHOOK_SECRET: secret } })
    try {
      const failed = await webhook(server.url, "{}", signed("d-retry", "{}"))
      expect(failed.status, failed.text).toBe(422)
      expect(errorOf(failed.json).code).toBe("PlanInvalid")
      writeFileSync(join(root, "desired-state", "extensions.yaml"), helloDesired)
      const retried = await webhook(server.url, "{}", signed("d-retry", "{}"))
      expect(retried.status, retried.text).toBe(200)
      expect(inspectDatabase(root).extensions.map((e) => e.extension_id)).toEqual(["acme/hello-world"])
    } finally {
      await server.stop()
    }
  })

  it("refuses every signed request when no webhook_secret is configured; admins still reconcile", async () => {
    const root = panelRoot(helloDesired)
    const server = await startServer(root)
    try {
      const signedAnswer = await webhook(server.url, "{}", signed("d-1", "{}"))
      expect(signedAnswer.status).toBe(401)
      expect(errorOf(signedAnswer.json)).toMatchObject({ code: "WebhookNotConfigured", status: "401" })
      expect(errorOf(signedAnswer.json).detail).toContain("no webhook_secret is configured")
      // Not even a signature made with the empty key passes.
      const emptyKey = await webhook(server.url, "{}", signed("d-2", "{}", ""))
      expect(emptyKey.status).toBe(401)
      expect(inspectDatabase(root).extensions).toEqual([])
      const byToken = await request(`${server.url}/admin/host/reconcile`, { as: "admin", method: "POST", body: {} })
      expect(byToken.status, byToken.text).toBe(200)
      expect(inspectDatabase(root).extensions.map((e) => e.extension_id)).toEqual(["acme/hello-world"])
    } finally {
      await server.stop()
    }
  })

  it("refuses a captured request replayed under a new delivery id, an old or future timestamp, and the body-only form", async () => {
    const root = panelRoot(helloDesired)
    const server = await startServer(root, { env: { HOST_WEBHOOK_SECRET: secret } })
    try {
      const dryBody = `{"dry_run": true}`
      const captured = signed("d-captured", dryBody)
      const first = await webhook(server.url, dryBody, captured)
      expect(first.status, first.text).toBe(200)
      // The attacker replays the same bytes under a fresh id: the id is signed, so this is not a valid signature.
      const replay = await webhook(server.url, dryBody, { ...captured, "x-host-delivery": "d-replayed" })
      expect(replay.status).toBe(401)
      expect(errorOf(replay.json)).toMatchObject({ code: "SignatureInvalid", status: "401" })
      expect(errorOf(replay.json).detail).toContain("for another delivery id")
      // Correctly signed, but 301 s old (and 301 s ahead): refused, saying why.
      const old = await webhook(server.url, "{}", { "x-host-signature-256": signAt(now() - 301, "d-old", "{}"), "x-host-delivery": "d-old" })
      expect(old.status).toBe(401)
      expect(errorOf(old.json)).toMatchObject({ code: "SignatureExpired", status: "401" })
      expect(errorOf(old.json).detail).toMatch(/t=\d+ is 3\d\d s old; at most 300 s either way/)
      const future = await webhook(server.url, "{}", { "x-host-signature-256": signAt(now() + 400, "d-future", "{}"), "x-host-delivery": "d-future" })
      expect(future.status).toBe(401)
      expect(errorOf(future.json).code).toBe("SignatureExpired")
      // The body-only form is refused without webhook_legacy_signatures, naming the setting.
      const legacy = await webhook(server.url, "{}", { "x-host-signature-256": signBodyOnly("{}"), "x-host-delivery": "d-legacy" })
      expect(legacy.status).toBe(401)
      expect(errorOf(legacy.json)).toMatchObject({ code: "LegacySignatureRefused" })
      expect(errorOf(legacy.json).detail).toContain("webhook_legacy_signatures: true")
      expect(inspectDatabase(root).extensions).toEqual([])
    } finally {
      await server.stop()
    }
  })

  it("accepts the body-only form with webhook_legacy_signatures: true", async () => {
    const root = panelRoot(helloDesired)
    writeFileSync(join(root, "config", "host.yaml"), "webhook_legacy_signatures: true\n")
    const server = await startServer(root, { env: { HOST_WEBHOOK_SECRET: secret } })
    try {
      const wrong = await webhook(server.url, "{}", { "x-host-signature-256": signBodyOnly("{}", `${secret}-other`), "x-host-delivery": "d-l0" })
      expect(wrong.status).toBe(401)
      expect(errorOf(wrong.json).code).toBe("SignatureInvalid")
      const legacy = await webhook(server.url, "{}", { "x-host-signature-256": signBodyOnly("{}"), "x-host-delivery": "d-l1" })
      expect(legacy.status, legacy.text).toBe(200)
      expect(inspectDatabase(root).extensions.map((e) => e.extension_id)).toEqual(["acme/hello-world"])
      // The new form still works beside it.
      const current = await webhook(server.url, `{"dry_run": true}`, signed("d-l2", `{"dry_run": true}`))
      expect(current.status, current.text).toBe(200)
    } finally {
      await server.stop()
    }
  })
})
