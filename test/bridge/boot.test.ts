import { readFileSync } from "node:fs"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import { afterAll, beforeAll, expect, it } from "vitest"
import { fixture, repoRoot, tempDir } from "../support/cli.js"
import { install, request, type RunningServer, startServer, tokens, writePanelConfig } from "../http/helpers.js"
import { sessionCookie } from "../support/browser.js"

// GET /api/client/host/bootstrap and /host/boot.js over real HTTP (docs/frontend.md "/host/boot.js"):
// the bootstrap is the embedded shell's `window.__HOST__` (one builder), 401 signed out, with the
// panel's kind; boot.js is served and stays under 3 KB gzip, and carries the bootstrap inlined only for
// the panel's own page of a signed-in user.

const root = tempDir("host-boot-http-")
let server: RunningServer

beforeAll(async () => {
  writePanelConfig(root.path)
  await install(root.path, fixture("extensions", "hello-world"))
  await install(root.path, fixture("extensions", "full"))
  server = await startServer(root.path)
})

afterAll(async () => {
  await server?.stop()
  root.cleanup()
})

interface Bootstrap {
  readonly version: string
  readonly csrfToken: string | null
  readonly user: { readonly username: string }
  readonly server: { readonly uuid: string; readonly permissions: ReadonlyArray<string>; readonly isOwner: boolean } | null
  readonly panel: { readonly kind: string; readonly name: string; readonly version: string | null }
  readonly extensions: ReadonlyArray<{ readonly id: string; readonly bundle: string | null; readonly styles: string | null; readonly cssIsolation: unknown }>
  readonly slots: ReadonlyArray<string>
}

it("answers 401 with an error body signed out", async () => {
  const response = await request(`${server.url}/api/client/host/bootstrap`)
  expect(response.status).toBe(401)
  expect((response.json as { errors: Array<{ status: string }> }).errors[0]?.status).toBe("401")
})

it("is the embedded shell's window.__HOST__, built by the same function", async () => {
  const cookie = await sessionCookie(server.url, "alice")
  const headers = { cookie: `${cookie.name}=${cookie.value}` }
  const api = await fetch(`${server.url}/api/client/host/bootstrap?path=${encodeURIComponent("/server/srv-alice/files")}`, { headers })
  expect(api.status).toBe(200)
  expect(api.headers.get("cache-control")).toBe("no-store")
  const bootstrap = ((await api.json()) as { data: Bootstrap }).data
  const html = await (await fetch(`${server.url}/server/srv-alice/files`, { headers: { ...headers, accept: "text/html" } })).text()
  const shell = JSON.parse(/window\.__HOST__ = (.*?);<\/script>/.exec(html)![1]!) as Bootstrap
  expect(bootstrap).toEqual(shell)
  expect(bootstrap.panel).toEqual({ kind: "embedded", name: "Test Panel", version: "1.11.0" })
  expect(bootstrap.user.username).toBe("alice")
  expect(bootstrap.server).toMatchObject({ uuid: "srv-alice", isOwner: true })
  expect(bootstrap.csrfToken).toEqual(expect.any(String))
  expect(bootstrap.slots).toHaveLength(65)
  expect(bootstrap.extensions.map((extension) => extension.id).sort()).toEqual(["acme/full", "acme/hello-world"])
  // Without a path (or off the server area) there is no server; a server the user may not see is none either.
  const plain = ((await (await fetch(`${server.url}/api/client/host/bootstrap`, { headers: { authorization: `Bearer ${tokens.alice}` } })).json()) as { data: Bootstrap }).data
  expect(plain.server).toBeNull()
  expect(plain.csrfToken).toBeNull()
  const other = ((await (await fetch(`${server.url}/api/client/host/bootstrap?path=/server/srv-other`, { headers: { authorization: `Bearer ${tokens.alice}` } })).json()) as { data: Bootstrap }).data
  expect(other.server).toBeNull()
  // A server segment that is not valid percent-encoding names no server: 400 naming the field, asked of no panel.
  const undecodable = await fetch(`${server.url}/api/client/host/bootstrap?path=${encodeURIComponent("/server/%E0/files")}`, { headers: { authorization: `Bearer ${tokens.alice}` } })
  expect(undecodable.status).toBe(400)
  expect(((await undecodable.json()) as { errors: ReadonlyArray<{ code: string; detail: string }> }).errors).toEqual([
    expect.objectContaining({ code: "BadRequest", detail: `path: the server segment "%E0" is not valid percent-encoding` })
  ])
})

