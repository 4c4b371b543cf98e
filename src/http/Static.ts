import { FileSystem, HttpRouter, HttpServerRequest, HttpServerResponse, Path } from "@effect/platform"
import { Effect, Option } from "effect"
import { posix } from "node:path"
import { assetVersion } from "../runtime/ClientView.js"
import type { LoadedExtension } from "../runtime/Runtime.js"
import { currentGeneration, header, ServerSettings } from "./Context.js"
import { badRequest, notFound, notServed } from "./Errors.js"
import { nosniff } from "./SecurityHeaders.js"
import { ServerState } from "./ServerState.js"
import { contentETag } from "../system/Hash.js"

// Static files (docs/http.md "Static files"): extension bundles, styles and their chunks under
// `/host/ext/<vendor>/<name>/<file>`, and the framework's `/host/bridge.js` and `/host/utility.css`.
// Strong ETags (sha256 of the bytes, cached by path, size and mtime); `?v=` URLs (as the client
// endpoints give them) are immutable for a year, others revalidate.

const contentTypes: Readonly<Record<string, string>> = {
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".ttf": "font/ttf",
  ".txt": "text/plain; charset=utf-8"
}

/**
 * The one ETag answer (docs/http.md "Static files" and "Framework client endpoints (client-api: a user is required)"): the validators on
 * every answer, and 304 without a body when `If-None-Match` names the bytes the client already holds.
 * Pure, so the fast lane (http/FastLane.ts) writes the same answer to node's response.
 */
export const conditional = (ifNoneMatch: string | undefined, etag: string, cacheControl: string) => ({
  status: ifNoneMatch === etag ? 304 as const : 200 as const,
  headers: { etag, "cache-control": cacheControl }
})

/**
 * The precomputed client bodies revalidate on every use: they change with each runtime generation. The one
 * Cache-Control of both routes that answer them (http/api/Handlers.ts, http/FastLane.ts).
 */
export const clientBodyCaching = "private, no-cache"

/** `conditional` as an HTTP answer: 304, or the bytes with their content type. */
export const withETag = (
  request: HttpServerRequest.HttpServerRequest,
  body: { readonly etag: string; readonly bytes: Uint8Array },
  cacheControl: string,
  contentType: string
) => {
  const answer = conditional(header(request, "if-none-match"), body.etag, cacheControl)
  return answer.status === 304
    ? HttpServerResponse.empty(answer)
    : HttpServerResponse.uint8Array(body.bytes, { headers: answer.headers, contentType })
}

/**
 * `withETag` for bodies made once and used for many requests (the precomputed client bodies): both
 * answers are built once per body and handed out again, since a response is an immutable value, and
 * building one (its headers object, its body) showed in every request's profile on the hottest
 * endpoint (docs/decisions.md "P3/R4"). Keyed weakly by the body, so a generation's answers go with it.
 */
export const withCachedETag = (cacheControl: string, contentType: string) => {
  const answers = new WeakMap<object, { readonly ok: HttpServerResponse.HttpServerResponse; readonly notModified: HttpServerResponse.HttpServerResponse }>()
  return (request: HttpServerRequest.HttpServerRequest, body: { readonly etag: string; readonly bytes: Uint8Array }) => {
    let cached = answers.get(body)
    if (cached === undefined) {
      // nosniff too, so `withSecurityHeaders` hands the answer on as it is instead of copying it to add the
      // header (the listener wrote it first already: the bytes on the wire are the same).
      const headers = { ...conditional(undefined, body.etag, cacheControl).headers, [nosniff.name]: nosniff.value }
      cached = {
        ok: HttpServerResponse.uint8Array(body.bytes, { headers, contentType }),
        notModified: HttpServerResponse.empty({ status: 304, headers })
      }
      answers.set(body, cached)
    }
    return conditional(header(request, "if-none-match"), body.etag, cacheControl).status === 304 ? cached.notModified : cached.ok
  }
}

/** A regular file's bytes and strong ETag, read again only when its size or mtime changed; 404 otherwise. */
export const cachedFile = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const etags = (yield* ServerState).staticFiles
    const info = yield* fs.stat(file).pipe(Effect.orElseFail(() => notFound("file not found")))
    if (info.type !== "File") return yield* notFound("file not found")
    const stamp = `${info.size}:${Option.getOrElse(Option.map(info.mtime, (date) => date.getTime()), () => 0)}`
    let cached = etags.get(file)
    if (cached === undefined || cached.stamp !== stamp) {
      const bytes = yield* fs.readFile(file).pipe(Effect.orElseFail(() => notFound("file not found")))
      cached = { stamp, bytes, etag: contentETag(bytes) }
      if (etags.size > 2_000) etags.clear()
      etags.set(file, cached)
    }
    return cached
  })

/** Serves one file with ETag / Cache-Control, or 404 when it is not a regular file. */
export const serveFile = (file: string) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const request = yield* HttpServerRequest.HttpServerRequest
    const cached = yield* cachedFile(file)
    const versioned = request.url.includes("?v=") || request.url.includes("&v=")
    return withETag(
      request,
      cached,
      versioned ? "public, max-age=31536000, immutable" : "public, max-age=0, must-revalidate",
      contentTypes[path.extname(file).toLowerCase()] ?? "application/octet-stream"
    )
  })

/**
 * The real path of `relative` (already decoded) among an enabled extension's served files: its bundle and
 * styles, and anything beside them in their (non-root) folders; 404 for anything else.
 */
