import { IncomingMessage, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { formatBytes } from "../domain/Bytes.js"
import { errorBody } from "./Errors.js"

// Request body limits (docs/operations.md "Limits", docs/http.md "Bodies"). A body declared larger than
// its limit is answered here, before the app reads a byte of it: the answer is a 413 with the JSON error
// body, written once the client has finished sending (read and thrown away), so the client reads an
// answer instead of a connection reset. Uploads have the archive limit; every other body 1 MiB.

/** Every body but an upload's. */
export const defaultBodyBytes = 1024 * 1024

/** Room for the multipart framing and the optional signature beside the archive itself. */
export const uploadOverheadBytes = 1024 * 1024

/** The routes that take a `.host` upload (multipart/form-data). */
const uploadPaths = [
  /^\/admin\/host\/api\/extensions\/?$/,
  /^\/admin\/host\/api\/extensions\/preview\/?$/,
  /^\/admin\/host\/api\/extensions\/[^/]+\/[^/]+\/update\/?$/
]

export const isUploadRequest = (method: string | undefined, url: string | undefined): boolean => {
  if (method !== "POST") return false
  const raw = url ?? ""
  const query = raw.indexOf("?")
  const pathname = query < 0 ? raw : raw.slice(0, query)
  return uploadPaths.some((pattern) => pattern.test(pathname))
}

/** The archive-size refusal, worded as the CLI words it (`host add` of a file over the limit). */
export const archiveTooLargeDetail = (what: string, size: string, archiveBytes: number) =>
  `${what} is refused (archive-too-large): it is ${size}; the limit is ${formatBytes(archiveBytes)} (limits.archive_bytes); nothing was changed`

/** The body's limit and the error answering a body over it. */
export const bodyLimit = (request: IncomingMessage, archiveBytes: number, otherBytes = defaultBodyBytes) =>
  isUploadRequest(request.method, request.url)
    ? {
      bytes: archiveBytes + uploadOverheadBytes,
      refusal: (declared: number) =>
        errorBody(413, "SourceRejected", archiveTooLargeDetail("the upload", formatBytes(declared), archiveBytes))
    }
    : {
      bytes: otherBytes,
      refusal: (declared: number) =>
        errorBody(413, "PayloadTooLarge", `the request body is ${formatBytes(declared)}; the limit is ${formatBytes(otherBytes)}`)
    }

/** Reading a refused body stops after this much; the connection is closed instead (a client sending gigabytes). */
const drainCapBytes = 256 * 1024 * 1024
const drainCapMillis = 30_000

/**
 * Answers a request whose declared Content-Length is over its limit, or returns false. The answer closes
 * the connection (the body is not read into anything, only discarded).
 */
export const refuseOversizedBody = (
  request: IncomingMessage,
  response: ServerResponse,
  archiveBytes: number,
  options: { readonly otherBytes?: number; readonly waitingForContinue?: boolean } = {}
): boolean => {
  const otherBytes = options.otherBytes ?? defaultBodyBytes
  const header = request.headers["content-length"]
  if (header === undefined || !/^\d+$/.test(header)) return false
  const declared = Number(header)
  const limit = bodyLimit(request, archiveBytes, otherBytes)
  if (declared <= limit.bytes) return false
  const body = Buffer.from(JSON.stringify(limit.refusal(declared)))
  let answered = false
  let timer: ReturnType<typeof setTimeout> | undefined
  const answer = () => {
    if (answered) return
    answered = true
    clearTimeout(timer)
    if (response.headersSent || response.destroyed) return
    response.writeHead(413, { "content-type": "application/json", "content-length": body.byteLength, connection: "close" })
    response.end(body)
  }
  // A client waiting for `100 Continue` has not sent the body and will not: answer at once.
  if (options.waitingForContinue === true || declared > drainCapBytes) {
    answer()
    return true
  }
  timer = setTimeout(() => {
    answer()
    request.destroy()
  }, drainCapMillis)
  request.on("end", answer)
  request.on("error", () => clearTimeout(timer))
  request.on("close", () => clearTimeout(timer))
  request.resume()
  return true
}

/**
 * A body without a declared length (chunked) that is not an upload is read here, at most `otherBytes` of
 * it, before the app sees the request: past the limit it gets the same 413 as a declared one, once the
 * client has finished sending (or at the drain caps), instead of the connection reset the app's own
 * limit gives when it drops the stream. Within the limit, the app gets a request carrying what was read.
 */
export const readChunkedBody = (
  request: IncomingMessage,
  response: ServerResponse,
  otherBytes: number,
  serve: (request: IncomingMessage, response: ServerResponse) => void
): void => {
  const chunks: Array<Buffer> = []
  let bytes = 0
  let refused = false
  let timer: ReturnType<typeof setTimeout> | undefined
  const refuse = () => {
    refused = true
    chunks.length = 0
    const body = Buffer.from(JSON.stringify(errorBody(413, "PayloadTooLarge", `the request body is more than ${formatBytes(otherBytes)}; the limit is ${formatBytes(otherBytes)}`)))
    const answer = () => {
      clearTimeout(timer)
      if (response.headersSent || response.destroyed) return
      response.writeHead(413, { "content-type": "application/json", "content-length": body.byteLength, connection: "close" })
      response.end(body)
    }
    timer = setTimeout(() => {
      answer()
      request.destroy()
    }, drainCapMillis)
    request.once("end", answer)
  }
  request.on("data", (chunk: Buffer) => {
    bytes += chunk.byteLength
    if (refused) {
      if (bytes > drainCapBytes) request.destroy()
      return
    }
    if (bytes > otherBytes) return refuse()
    chunks.push(chunk)
  })
  request.on("close", () => clearTimeout(timer))
  request.once("end", () => {
    if (refused) return
    const replay = new IncomingMessage(request.socket)
    replay.httpVersion = request.httpVersion
    replay.httpVersionMajor = request.httpVersionMajor
    replay.httpVersionMinor = request.httpVersionMinor
    replay.headers = request.headers
    replay.rawHeaders = request.rawHeaders
    replay.trailers = request.trailers
    replay.method = request.method
    replay.url = request.url
    replay.complete = true
    replay.push(Buffer.concat(chunks))
    replay.push(null)
    serve(replay, response)
  })
}

/** Whether a request carries a body without a declared length. */
export const isChunked = (request: IncomingMessage): boolean =>
  request.headers["content-length"] === undefined && request.headers["transfer-encoding"] !== undefined

/**
 * An upload refused before its body was read (401, 403, 413: docs/http.md "Limits"): once the answer is
 * written, the connection is closed from our side (the client reads the answer, then the end of the
 * connection), and what the client still sends is discarded, at most `drainCapBytes` or `drainCapMillis`,
 * so a client that declared 60 MB and sends nothing holds nothing.
 */
export const closeWhenRefusedUnread = (request: IncomingMessage, response: ServerResponse): void => {
  response.once("finish", () => {
    if (request.complete) return
    const socket = request.socket
    let bytes = 0
    const timer = setTimeout(() => socket.destroy(), drainCapMillis)
    timer.unref()
    socket.once("close", () => clearTimeout(timer))
    request.on("data", (chunk: Buffer) => {
      bytes += chunk.byteLength
      if (bytes > drainCapBytes) socket.destroy()
    })
    request.resume()
    socket.end()
  })
}

/**
 * At most `perAddress` open connections per socket peer address (docs/http.md "Limits"); past it a new
 * connection is closed at once, before a byte is read. A trusted proxy (`trusted_proxies`) is not limited:
 * every client behind it shares its address, and the proxy limits its own clients.
 */
export const limitConnections = (
  server: { on: (event: "connection", listener: (socket: Socket) => void) => unknown },
  perAddress: number,
  exempt: (address: string) => boolean
): void => {
  const open = new Map<string, number>()
  server.on("connection", (socket) => {
    const address = socket.remoteAddress
    if (address === undefined || exempt(address)) return
    const count = open.get(address) ?? 0
    if (count >= perAddress) {
      socket.destroy()
      return
    }
    open.set(address, count + 1)
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1
      if (left <= 0) open.delete(address)
      else open.set(address, left)
    })
  })
}
