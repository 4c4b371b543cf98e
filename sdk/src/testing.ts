// @host/sdk/testing: boot one extension on a temporary panel and call its routes as a given user, so an
// author's test is a few lines (docs/authoring.md, "Testing"):
//
//   const host = await bootExtension({ path: new URL("..", import.meta.url) })
//   const response = await host.as("alice").get("/hello")      // an api-client route
//   expect(response.status).toBe(200)
//   await host.close()
//
// Nothing is faked: the harness writes a panel root in a temporary folder (config/panel.yaml with three
// users and two servers, SQLite under storage/), installs the extension with the framework's own
// `host add` (so its manifest is validated and its migrations run, exactly as on a panel), starts
// `host serve` on 127.0.0.1 with a free port, and sends real HTTP requests.

import { type ChildProcess, spawn } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

export interface TestUser {
  readonly id: number
  readonly username: string
  readonly email: string
  readonly admin: boolean
}

export interface TestServer {
  readonly uuid: string
  readonly name: string
  /** A username from `users`. */
  readonly owner: string
  readonly subusers?: ReadonlyArray<{ readonly user: string; readonly permissions: ReadonlyArray<string> }>
}

/** admin (a panel admin), alice (owns srv-alice), bob (owns srv-bob). */
export const defaultUsers: ReadonlyArray<TestUser> = [
  { id: 1, username: "admin", email: "admin@example.test", admin: true },
  { id: 2, username: "alice", email: "alice@example.test", admin: false },
  { id: 3, username: "bob", email: "bob@example.test", admin: false }
]

export const defaultServers: ReadonlyArray<TestServer> = [
  { uuid: "srv-alice", name: "Alice's server", owner: "alice" },
  { uuid: "srv-bob", name: "Bob's server", owner: "bob" }
]

export interface BootOptions {
  /** The extension folder (a path or a file: URL; `new URL("..", import.meta.url)` from a test in tests/). */
  readonly path: string | URL
  readonly users?: ReadonlyArray<TestUser>
  readonly servers?: ReadonlyArray<TestServer>
  /** Settings values saved (and validated) through the admin API before the test starts. */
  readonly settings?: Readonly<Record<string, unknown>>
  /** How long installing and starting may take (default 30 s). */
  readonly timeoutMs?: number
}

export interface TestResponse<Body = unknown> {
  readonly status: number
  readonly headers: Headers
  /** The JSON body decoded, or the text when it is not JSON. */
  readonly body: Body
  readonly text: string
}

export interface RouteClient {
  get<Body = unknown>(path: string): Promise<TestResponse<Body>>
  delete<Body = unknown>(path: string): Promise<TestResponse<Body>>
  post<Body = unknown>(path: string, body?: unknown): Promise<TestResponse<Body>>
  put<Body = unknown>(path: string, body?: unknown): Promise<TestResponse<Body>>
  patch<Body = unknown>(path: string, body?: unknown): Promise<TestResponse<Body>>
}

/** Requests as one user: the methods call api-client routes; `admin` and `web` call the other groups. */
export interface UserClient extends RouteClient {
  readonly user: TestUser
  /** `admin` routes (`/admin/host/<vendor>/<name>/…`), through a signed-in session like a browser's. */
  readonly admin: RouteClient
  /** `web` routes (`/host/<vendor>/<name>/…`), through the same session. */
  readonly web: RouteClient
}

export interface TestHost {
  /** The extension's id, read from its manifest by the panel. */
  readonly extensionId: string
  /** `http://127.0.0.1:<port>` of the running panel. */
  readonly url: string
  /** The temporary panel root (removed by close). */
  readonly root: string
  /** Requests as `username`. */
  as(username: string): UserClient
  /** Requests without any user (to check that routes refuse them). */
  readonly anonymous: RouteClient
  /** Runs `host <args>` on the test panel (`list --json`, `migrate:status <id>`, an extension command…). */
  cli(...args: ReadonlyArray<string>): Promise<{ readonly code: number; readonly stdout: string; readonly stderr: string }>
  /** Stops the server and removes the panel root. */
  close(): Promise<void>
}

