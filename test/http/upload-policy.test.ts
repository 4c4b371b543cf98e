import * as ed from "@noble/ed25519"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { decodeConfig } from "../../src/config/HostConfig.js"
import { uploadPolicyOf } from "../../src/usecases/UploadPolicy.js"
import { fixture, runHost, tempDir } from "../support/cli.js"
import { request, type RunningServer, startServer, writePanelConfig } from "./helpers.js"

// The web-install policy `admin_uploads` (docs/operations.md "Web installs") over real HTTP against real
// `host serve` processes, with real archives from `host export` and detached ed25519 signatures.

const work = tempDir("host-upload-policy-")
let trusted: { public_key: string; secret_key: string }
let stranger: { public_key: string; secret_key: string }
let archive: { name: string; bytes: Uint8Array }
/** The same extension exported with `--sign` by a key the panel does not trust (signature.json names it). */
let strangers: { name: string; bytes: Uint8Array }

const sign = async (bytes: Uint8Array, secret: string) => Buffer.from(await ed.signAsync(bytes, Buffer.from(secret, "hex"))).toString("hex")

const form = (signature?: string, file = archive) => {
  const data = new FormData()
  data.append("archive", new Blob([new Uint8Array(file.bytes)]), file.name)
  if (signature !== undefined) data.append("signature", new Blob([signature]), `${archive.name}.sig`)
  return data
}

const servers: Array<{ server: RunningServer; cleanup: () => void }> = []

const serve = async (hostYaml: string, env: Record<string, string> = {}) => {
  const root = tempDir("host-upload-policy-root-")
  writePanelConfig(root.path)
  mkdirSync(join(root.path, "config"), { recursive: true })
  writeFileSync(join(root.path, "config", "host.yaml"), hostYaml)
  const server = await startServer(root.path, { env })
  servers.push({ server, cleanup: root.cleanup })
  const api = (path: string) => `${server.url}/admin/host/api${path}`
  return { root: root.path, server, api }
}

beforeAll(async () => {
  trusted = JSON.parse((await runHost(["keygen", "--json"])).stdout) as typeof trusted
  stranger = JSON.parse((await runHost(["keygen", "--json"])).stdout) as typeof stranger
  const exported = await runHost(["export", fixture("runtime", "probe"), "--output", `${work.path}/`, "--json"])
  const file = (JSON.parse(exported.stdout) as { archive: string }).archive
  archive = { name: file.split("/").pop()!, bytes: readFileSync(file) }
  mkdirSync(join(work.path, "stranger"))
  const signed = await runHost(["export", fixture("runtime", "probe"), "--sign", "--output", `${work.path}/stranger/`, "--json"], {
    env: { HOST_SECRET_KEY: stranger.secret_key }
  })
  const signedFile = (JSON.parse(signed.stdout) as { archive: string }).archive
  strangers = { name: signedFile.split("/").pop()!, bytes: readFileSync(signedFile) }
}, 60_000)

afterAll(async () => {
  for (const { cleanup, server } of servers.splice(0)) {
    await server.stop()
    cleanup()
  }
  work.cleanup()
})

