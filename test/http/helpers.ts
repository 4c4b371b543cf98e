import { type ChildProcess, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll } from "vitest"
import { hostBin, runHost, tempDir } from "../support/cli.js"
import { type ExtensionSpec, writeExtension } from "../support/extensions.js"
import { until } from "../support/wait.js"

// Real `host serve` processes on 127.0.0.1:0 for the HTTP tests, a panel.yaml with known tokens, and
// a small fetch helper. Every wait is bounded.

export const tokens = {
  admin: "host_test_admin_token",
  alice: "host_test_alice_token",
  bob: "host_test_bob_token",
  carol: "host_test_carol_token",
  dave: "host_test_dave_token"
} as const
export type PanelUserName = keyof typeof tokens

const sha = (text: string) => createHash("sha256").update(text).digest("hex")

/**
 * admin (panel admin), alice (owns srv-alice), bob (subuser of srv-alice with probe.view),
 * carol (subuser of srv-alice without permissions), dave (a user without servers).
 */
export const writePanelConfig = (root: string, extra = "") => {
  mkdirSync(join(root, "config"), { recursive: true })
  writeFileSync(
    join(root, "config", "panel.yaml"),
    `panel:
  name: Test Panel
  version: 1.11.0
  php: 8.2.0
users:
  - { id: 1, username: admin, email: admin@example.test, admin: true, token_sha256: ${sha(tokens.admin)} }
  - { id: 2, username: alice, email: alice@example.test, token_sha256: ${sha(tokens.alice)} }
  - { id: 3, username: bob, email: bob@example.test, token_sha256: ${sha(tokens.bob)} }
  - { id: 4, username: carol, email: carol@example.test, token_sha256: ${sha(tokens.carol)} }
  - { id: 5, username: dave, email: dave@example.test, token_sha256: ${sha(tokens.dave)} }
servers:
  - uuid: srv-alice
    name: Alice's server
    owner: alice
    subusers:
      - { user: bob, permissions: [probe.view] }
      - { user: carol, permissions: [] }
  - uuid: srv-other
    name: Someone else's server
    owner: 1
${extra}`
  )
}

/** `host add <source>` in the root, failing the test if it fails. */
export const install = async (root: string, source: string, ...flags: ReadonlyArray<string>) => {
  const run = await runHost(["--root", root, "add", source, ...flags])
  if (run.code !== 0) throw new Error(`host add ${source} failed: ${run.stderr}`)
  return run
}

export interface RunningServer {
  readonly url: string
  readonly process: ChildProcess
  readonly stderr: () => string
  readonly stop: () => Promise<void>
}

/** Starts `host serve --port 0` in `root` and waits for /host/ready (at most `timeoutMs`). */
export const startServer = async (
  root: string,
  options: {
    readonly env?: Readonly<Record<string, string>>
    readonly timeoutMs?: number
    readonly pollMs?: number
    /** Runs the server under this host name (a UTS namespace of its own: `unshare -u`, needs root), as on another machine. */
    readonly hostname?: string
    /** Another copy of `bin/host.js` to run (the repository's by default). */
    readonly bin?: string
    /** false: return once it listens, without waiting for /host/ready to answer 200. */
    readonly waitReady?: boolean
  } = {}
): Promise<RunningServer> => {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("HOST_")) env[key] = value
  Object.assign(env, { NO_COLOR: "1" }, options.env)
  const argv = [options.bin ?? hostBin, "--root", root, "serve", "--port", "0", "--poll-ms", String(options.pollMs ?? 250)]
  // `exec` keeps one process: the pid the test kills is the server's.
  const child = options.hostname === undefined
    ? spawn(process.execPath, argv, { env, stdio: ["ignore", "pipe", "pipe"] })
    : spawn("unshare", ["-u", "sh", "-c", 'hostname "$0" && exec "$@"', options.hostname, process.execPath, ...argv], {
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
  let stdout = ""
  let stderr = ""
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
  const timeoutMs = options.timeoutMs ?? 20_000
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`host serve did not listen within ${timeoutMs} ms: ${stderr}`)), timeoutMs)
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
      const match = /Listening on (http:\/\/\S+)/.exec(stdout)
      if (match !== null) {
        clearTimeout(timer)
        resolve(match[1]!)
      }
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`host serve exited with ${code}: ${stderr}`))
    })
  })
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
      child.once("exit", () => {
        clearTimeout(timer)
        resolve()
      })
      child.kill("SIGTERM")
    })
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (options.waitReady === false) break
    const response = await fetch(`${url}/host/ready`).catch(() => undefined)
    if (response?.status === 200) break
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`host serve was not ready within ${timeoutMs} ms: ${stderr}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { url, process: child, stderr: () => stderr, stop }
}

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: unknown
}

/** One request as `user` (a Bearer token), or with a cookie; the body read and parsed when JSON. */
export const request = async (
  url: string,
  options: {
    readonly as?: PanelUserName
    readonly method?: string
    readonly body?: unknown
    readonly headers?: Readonly<Record<string, string>>
  } = {}
): Promise<Answer> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.as !== undefined) headers.authorization = `Bearer ${tokens[options.as]}`
  let body: string | FormData | null = null
  if (options.body instanceof FormData) body = options.body
  else if (options.body !== undefined) {
    headers["content-type"] ??= "application/json"
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body)
  }
  const response = await fetch(url, { method: options.method ?? "GET", headers, body, redirect: "manual" })
  const text = await response.text()
  let json: unknown = undefined
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json }
}

/** Polls `check` until it is true or `timeoutMs` passes; returns how long it took. */
export const waitFor = async (check: () => Promise<boolean>, timeoutMs: number): Promise<number> => {
  const started = Date.now()
  await until(check, "the condition", timeoutMs)
  return Date.now() - started
}

/**
 * For a test file: one extension installed in a fresh panel root (writePanelConfig) and `host serve` started
 * on it before the file's tests, stopped and removed after them. The running server is read through the
 * function returned.
 */
export const serveOneExtension = (name: string, extension: ExtensionSpec): (() => RunningServer) => {
  const root = tempDir(`host-${name}-`)
  const work = tempDir(`host-${name}-work-`)
  let server: RunningServer | undefined
  beforeAll(async () => {
    writePanelConfig(root.path)
    await install(root.path, writeExtension(work.path, extension))
    server = await startServer(root.path)
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
    root.cleanup()
    work.cleanup()
  })
  return () => {
    if (server === undefined) throw new Error(`the ${name} server has not started`)
    return server
  }
}