const frameworkBin = fileURLToPath(new URL("../../bin/host.js", import.meta.url))

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

const childEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  // The panel's own HOST_* settings of the author's shell must not leak into the test panel.
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("HOST_")) env[key] = value
  env.NO_COLOR = "1"
  return env
}

const runHost = (root: string, args: ReadonlyArray<string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolvePromise, reject) => {
    const child = spawn(process.execPath, [frameworkBin, "--root", root, ...args], { env: childEnv() })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.on("error", reject)
    child.on("close", (code) => resolvePromise({ code: code ?? -1, stdout, stderr }))
  })

const yamlString = (value: string) => JSON.stringify(value)

const panelYaml = (users: ReadonlyArray<TestUser>, servers: ReadonlyArray<TestServer>, tokens: ReadonlyMap<string, string>) =>
  [
    "panel:",
    "  name: Test Panel",
    "  version: 1.11.0",
    "  php: 8.2.0",
    "users:",
    ...users.map((user) =>
      `  - { id: ${user.id}, username: ${yamlString(user.username)}, email: ${yamlString(user.email)}, admin: ${user.admin}, token_sha256: ${
        sha256(tokens.get(user.username)!)
      } }`
    ),
    "servers:",
    ...servers.flatMap((server) => [
      `  - uuid: ${yamlString(server.uuid)}`,
      `    name: ${yamlString(server.name)}`,
      `    owner: ${yamlString(server.owner)}`,
      ...(server.subusers === undefined || server.subusers.length === 0 ? [] : [
        "    subusers:",
        ...server.subusers.map((sub) => `      - { user: ${yamlString(sub.user)}, permissions: ${JSON.stringify(sub.permissions)} }`)
      ])
    ]),
    ""
  ].join("\n")

const startServer = (root: string, timeoutMs: number) =>
  new Promise<{ url: string; child: ChildProcess; stderr: () => string }>((resolvePromise, reject) => {
    const child = spawn(process.execPath, [frameworkBin, "--root", root, "serve", "--listen", "127.0.0.1", "--port", "0", "--poll-ms", "200"], {
      env: childEnv(),
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`@host/sdk/testing: host serve did not start within ${timeoutMs} ms:\n${stderr}`))
    }, timeoutMs)
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
      const match = /Listening on (http:\/\/\S+)/.exec(stdout)
      if (match !== null) {
        clearTimeout(timer)
        resolvePromise({ url: match[1]!, child, stderr: () => stderr })
      }
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`@host/sdk/testing: host serve exited with ${code}:\n${stderr}`))
    })
  })

const decode = async <Body>(response: Response): Promise<TestResponse<Body>> => {
  const text = await response.text()
  let body: unknown = text
  if ((response.headers.get("content-type") ?? "").includes("json") && text !== "") {
    try {
      body = JSON.parse(text)
    } catch {
      body = text
    }
  }
  return { status: response.status, headers: response.headers, body: body as Body, text }
}

