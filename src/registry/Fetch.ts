import { FileSystem, HttpClient } from "@effect/platform"
import { Duration, Effect, Option, Stream } from "effect"
import { fileURLToPath } from "node:url"
import { RegistryFetchFailed } from "./RegistryErrors.js"
import { formatBytes } from "../domain/Bytes.js"

// Getting the bytes behind a registry URL: http(s) through the platform HttpClient (with a timeout for
// the answer to start and one for the whole transfer), or file:// from the file system. Both refuse
// anything over `maxBytes` before holding it in memory.

export interface FetchTimeouts {
  /** Until the server's answer (status and headers) arrives: covers connecting. */
  readonly connect: Duration.DurationInput
  /** For the whole transfer, body included. */
  readonly total: Duration.DurationInput
}

export interface FetchOptions {
  readonly maxBytes: number
  readonly timeouts: FetchTimeouts
  /** Called as bytes arrive: received so far, and the total when the server said it. */
  readonly onProgress?: ((received: number, total: number | undefined) => Effect.Effect<void>) | undefined
}

const seconds = (duration: Duration.DurationInput): string => {
  const millis = Duration.toMillis(Duration.decode(duration))
  return millis % 1000 === 0 ? `${millis / 1000} s` : `${(millis / 1000).toFixed(1)} s`
}

const tooLarge = (url: string, size: string, maxBytes: number) =>
  new RegistryFetchFailed({ url, reason: "too-large", detail: `it is ${size}; the limit is ${formatBytes(maxBytes)}` })

const concat = (chunks: ReadonlyArray<Uint8Array>, length: number): Uint8Array => {
  const out = new Uint8Array(length)
  let offset = 0
  for (const chunk of chunks) {
    out.set(chunk, offset)
    offset += chunk.length
  }
  return out
}

/** Why a transport failed, in a few words (`connect ECONNREFUSED 127.0.0.1:9`). */
const transportDetail = (cause: unknown): string => {
  const error = cause as { code?: unknown; message?: unknown; cause?: unknown } | undefined
  if (typeof error?.message === "string" && error.message !== "") return error.message
  if (typeof error?.code === "string") return error.code
  if (error?.cause !== undefined) return transportDetail(error.cause)
  return String(cause)
}

const fromFile = (url: string, options: FetchOptions) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = yield* Effect.try({
      try: () => fileURLToPath(url),
      catch: (error) => new RegistryFetchFailed({ url, reason: "invalid-url", detail: transportDetail(error) })
    })
    const info = yield* fs.stat(file).pipe(
      Effect.mapError((error) =>
        error._tag === "SystemError" && error.reason === "NotFound"
          ? new RegistryFetchFailed({ url, reason: "not-found", detail: `${file} does not exist` })
          : new RegistryFetchFailed({ url, reason: "unreachable", detail: error.message })
      )
    )
    if (info.type !== "File") {
      return yield* new RegistryFetchFailed({ url, reason: "not-found", detail: `${file} is not a regular file` })
    }
    const size = Number(info.size)
    if (size > options.maxBytes) return yield* tooLarge(url, formatBytes(size), options.maxBytes)
    if (options.onProgress !== undefined) yield* options.onProgress(0, size)
    const bytes = yield* fs.readFile(file).pipe(
      Effect.mapError((error) => new RegistryFetchFailed({ url, reason: "unreachable", detail: error.message }))
    )
    if (bytes.length > options.maxBytes) return yield* tooLarge(url, formatBytes(bytes.length), options.maxBytes)
    if (options.onProgress !== undefined) yield* options.onProgress(bytes.length, bytes.length)
    return bytes
  })

const fromHttp = (client: HttpClient.HttpClient, url: string, options: FetchOptions) =>
  Effect.gen(function*() {
    const response = yield* client.get(url).pipe(
      Effect.mapError((error) =>
        new RegistryFetchFailed({
          url,
          reason: error.reason === "InvalidUrl" ? "invalid-url" : "unreachable",
          detail: error._tag === "RequestError" ? transportDetail(error.cause) : error.message
        })
      ),
      Effect.timeoutFail({
        duration: options.timeouts.connect,
        onTimeout: () =>
          new RegistryFetchFailed({ url, reason: "timeout", detail: `the server did not answer within ${seconds(options.timeouts.connect)}` })
      })
    )
    if (response.status === 404 || response.status === 410) {
      return yield* new RegistryFetchFailed({ url, reason: "not-found", detail: `the server answered ${response.status} (not found)` })
    }
    if (response.status < 200 || response.status >= 300) {
      return yield* new RegistryFetchFailed({ url, reason: "http-status", detail: `the server answered ${response.status}` })
    }
    const declared = Option.fromNullable(response.headers["content-length"]).pipe(
      Option.map(Number),
      Option.filter((length) => Number.isFinite(length) && length >= 0),
      Option.getOrUndefined
    )
    if (declared !== undefined && declared > options.maxBytes) {
      return yield* tooLarge(url, `${formatBytes(declared)} (Content-Length)`, options.maxBytes)
    }
    if (options.onProgress !== undefined) yield* options.onProgress(0, declared)
    const chunks: Array<Uint8Array> = []
    let received = 0
    yield* response.stream.pipe(
      Stream.mapError((error) => new RegistryFetchFailed({ url, reason: "unreachable", detail: `the transfer broke off: ${transportDetail(error.cause ?? error)}` })),
      Stream.runForEach((chunk) =>
        Effect.gen(function*() {
          received += chunk.length
          if (received > options.maxBytes) return yield* tooLarge(url, `more than ${formatBytes(options.maxBytes)}`, options.maxBytes)
          chunks.push(chunk)
          if (options.onProgress !== undefined) yield* options.onProgress(received, declared)
        })
      )
    )
    return concat(chunks, received)
  }).pipe(
    Effect.timeoutFail({
      duration: options.timeouts.total,
      onTimeout: () =>
        new RegistryFetchFailed({ url, reason: "timeout", detail: `the transfer did not finish within ${seconds(options.timeouts.total)}` })
    })
  )

/** The bytes at `url` (http, https or file). */
export const fetchBytes = (
  client: HttpClient.HttpClient,
  url: string,
  options: FetchOptions
): Effect.Effect<Uint8Array, RegistryFetchFailed, FileSystem.FileSystem> => {
  if (url.startsWith("file:")) return fromFile(url, options)
  if (url.startsWith("http:") || url.startsWith("https:")) return fromHttp(client, url, options)
  return Effect.fail(new RegistryFetchFailed({ url, reason: "invalid-url", detail: "only http(s):// and file:// URLs can be fetched" }))
}