it("serves /host/boot.js and /host/vendor.js, boot.js at most 3 KB gzip", async () => {
  const boot = await fetch(`${server.url}/host/boot.js`)
  expect(boot.status).toBe(200)
  expect(boot.headers.get("content-type")).toContain("javascript")
  const body = Buffer.from(await boot.arrayBuffer())
  expect(body.equals(readFileSync(join(repoRoot, "dist/public/host/boot.js")))).toBe(true)
  expect(gzipSync(body, { level: 9 }).length).toBeLessThanOrEqual(3 * 1024)
  expect((await fetch(`${server.url}/host/vendor.js`)).status).toBe(200)
})

it("carries the signed-in caller's bootstrap for the page it is asked from, only for the panel's own page", async () => {
  const cookie = await sessionCookie(server.url, "alice")
  const plainBytes = readFileSync(join(repoRoot, "dist/public/host/boot.js"))
  const page = (path: string) => ({ cookie: `${cookie.name}=${cookie.value}`, "sec-fetch-site": "same-origin", referer: `${server.url}${path}` })
  const inlined = async (headers: Record<string, string>) => {
    const response = await fetch(`${server.url}/host/boot.js`, { headers })
    const body = Buffer.from(await response.arrayBuffer())
    return { response, body }
  }
  const files = await inlined(page("/server/srv-alice/files"))
  expect(files.response.status).toBe(200)
  expect(files.response.headers.get("content-type")).toContain("javascript")
  expect(files.response.headers.get("cache-control")).toBe("private, no-store")
  expect(files.response.headers.get("etag")).toBeNull()
  // One statement ahead of the unchanged script; it is the endpoint's answer for that path.
  const text = files.body.toString("utf8")
  expect(files.body.subarray(files.body.length - plainBytes.length).equals(plainBytes)).toBe(true)
  const statement = /^window\.__HOST_BOOTSTRAP__=(.*);\n/.exec(text.slice(0, text.length - plainBytes.length))
  expect(statement).not.toBeNull()
  const carried = JSON.parse(statement![1]!) as { server: string | null; data: Bootstrap }
  const api = ((await (await fetch(`${server.url}/api/client/host/bootstrap?path=${encodeURIComponent("/server/srv-alice/files")}`, { headers: { cookie: `${cookie.name}=${cookie.value}` } })).json()) as { data: Bootstrap }).data
  expect(carried).toEqual({ server: "srv-alice", data: api })
  expect(carried.data.server).toMatchObject({ uuid: "srv-alice", isOwner: true })
  // Off the server area, or without a Referer: no server, and it says so.
  const dashboard = JSON.parse(/^window\.__HOST_BOOTSTRAP__=(.*);\n/.exec((await inlined(page("/"))).body.toString("utf8"))![1]!) as { server: string | null; data: Bootstrap }
  expect(dashboard.server).toBeNull()
  expect(dashboard.data.server).toBeNull()
  const { referer: _referer, ...noReferer } = page("/")
  expect((await inlined(noReferer)).body.toString("utf8")).toMatch(/^window\.__HOST_BOOTSTRAP__=\{"server":null,/)
  // The plain file, with its ETag: another site including the script, a browser that does not say, signed
  // out, a wrong session, the panel's admin pages, a path that does not decode.
  const plain = [
    { ...page("/"), "sec-fetch-site": "cross-site" },
    { ...page("/"), "sec-fetch-site": "same-site" },
    { cookie: page("/").cookie, referer: page("/").referer },
    { "sec-fetch-site": "same-origin", referer: page("/").referer },
    { ...page("/"), cookie: `${cookie.name}=forged` },
    page("/admin/servers"),
    page("/server/%E0%A4%A/files")
  ]
  for (const headers of plain) {
    const answer = await inlined(headers)
    expect(answer.body.equals(plainBytes)).toBe(true)
    expect(answer.response.headers.get("cache-control")).toBe("public, max-age=0, must-revalidate")
    expect(answer.response.headers.get("etag")).toMatch(/^"/)
  }
})

it("takes a diagnostics report of kind anchor only under the bridge's own id", async () => {
  const cookie = await sessionCookie(server.url, "alice")
  const bootstrap = ((await (await fetch(`${server.url}/api/client/host/bootstrap`, { headers: { cookie: `${cookie.name}=${cookie.value}` } })).json()) as { data: Bootstrap }).data
  const post = (body: unknown) =>
    fetch(`${server.url}/api/client/host/diagnostics`, {
      method: "POST",
      headers: { cookie: `${cookie.name}=${cookie.value}`, "content-type": "application/json", "x-csrf-token": bootstrap.csrfToken! },
      body: JSON.stringify(body)
    })
  expect((await post({ kind: "anchor", extensionId: "host/bridge", message: "pterodactyl: the anchor of navbar is missing on /", slot: "navbar" })).status).toBe(202)
  const wrong = await post({ kind: "anchor", extensionId: "acme/full", message: "x" })
  expect(wrong.status).toBe(400)
  expect(await wrong.text()).toContain("host/bridge")
  // Without the kind, host/bridge is no enabled extension.
  expect((await post({ extensionId: "host/bridge", message: "x" })).status).toBe(404)
})

it("answers the listed bundles in one JSON array, the bytes of their ?v= files, and refuses any list it cannot answer exactly", async () => {
  const plain = ((await (await fetch(`${server.url}/api/client/host/bootstrap`, { headers: { authorization: `Bearer ${tokens.alice}` } })).json()) as { data: Bootstrap }).data
  const bundles = plain.extensions.flatMap((extension) => extension.bundle === null ? [] : [{ id: extension.id, url: extension.bundle }])
  expect(bundles.length).toBeGreaterThanOrEqual(2)
  const entry = (bundle: { id: string; url: string }) => `${bundle.id}@${/\?v=([0-9a-f]{12})$/.exec(bundle.url)![1]}`
  // Listed in reverse: the answer keeps the order asked.
  const listed = [...bundles].reverse()
  const answer = await fetch(`${server.url}/host/bundles.json?b=${encodeURIComponent(listed.map(entry).join(","))}`)
  expect(answer.status).toBe(200)
  expect(answer.headers.get("content-type")).toContain("application/json")
  expect(answer.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
  const texts = (await answer.json()) as Array<string>
  const files = await Promise.all(listed.map(async (bundle) => (await fetch(`${server.url}${bundle.url}`)).text()))
  expect(texts).toEqual(files)
  const etag = answer.headers.get("etag")!
  const again = await fetch(`${server.url}/host/bundles.json?b=${encodeURIComponent(listed.map(entry).join(","))}`, { headers: { "if-none-match": etag } })
  expect(again.status).toBe(304)

  const refused = async (list: string) => {
    const response = await request(`${server.url}/host/bundles.json?b=${encodeURIComponent(list)}`)
    return { status: response.status, detail: (response.json as { errors: Array<{ detail: string }> }).errors[0]!.detail }
  }
  const first = bundles[0]!
  expect(await refused(`${first.id}@000000000000`)).toEqual({ status: 404, detail: `${first.id}'s bundle is not at version 000000000000` })
  expect(await refused(`${entry(first)},acme/absent@000000000000`)).toEqual({ status: 404, detail: "no enabled extension acme/absent" })
  expect(await refused(`${first.id}`)).toMatchObject({ status: 400, detail: expect.stringContaining(`"${first.id}" is not <vendor>/<name>@<version>`) })
  expect(await refused(`${entry(first)},${entry(first)}`)).toEqual({ status: 400, detail: `b lists ${first.id} more than once` })
  expect(await refused("")).toMatchObject({ status: 400, detail: expect.stringContaining("1 to 40 bundles") })
  expect(await refused(Array.from({ length: 41 }, (_, index) => `acme/e${index}@000000000000`).join(","))).toMatchObject({ status: 400, detail: expect.stringContaining("1 to 40 bundles") })
})
