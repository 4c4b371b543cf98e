import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterEach } from "vitest"
import { fixture, runHost, tempDir } from "../support/cli.js"

// A registry built at run time: archives made by the real `host export` from fixtures/ (copied with
// another version where a test needs several), a registry.json listing them, served as file:// and by a
// real HTTP server on 127.0.0.1:0.

export interface BuiltArchive {
  readonly id: string
  readonly version: string
  /** File name `<vendor>-<name>-<version>.host`. */
  readonly name: string
  readonly file: string
  readonly sha256: string
  readonly bytes: number
}

export interface ArchiveSpec {
  /** A folder under fixtures/extensions. */
  readonly fixture: string
  /** Rewrites the manifest's version (the copy is exported). */
  readonly version?: string
}

const key = (id: string, version: string) => `${id}@${version}`

/** Exports each spec with `host export` into `<dir>/archives/` and returns what was made, by `id@version`. */
export const exportArchives = async (
  dir: string,
  specs: ReadonlyArray<ArchiveSpec>,
  env: Readonly<Record<string, string>> = {},
  sign = false
): Promise<ReadonlyMap<string, BuiltArchive>> => {
  const archives = join(dir, "archives")
  mkdirSync(archives, { recursive: true })
  const built = new Map<string, BuiltArchive>()
  for (const spec of specs) {
    let source = fixture("extensions", spec.fixture)
    if (spec.version !== undefined) {
      const copy = join(dir, "sources", `${spec.fixture}-${spec.version}`)
      cpSync(source, copy, { recursive: true })
      const manifest = join(copy, "extension.yaml")
      writeFileSync(manifest, readFileSync(manifest, "utf8").replace(/^version: .*$/m, `version: ${spec.version}`))
      source = copy
    }
    const run = await runHost(["export", source, "--output", `${archives}/`, "--json", ...(sign ? ["--sign"] : [])], { env })
    if (run.code !== 0) throw new Error(`host export ${source} failed: ${run.stderr}`)
    const result = JSON.parse(run.stdout) as { id: string; version: string; archive: string; sha256: string; bytes: number }
    const name = result.archive.split("/").pop()!
    built.set(key(result.id, result.version), { id: result.id, version: result.version, name, file: result.archive, sha256: result.sha256, bytes: result.bytes })
  }
  return built
}

export interface EntryOptions {
  /** Which of the built versions to list (default: all). */
  readonly versions?: ReadonlyArray<string>
  readonly latest?: string
  readonly archive_url?: string
  readonly sha256?: string | Readonly<Record<string, string>> | null
  readonly extra?: Readonly<Record<string, unknown>>
}

/** A registry entry for every version of `id` among the archives (archive_url relative to the index). */
export const entryFor = (archives: ReadonlyMap<string, BuiltArchive>, id: string, options: EntryOptions = {}) => {
  const versions = [...archives.values()]
    .filter((archive) => archive.id === id && (options.versions === undefined || options.versions.includes(archive.version)))
    .map((archive) => archive.version)
  const latest = options.latest ?? versions.sort((a, b) => a.localeCompare(b, undefined, { numeric: true })).at(-1)!
  const sha256 = options.sha256 === undefined
    ? Object.fromEntries(versions.map((version) => [version, archives.get(key(id, version))!.sha256]))
    : options.sha256
  return {
    id,
    name: id === "acme/hello-world" ? "Hello World" : id === "acme/full" ? "Full Example" : id,
    description: id === "acme/hello-world" ? "A dashboard widget that says hello." : "Uses every manifest section.",
    repository: `https://example.invalid/${id}`,
    latest_version: latest,
    versions,
    license: "MIT",
    authors: [{ name: "Acme Developers", email: "dev@acme.test" }],
    tags: id === "acme/full" ? ["Reference", "widgets"] : ["greeting"],
    requires: {},
    dependencies: id === "acme/full" ? { "acme/hello-world": "^1.0" } : {},
    archive_url: options.archive_url ?? "archives/{archive}",
    ...(sha256 === null ? {} : { sha256 }),
    ...options.extra
  }
}

/** Writes `<dir>/registry.json` (an object, or raw text) and returns the file:// URL of the registry. */
export const writeIndex = (dir: string, index: unknown): string => {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "registry.json"), typeof index === "string" ? index : `${JSON.stringify(index, null, 2)}\n`)
  return pathToFileURL(dir).href
}

export const index = (extensions: ReadonlyArray<unknown>) => ({ version: "1.0", updated_at: "2026-01-01T00:00:00Z", extensions })

export type Handler = (request: IncomingMessage, response: ServerResponse) => void

/** An http:// registry URL on 127.0.0.1 where nothing listens: a port taken from :0, then given back. */
export const unreachableRegistryUrl = (): Promise<string> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close((error) => (error === undefined ? resolve(`http://127.0.0.1:${port}`) : reject(error)))
    })
  })

export interface ServedRegistry {
  readonly url: string
  /** Paths requested so far. */
  readonly requests: Array<string>
  readonly close: () => Promise<void>
}

/**
 * Serves `dir` on 127.0.0.1:0 (with Content-Length); `routes` overrides paths (`/registry.json`, …)
 * with handlers that answer 404, 500, nothing at all, or a chunked body.
 */
export const serveRegistry = (dir: string, routes: Readonly<Record<string, Handler>> = {}): Promise<ServedRegistry> =>
  new Promise((resolve) => {
    const requests: Array<string> = []
    const server = createServer((request, response) => {
      const path = decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname)
      requests.push(path)
      const route = routes[path]
      if (route !== undefined) return route(request, response)
      try {
        const body = readFileSync(join(dir, ...path.split("/").filter((part) => part !== "" && part !== "..")))
        response.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length })
        response.end(body)
      } catch {
        response.writeHead(404, { "content-type": "text/plain" })
        response.end("not found")
      }
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

export const status = (code: number): Handler => (_request, response) => {
  response.writeHead(code, { "content-type": "text/plain" })
  response.end(`status ${code}`)
}

export const jsonBody = (value: unknown): Handler => (_request, response) => {
  const body = JSON.stringify(value)
  response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  response.end(body)
}

/** Accepts the request and never answers. */
export const silent: Handler = () => {}

/** Sends `body` without Content-Length (chunked). */
export const chunked = (body: Uint8Array): Handler => (_request, response) => {
  response.writeHead(200, { "content-type": "application/octet-stream" })
  for (let offset = 0; offset < body.length; offset += 256) response.write(body.subarray(offset, offset + 256))
  response.end()
}

/** A panel root whose config/host.yaml holds `yaml`. */
export const writeConfig = (root: string, yaml: string): void => {
  mkdirSync(join(root, "config"), { recursive: true })
  writeFileSync(join(root, "config", "host.yaml"), yaml)
}

/** `temp(prefix)` and `serve(dir)` whose folders and servers are removed after each test of the calling file. */
export const perTestRegistry = () => {
  const cleanups: Array<() => void | Promise<void>> = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup()
  })
  return {
    temp: (prefix: string) => {
      const dir = tempDir(prefix)
      cleanups.push(dir.cleanup)
      return dir.path
    },
    serve: async (dir: string, routes: Readonly<Record<string, Handler>> = {}) => {
      const served = await serveRegistry(dir, routes)
      cleanups.push(served.close)
      return served
    }
  }
}
