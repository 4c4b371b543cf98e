import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { fixture, type HostRun, repoRoot, runHost, tempDir } from "../support/cli.js"
import { cleanupAll, everything, fixtureCopy, freshDir } from "./helpers.js"

// `host export`, `host keygen`, `host verify` and the SDK's `host-pack` / `host-keygen`, run as the
// built binaries (node scripts/build.mjs).

afterEach(cleanupAll)

const sdkBin = (name: string) => join(repoRoot, "sdk", "dist", "bin", `${name}.js`)

const runSdk = (
  name: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly env?: Readonly<Record<string, string>> } = {}
): Promise<HostRun> =>
  new Promise((resolve, reject) => {
    const env: Record<string, string> = {}
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("HOST_")) env[key] = value
    const child = spawn(sdkBin(name), [...args], { cwd: options.cwd ?? repoRoot, env: { ...env, ...options.env } })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }))
  })

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex")

interface Keys {
  readonly public_key: string
  readonly secret_key: string
}

let keys: Keys
beforeAll(async () => {
  const run = await runHost(["keygen", "--json"])
  keys = JSON.parse(run.stdout) as Keys
})

/** A panel root whose config trusts `publicKey` (and optionally requires signatures). */
const panelRoot = (config: string): string => {
  const root = freshDir("host-root-")
  mkdirSync(join(root, "config"))
  writeFileSync(join(root, "config", "host.yaml"), config)
  return root
}

describe("host keygen", () => {
  it("--json prints exactly {public_key, secret_key} as hex", async () => {
    const run = await runHost(["keygen", "--json"])
    expect(run.code).toBe(0)
    expect(run.stderr).toBe("")
    const parsed = JSON.parse(run.stdout)
    expect(Object.keys(parsed)).toEqual(["public_key", "secret_key"])
    expect(parsed.public_key).toMatch(/^[0-9a-f]{64}$/)
    expect(parsed.secret_key).toMatch(/^[0-9a-f]{64}$/)
    expect(parsed.public_key).not.toBe(keys.public_key)
  })

  it("prints both keys and the config and environment lines to use them", async () => {
    const run = await runHost(["keygen"])
    expect(run.code).toBe(0)
    const publicKey = /^Public key: ([0-9a-f]{64})$/m.exec(run.stdout)![1]!
    const secretKey = /^Secret key: ([0-9a-f]{64})$/m.exec(run.stdout)![1]!
    expect(run.stdout).toContain(`  public_key: "${publicKey}"`)
    expect(run.stdout).toContain(`  HOST_PUBLIC_KEY=${publicKey}`)
    expect(run.stdout).toContain(`  HOST_SECRET_KEY=${secretKey} host export --sign`)
  })
})