/** Boots the extension at `options.path` on a fresh temporary panel. */
export const bootExtension = async (options: BootOptions): Promise<TestHost> => {
  const folder = options.path instanceof URL ? fileURLToPath(options.path) : resolve(options.path)
  const users = options.users ?? defaultUsers
  const servers = options.servers ?? defaultServers
  const timeoutMs = options.timeoutMs ?? 30_000
  const tokens = new Map(users.map((user) => [user.username, `host_test_${randomBytes(16).toString("hex")}`]))
  const root = mkdtempSync(join(tmpdir(), "host-sdk-testing-"))
  let server: { url: string; child: ChildProcess; stderr: () => string } | undefined
  const cleanup = async () => {
    const child = server?.child
    if (child !== undefined && child.exitCode === null) {
      await new Promise<void>((done) => {
        const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
        child.once("exit", () => {
          clearTimeout(timer)
          done()
        })
        child.kill("SIGTERM")
      })
    }
    rmSync(root, { recursive: true, force: true })
  }
  try {
    mkdirSync(join(root, "config"), { recursive: true })
    writeFileSync(join(root, "config", "panel.yaml"), panelYaml(users, servers, tokens))
    const added = await runHost(root, ["add", folder, "--json"])
    if (added.code !== 0) throw new Error(`@host/sdk/testing: installing ${folder} failed:\n${added.stderr.trim()}`)
    const installed = JSON.parse(added.stdout) as { readonly id?: string }
    const extensionId = installed.id ?? ""
    server = await startServer(root, timeoutMs)
    const url = server.url
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const ready = await fetch(`${url}/host/ready`).catch(() => undefined)
      if (ready?.status === 200) break
      if (Date.now() > deadline) throw new Error(`@host/sdk/testing: the panel was not ready within ${timeoutMs} ms:\n${server.stderr()}`)
      await new Promise((done) => setTimeout(done, 25))
    }

    const prefixes = {
      "api-client": `/api/client/host/${extensionId}`,
      admin: `/admin/host/${extensionId}`,
      web: `/host/${extensionId}`
    } as const
    const routeUrl = (prefix: string, path: string) => `${url}${prefix}${path.startsWith("/") || path === "" ? path : `/${path}`}`

    const client = (prefix: string, headers: () => Promise<Record<string, string>>): RouteClient => {
      const send = async <Body>(method: string, path: string, body?: unknown) =>
        decode<Body>(
          await fetch(routeUrl(prefix, path), {
            method,
            headers: {
              accept: "application/json",
              ...(body === undefined ? {} : { "content-type": "application/json" }),
              ...(await headers())
            },
            ...(body === undefined ? {} : { body: JSON.stringify(body) })
          })
        )
      return {
        get: (path) => send("GET", path),
        delete: (path) => send("DELETE", path),
        post: (path, body) => send("POST", path, body),
        put: (path, body) => send("PUT", path, body),
        patch: (path, body) => send("PATCH", path, body)
      }
    }

    // The admin and web groups take the panel's session cookie, as a browser would: one sign-in per user.
    const sessions = new Map<string, Promise<Record<string, string>>>()
    const session = (user: TestUser) => {
      const existing = sessions.get(user.username)
      if (existing !== undefined) return existing
      const created = (async () => {
        const response = await fetch(`${url}/auth/login`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify({ username: user.username, token: tokens.get(user.username) })
        })
        const text = await response.text()
        if (response.status !== 200) throw new Error(`@host/sdk/testing: signing in ${user.username} failed (${response.status}): ${text}`)
        const cookie = (response.headers.getSetCookie?.() ?? [response.headers.get("set-cookie") ?? ""])
          .map((line) => line.split(";")[0]!)
          .filter((line) => line !== "")
          .join("; ")
        const csrf = (JSON.parse(text) as { data?: { csrfToken?: string } }).data?.csrfToken ?? ""
        return { cookie, "x-csrf-token": csrf }
      })()
      sessions.set(user.username, created)
      return created
    }

    const as = (username: string): UserClient => {
      const user = users.find((candidate) => candidate.username === username)
      if (user === undefined) {
        throw new Error(`@host/sdk/testing: no user ${username}; the test panel has ${users.map((u) => u.username).join(", ")}`)
      }
      const bearer = async () => ({ authorization: `Bearer ${tokens.get(username)}` })
      return {
        user,
        ...client(prefixes["api-client"], bearer),
        admin: client(prefixes.admin, () => session(user)),
        web: client(prefixes.web, () => session(user))
      }
    }

    if (options.settings !== undefined) {
      const admin = users.find((user) => user.admin)
      if (admin === undefined) throw new Error("@host/sdk/testing: settings need an admin user among users")
      const saved = await client(`/admin/host/api/extensions/${extensionId}`, async () => ({
        authorization: `Bearer ${tokens.get(admin.username)}`
      })).put("/settings", options.settings)
      if (saved.status >= 300) throw new Error(`@host/sdk/testing: saving settings failed (${saved.status}): ${saved.text}`)
    }

    return {
      extensionId,
      url,
      root,
      as,
      anonymous: client(prefixes["api-client"], async () => ({})),
      cli: (...args) => runHost(root, args),
      close: cleanup
    }
  } catch (error) {
    await cleanup()
    throw error
  }
}