const servedExtensionFile = (extension: LoadedExtension, relative: string) =>
  Effect.gen(function*() {
    if (relative === "" || relative.split("/").some((part) => part === ".." || part === "." || part === "") || relative.includes("\\")) {
      return yield* notFound("file not found")
    }
    const declared = [extension.layout.bundle, extension.layout.styles].filter((file): file is string => file !== undefined)
    const allowed = declared.includes(relative) ||
      declared.some((file) => {
        const folder = posix.dirname(file)
        return folder !== "." && relative.startsWith(`${folder}/`)
      })
    if (!allowed) return yield* notFound("file not found")
    // Only a regular file whose real path (links resolved) is inside the extension's real folder: a link
    // to /etc/passwd, ../config or storage/host/session.key is a 404 like a missing file.
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const file = path.join(extension.directory, ...relative.split("/"))
    const real = yield* fs.realPath(file).pipe(Effect.orElseFail(() => notFound("file not found")))
    const folder = yield* fs.realPath(extension.directory).pipe(Effect.orElseFail(() => notFound("file not found")))
    if (!real.startsWith(`${folder}${path.sep}`)) return yield* notFound("file not found")
    return real
  })

/** `/host/ext/<vendor>/<name>/<file>`: files of an enabled extension's bundle or styles folder. */
export const extensionAsset = Effect.gen(function*() {
  const live = yield* currentGeneration
  const request = yield* HttpServerRequest.HttpServerRequest
  const { name, vendor } = yield* HttpRouter.params
  const id = `${vendor}/${name}`
  const extension = live.generation.extensions.get(id)
  if (extension === undefined) return yield* notServed(live.generation, id, `no enabled extension ${id}`)
  const prefix = `/host/ext/${id}/`
  const pathname = request.url.split("?")[0]!
  const relative = yield* Effect.try({
    try: () => decodeURIComponent(pathname.slice(prefix.length)),
    catch: () => notFound("file not found")
  })
  return yield* serveFile(yield* servedExtensionFile(extension, relative))
})

/** At most this many bundles in one `/host/bundles.json` answer; boot.js asks in slices of this size. */
export const bundlesPerAnswer = 40

const utf8 = new TextDecoder("utf-8")

const bundleEntry = /^([a-z0-9][a-z0-9-]*\/[a-z0-9][a-z0-9-]*)@([0-9a-f]{12})$/

/**
 * `GET /host/bundles.json?b=<id>@<v>,…` (docs/http.md "Static files"): the bundles of the listed enabled
 * extensions, in the order listed, as one JSON array of their texts — the bytes `/host/ext/…?v=<v>` serves
 * for each. boot.js asks it under a real panel so that 20 bundles cost one request instead of 20 on the
 * browser's six connections, and runs each text as its own script (docs/decisions.md "Under a real panel
 * the bundles come in one answer"). Every listed `v` must be the extension's current one (the answer is as
 * immutable as the `?v=` files); anything else — an extension not enabled, without a bundle, another
 * version, a malformed list — is an error answer, and boot.js then loads the files one by one.
 */
export const extensionBundles = Effect.gen(function*() {
  const live = yield* currentGeneration
  const request = yield* HttpServerRequest.HttpServerRequest
  const listed = new URL(request.url, "http://host").searchParams.get("b") ?? ""
  const entries = listed.split(",")
  if (listed === "" || entries.length > bundlesPerAnswer) {
    return yield* badRequest(`b lists 1 to ${bundlesPerAnswer} bundles as <vendor>/<name>@<version>, separated by commas`)
  }
  const texts: Array<string> = []
  const etags: Array<string> = []
  const seen = new Set<string>()
  for (const entry of entries) {
    const match = bundleEntry.exec(entry)
    if (match === null) return yield* badRequest(`b: ${JSON.stringify(entry.slice(0, 100))} is not <vendor>/<name>@<version>`)
    const [, id, version] = match as unknown as [string, string, string]
    // One answer is at most one copy of each bundle: no list makes it larger than the files it stands for.
    if (seen.has(id)) return yield* badRequest(`b lists ${id} more than once`)
    seen.add(id)
    const extension = live.generation.extensions.get(id)
    if (extension === undefined) return yield* notServed(live.generation, id, `no enabled extension ${id}`)
    if (extension.layout.bundle === undefined) return yield* notFound(`${id} has no bundle`)
    if (assetVersion(extension) !== version) return yield* notFound(`${id}'s bundle is not at version ${version}`)
    const file = yield* cachedFile(yield* servedExtensionFile(extension, extension.layout.bundle))
    texts.push(utf8.decode(file.bytes))
    etags.push(file.etag)
  }
  const etag = contentETag(etags.join(","))
  return withETag(request, { etag, bytes: Buffer.from(JSON.stringify(texts)) }, "public, max-age=31536000, immutable", contentTypes[".json"]!)
})

/** Where a framework file is: the first folder of the server's list that has it, or 404. */
export const frameworkFile = (name: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const { publicDirectories } = yield* ServerSettings
    for (const directory of publicDirectories) {
      const file = path.join(directory, name)
      if (yield* fs.exists(file).pipe(Effect.orElseSucceed(() => false))) return file
    }
    return yield* notFound(`${name} is not built`)
  })

/** `/host/bridge.js`, `/host/utility.css`: the first folder of the server's list that has the file. */
export const frameworkAsset = (name: string) => Effect.flatMap(frameworkFile(name), serveFile)