describe("admin_uploads", () => {
  it("defaults to signed when require_signatures is on, else any; an explicit setting wins", () => {
    const policy = (document: unknown) => {
      const decoded = decodeConfig(document, {}, "config/host.yaml")
      if (Either.isLeft(decoded)) throw new Error(decoded.left.message)
      return uploadPolicyOf(decoded.right.config)
    }
    expect(policy({})).toEqual({ setting: "any", from: "default" })
    expect(policy({ require_signatures: true })).toEqual({ setting: "signed", from: "require_signatures" })
    expect(policy({ require_signatures: true, admin_uploads: "any" })).toEqual({ setting: "any", from: "admin_uploads" })
    expect(policy({ admin_uploads: "off" })).toEqual({ setting: "off", from: "admin_uploads" })
  })

  it("any: an unsigned archive previews and installs; the preview says which policy decided", async () => {
    const { api } = await serve("{}\n")
    const preview = await request(api("/extensions/preview"), { as: "admin", method: "POST", body: form() })
    expect(preview.status, preview.text).toBe(200)
    expect(preview.json).toMatchObject({
      data: {
        installable: true,
        upload_policy: { setting: "any", from: "default", ok: true, detail: expect.stringContaining(`admin_uploads is "any" (unset)`) },
        checks: expect.arrayContaining([{ check: "upload policy", ok: true, detail: expect.any(String) }])
      }
    })
    const installed = await request(api("/extensions"), { as: "admin", method: "POST", body: form() })
    expect(installed.status, installed.text).toBe(201)
  })

  it("signed: refuses unsigned and untrusted archives with 403 naming the setting, accepts a trusted signature; the CLI keeps its rules", async () => {
    const { api, root } = await serve("admin_uploads: signed\n", { HOST_PUBLIC_KEY: trusted.public_key })
    const unsigned = await request(api("/extensions"), { as: "admin", method: "POST", body: form() })
    expect(unsigned.status, unsigned.text).toBe(403)
    expect(unsigned.json).toMatchObject({
      errors: [{ code: "UploadPolicy", detail: expect.stringMatching(/^admin_uploads is "signed": .* is not signed by a trusted key .*nothing was changed$/) }]
    })

    // A detached signature by another key verifies against no trusted key.
    const detached = await request(api("/extensions"), { as: "admin", method: "POST", body: form(await sign(archive.bytes, stranger.secret_key)) })
    expect(detached.status, detached.text).toBe(403)
    expect(detached.json).toMatchObject({ errors: [{ code: "UploadPolicy", detail: expect.stringContaining("matches no key in the keyring") }] })
    // An embedded signature names its key: valid, but not one this panel trusts.
    const untrusted = await request(api("/extensions"), { as: "admin", method: "POST", body: form(undefined, strangers) })
    expect(untrusted.status, untrusted.text).toBe(403)
    expect(untrusted.json).toMatchObject({
      errors: [{ code: "UploadPolicy", detail: expect.stringContaining(`signed by a key this panel does not trust (${stranger.public_key.slice(0, 16)}…)`) }]
    })
    expect((await request(api("/extensions"), { as: "admin" })).json).toEqual({ data: [] })

    // The preview answers, and shows the policy as the failing check.
    const preview = await request(api("/extensions/preview"), { as: "admin", method: "POST", body: form() })
    expect(preview.status, preview.text).toBe(200)
    expect(preview.json).toMatchObject({
      data: {
        installable: false,
        upload_policy: { setting: "signed", from: "admin_uploads", ok: false },
        refusal: { check: "upload policy", detail: expect.stringContaining("is not signed by a trusted key") }
      }
    })

    const signature = await sign(archive.bytes, trusted.secret_key)
    const trustedPreview = await request(api("/extensions/preview"), { as: "admin", method: "POST", body: form(signature) })
    expect(trustedPreview.json).toMatchObject({ data: { installable: true, signature: { status: "signed" }, upload_policy: { setting: "signed", ok: true } } })
    const accepted = await request(api("/extensions"), { as: "admin", method: "POST", body: form(signature) })
    expect(accepted.status, accepted.text).toBe(201)
    expect((await request(api("/extensions"), { as: "admin" })).json).toMatchObject({ data: [{ id: "acme/probe", signature: "signed" }] })

    // On the server's shell the CLI's own rules apply: require_signatures is off, so unsigned installs.
    const cli = await runHost(["add", fixture("extensions", "hello-world"), "--root", root])
    expect(cli.code, cli.stderr).toBe(0)
  })

  it("off: every upload endpoint answers 403 naming the setting, before reading the archive; the page hides the upload", async () => {
    const { api, root, server } = await serve("admin_uploads: off\n")
    for (const path of ["/extensions", "/extensions/preview", "/extensions/acme/probe/update"]) {
      const answer = await request(api(path), { as: "admin", method: "POST", body: form() })
      expect(answer.status, `${path}: ${answer.text}`).toBe(403)
      expect(answer.json).toMatchObject({ errors: [{ code: "UploadsOff", detail: expect.stringMatching(/^admin_uploads is "off": .*host add <file>/) }] })
    }
    // Non-admins are still told they are not admins first.
    expect((await request(api("/extensions"), { as: "alice", method: "POST", body: form() })).status).toBe(403)
    expect((await request(api("/extensions"), { method: "POST", body: form() })).status).toBe(401)
    const page = await request(`${server.url}/admin/host/extensions`, { as: "admin" })
    expect(page.text).toContain(`"uploads":"off"`)
    // Nothing was received into the uploads folder or installed.
    expect((await request(api("/extensions"), { as: "admin" })).json).toEqual({ data: [] })
    expect((await runHost(["status", "--json", "--root", root])).stdout).toContain(`"uploads": []`)
  })
})