describe("host export", () => {
  it("writes <vendor>-<name>-<version>.host and its .sha256 in the current folder by default", async () => {
    const cwd = freshDir()
    const run = await runHost(["export", fixture("extensions", "hello-world")], { cwd })
    expect(run.code).toBe(0)
    expect(run.stdout).toContain("Exported acme/hello-world 1.0.0: 4 files")
    expect(everything(cwd)).toEqual(["acme-hello-world-1.0.0.host", "acme-hello-world-1.0.0.host.sha256"])
    const archive = readFileSync(join(cwd, "acme-hello-world-1.0.0.host"))
    expect(readFileSync(join(cwd, "acme-hello-world-1.0.0.host.sha256"), "utf8")).toBe(
      `${sha256(archive)}  acme-hello-world-1.0.0.host\n`
    )
  })

  it("exports the current folder when no path is given, and re-exports the same bytes", async () => {
    const root = fixtureCopy("full")
    const first = await runHost(["export"], { cwd: root })
    expect(first.code).toBe(0)
    const bytes = readFileSync(join(root, "acme-full-1.2.0.host"))
    // the archive now sits in the tree: it is excluded, so a second export gives the same bytes
    const second = await runHost(["export", "--json"], { cwd: root })
    expect(JSON.parse(second.stdout)).toMatchObject({ id: "acme/full", version: "1.2.0", sha256: sha256(bytes), key: null })
    expect(Buffer.compare(readFileSync(join(root, "acme-full-1.2.0.host")), bytes)).toBe(0)
  })

  it("takes --output as a file path, an existing folder, or a new folder ending in /", async () => {
    const dir = freshDir()
    mkdirSync(join(dir, "existing"))
    const asFile = await runHost(["export", fixture("extensions", "hello-world"), "--output", join(dir, "custom.host")])
    expect(asFile.code).toBe(0)
    expect(readFileSync(join(dir, "custom.host.sha256"), "utf8")).toMatch(/^[0-9a-f]{64} {2}custom\.host\n$/)
    expect((await runHost(["export", fixture("extensions", "hello-world"), `--output=${join(dir, "existing")}`])).code).toBe(0)
    expect((await runHost(["export", fixture("extensions", "hello-world"), "--output", "fresh/nested/"], { cwd: dir })).code).toBe(0)
    expect(everything(dir)).toEqual([
      "custom.host",
      "custom.host.sha256",
      "existing",
      "existing/acme-hello-world-1.0.0.host",
      "existing/acme-hello-world-1.0.0.host.sha256",
      "fresh",
      "fresh/nested",
      "fresh/nested/acme-hello-world-1.0.0.host",
      "fresh/nested/acme-hello-world-1.0.0.host.sha256"
    ])
  })

  it("--sign embeds signature.json and writes a detached .sig; host verify says signed", async () => {
    const out = freshDir()
    const run = await runHost(["export", fixture("extensions", "full"), "--sign", "--output", `${out}/`], {
      env: { HOST_SECRET_KEY: keys.secret_key }
    })
    expect(run.code).toBe(0)
    expect(run.stdout).toContain(`signature: ed25519 key ${keys.public_key}`)
    expect(everything(out)).toEqual(["acme-full-1.2.0.host", "acme-full-1.2.0.host.sha256", "acme-full-1.2.0.host.sig"])
    expect(readFileSync(join(out, "acme-full-1.2.0.host.sig"), "utf8")).toMatch(/^[0-9a-f]{128}\n$/)
    const root = panelRoot(`public_key: "${keys.public_key}"\n`)
    const verify = await runHost(["verify", join(out, "acme-full-1.2.0.host"), "--json", "--root", root])
    expect(verify.code).toBe(0)
    expect(JSON.parse(verify.stdout)).toEqual({ status: "signed", id: "acme/full", version: "1.2.0", files: 14, problems: [] })
    // an unsigned re-export removes the now stale .sig
    expect((await runHost(["export", fixture("extensions", "full"), "--output", `${out}/`])).code).toBe(0)
    expect(everything(out)).toEqual(["acme-full-1.2.0.host", "acme-full-1.2.0.host.sha256"])
  })

  it.each([
    [{}, "error: export: signing needs a secret key: HOST_SECRET_KEY is not set (create a key pair with host keygen)\n"],
    [{ HOST_SECRET_KEY: "c0ffee" }, "error: export: HOST_SECRET_KEY is not a valid Ed25519 key: a secret key is 64 or 128 hex characters (got 6 hex characters)\n"],
    [{ HOST_SECRET_KEY: "ab".repeat(64) }, "error: export: HOST_SECRET_KEY is not a valid Ed25519 key: its second half is not the public key of its first half (the seed)\n"]
  ])("--sign checks the secret key before writing anything (%j)", async (env, stderr) => {
    const cwd = freshDir()
    const run = await runHost(["export", fixture("extensions", "full"), "--sign", "--output", "out/"], { cwd, env })
    expect(run).toEqual({ code: 1, stdout: "", stderr })
    expect(everything(cwd)).toEqual([])
  })

  it("refuses an invalid manifest and writes nothing", async () => {
    const cwd = freshDir()
    const extension = join(cwd, "broken")
    cpSync(fixture("extensions", "hello-world"), extension, { recursive: true })
    writeFileSync(join(extension, "extension.yaml"), 'host: "1.0"\nid: Not Valid\nname: X\nversion: one\n')
    const run = await runHost(["export", "broken", "--output", "out/"], { cwd })
    expect(run.code).toBe(1)
    expect(run.stdout).toBe("")
    expect(run.stderr).toMatch(/^error: export: .*broken\/extension\.yaml: id: /)
    expect(everything(cwd).filter((path) => !path.startsWith("broken"))).toEqual([])
  })

  it("refuses a folder without extension.yaml", async () => {
    const cwd = freshDir()
    const run = await runHost(["export", "."], { cwd })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("extension.yaml: not found in")
    expect(everything(cwd)).toEqual([])
  })
})

