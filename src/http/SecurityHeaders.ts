import { Headers, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { ServerResponse } from "node:http"
import { randomBytes } from "../system/Ids.js"

// Security headers (docs/http.md "Security"). Every answer — the fast path's, a refused body's, the app's —
// carries X-Content-Type-Options: nosniff, set where each request enters the server (`everyAnswer`).
// Every answer a browser renders as a document (HTML, XHTML, SVG, any XML, or one without a type, which a
// browser would sniff) gets the rest in the app's one response hook (`withSecurityHeaders`): the sign-in
// page, the panel shell and its 404 page, the admin screens, and whatever an extension route or file answers.
//
// - The framework's pages get a strict Content-Security-Policy with a per-response nonce for their one
//   inline script (`window.__HOST__ = …`); everything else they load is same-origin under /host/….
// - Any other HTML answer without its own policy gets the same policy without a nonce (no inline script).
// - A response that sets its own Content-Security-Policy keeps it: that is how an extension's `web` route
//   widens the policy for itself only (docs/http.md).
// - Always: X-Content-Type-Options nosniff, Referrer-Policy same-origin and, for browsers that predate
//   `frame-ancestors`, X-Frame-Options SAMEORIGIN (browsers that know `frame-ancestors` ignore it, so a
//   route's own policy decides there).

/** A fresh nonce: 128 random bits from the current `Ids`, base64 (what CSP3 asks for). */
export const makeNonce: Effect.Effect<string> = Effect.map(randomBytes(16), (bytes) => Buffer.from(bytes).toString("base64"))

/**
 * The policy. Styles allow inline because the bridge and extension libraries (CSS-in-JS, React style
 * attributes) inject <style> elements at run time; scripts — the XSS boundary — allow only same-origin
 * files and the page's own nonce (docs/decisions.md).
 */
export const contentSecurityPolicy = (nonce?: string): string =>
  [
    "default-src 'self'",
    `script-src 'self'${nonce === undefined ? "" : ` 'nonce-${nonce}'`}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'self'"
  ].join("; ")

/**
 * Whether a browser opening the answer renders it as a document that can run script: HTML, or XML
 * (XHTML, SVG, `text/xml`, `application/xml`, any `+xml` type), or no type at all (it would be sniffed).
 */
export const isDocumentType = (type: string | undefined): boolean => {
  if (type === undefined || type.trim() === "") return true
  const essence = type.split(";")[0]!.trim().toLowerCase()
  return essence === "text/html" || essence === "text/xml" || essence === "application/xml" || essence.endsWith("+xml")
}

const isDocument = (response: HttpServerResponse.HttpServerResponse): boolean => {
  const type = response.headers["content-type"] ?? ("contentType" in response.body ? response.body.contentType : undefined)
  // An empty answer (204, 304, a redirect) renders nothing.
  return response.body._tag !== "Empty" && isDocumentType(type)
}

/** The header every answer carries. */
export const nosniff = { name: "x-content-type-options", value: "nosniff" } as const

/** Set on every answer as the request enters the server, before anything can answer it (the fast lane writes it itself). */
export const everyAnswer = (response: ServerResponse): void => {
  response.setHeader(nosniff.name, nosniff.value)
}

/** The headers of a framework page rendered with `nonce`. */
export const pageHeaders = (nonce: string): Record<string, string> => ({ "content-security-policy": contentSecurityPolicy(nonce) })

/**
 * Adds the security headers to a document answer (keeping any the route set itself); every other answer
 * gets nosniff only (also set by `everyAnswer`, so an app run without the server's listener has it too).
 */
export const withSecurityHeaders = (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
  if (!isDocument(response)) return Headers.has(response.headers, "x-content-type-options") ? response : HttpServerResponse.setHeader(response, "x-content-type-options", "nosniff")
  const has = (name: string) => Headers.has(response.headers, name)
  const add: Record<string, string> = {}
  if (!has("content-security-policy")) add["content-security-policy"] = contentSecurityPolicy()
  if (!has("x-content-type-options")) add["x-content-type-options"] = "nosniff"
  if (!has("referrer-policy")) add["referrer-policy"] = "same-origin"
  if (!has("x-frame-options")) add["x-frame-options"] = "SAMEORIGIN"
  return HttpServerResponse.setHeaders(response, add)
}
