import type { IncomingMessage, ServerResponse } from "node:http"
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