describe("host verify", () => {
  let signedArchive: string
  let unsignedArchive: string
  const shared = tempDir("host-verify-")
  afterAll(shared.cleanup)
  beforeAll(async () => {
    const out = shared.path
    await runHost(["export", fixture("extensions", "full"), "--sign", "--output", `${out}/signed/`], {
      env: { HOST_SECRET_KEY: keys.secret_key }
    })
    await runHost(["export", fixture("extensions", "full"), "--output", `${out}/unsigned/`])
    signedArchive = join(out, "signed", "acme-full-1.2.0.host")
    unsignedArchive = join(out, "unsigned", "acme-full-1.2.0.host")
  })

  it("says untrusted (exit 0) when the key is not in the keyring, and names the key", async () => {
    const run = await runHost(["verify", signedArchive, "--root", freshDir()])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain(`Status:    untrusted (valid signature by key ${keys.public_key}, which is not in the keyring)`)
    expect(run.stdout).toContain("Extension: acme/full 1.2.0")
    expect(run.stdout).toContain("Files:     14")
  })

  it("trusts keys from trusted_keys and HOST_PUBLIC_KEY", async () => {
    const root = panelRoot(`trusted_keys:\n  - name: acme\n    public_key: "${keys.public_key}"\n`)
    const viaKeyring = await runHost(["verify", signedArchive, "--root", root])
    expect(viaKeyring.stdout).toContain(`Status:    signed (key ${keys.public_key}, trusted as "acme")`)
    const viaEnv = await runHost(["verify", signedArchive, "--json", "--root", freshDir()], { env: { HOST_PUBLIC_KEY: keys.public_key } })
    expect(JSON.parse(viaEnv.stdout).status).toBe("signed")
  })

  it("says unsigned (exit 0), and what require_signatures would do", async () => {
    const plain = await runHost(["verify", unsignedArchive, "--json", "--root", freshDir()])
    expect(plain.code).toBe(0)
    expect(JSON.parse(plain.stdout)).toEqual({ status: "unsigned", id: "acme/full", version: "1.2.0", files: 14, problems: [] })
    const strict = await runHost(["verify", unsignedArchive, "--json", "--root", panelRoot("require_signatures: true\n")])
    expect(strict.code).toBe(0)
    expect(JSON.parse(strict.stdout).problems).toEqual([
      { path: "require_signatures", message: "this panel would refuse to install it: it is not signed, and require_signatures is on" }
    ])
  })

  it("says invalid (exit 1) when the detached signature does not match the archive", async () => {
    const dir = freshDir()
    cpSync(signedArchive, join(dir, "a.host"))
    writeFileSync(join(dir, "a.host.sig"), `${"0".repeat(128)}\n`)
    const run = await runHost(["verify", join(dir, "a.host"), "--json", "--root", panelRoot(`public_key: "${keys.public_key}"\n`)])
    expect(run.code).toBe(1)
    const report = JSON.parse(run.stdout)
    expect(report.status).toBe("invalid")
    expect(report.problems[0].path).toBe("a.host.sig")
  })

  it("fails with one error line on a missing file", async () => {
    const run = await runHost(["verify", join(freshDir(), "nope.host")])
    expect(run.code).toBe(1)
    expect(run.stdout).toBe("")
    expect(run.stderr).toMatch(/^error: verify: cannot read .*nope\.host: no such file or directory\n$/)
  })
})

describe("@host/sdk bins", () => {
  it("host-pack writes the same bytes as host export, signed or not", async () => {
    for (const name of ["hello-world", "full"]) {
      const viaHost = freshDir()
      const viaSdk = freshDir()
      const env = { HOST_SECRET_KEY: keys.secret_key }
      const exported = await runHost(["export", fixture("extensions", name), "--sign"], { cwd: viaHost, env })
      expect(exported.code).toBe(0)
      const pack = await runSdk("host-pack", [fixture("extensions", name), "--sign"], { cwd: viaSdk, env })
      // The same validation's warnings as host export's (full's /stats route is guarded by a permission
      // without {server}: docs/authoring.md "Routes"), and nothing else.
      expect(pack.stderr).toBe(exported.stderr.split("\n").filter((line) => line.startsWith("warning:")).map((line) => `${line}\n`).join(""))
      expect(pack.code).toBe(0)
      expect(everything(viaSdk)).toEqual(everything(viaHost))
      for (const file of everything(viaHost)) {
        expect([file, Buffer.compare(readFileSync(join(viaSdk, file)), readFileSync(join(viaHost, file)))]).toEqual([file, 0])
      }
    }
  })

  it("host-pack --dry-run writes nothing; --secret-key signs; --output takes a file", async () => {
    const root = fixtureCopy("hello-world")
    const dry = await runSdk("host-pack", ["--dry-run", "--json"], { cwd: root })
    expect(dry.code).toBe(0)
    expect(JSON.parse(dry.stdout)).toMatchObject({ id: "acme/hello-world", written: false, key: null })
    expect(existsSync(join(root, "acme-hello-world-1.0.0.host"))).toBe(false)
    const out = freshDir()
    const signed = await runSdk("host-pack", [root, "--secret-key", keys.secret_key, "--output", join(out, "x.host")])
    expect(signed.code).toBe(0)
    expect(everything(out)).toEqual(["x.host", "x.host.sha256", "x.host.sig"])
    const bad = await runSdk("host-pack", [root, "--secret-key=123"], { cwd: out })
    expect(bad).toEqual({
      code: 1,
      stdout: "",
      stderr: "error: host-pack: --secret-key is not a valid Ed25519 key: a secret key is 64 or 128 hex characters (got 3 hex characters)\n"
    })
    expect((await runSdk("host-pack", ["--bogus"])).code).toBe(2)
  })

  it("host-keygen prints a key pair (text and --json)", async () => {
    const json = await runSdk("host-keygen", ["--json"])
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout)).toEqual({ public_key: expect.stringMatching(/^[0-9a-f]{64}$/), secret_key: expect.stringMatching(/^[0-9a-f]{64}$/) })
    const text = await runSdk("host-keygen", [])
    expect(text.stdout).toMatch(/HOST_SECRET_KEY=[0-9a-f]{64} host-pack --sign/)
  })
})
