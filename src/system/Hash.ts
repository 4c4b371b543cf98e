import * as crypto from "node:crypto"

// The one sha256 every box uses for a digest: archives and trees, downloaded archives, registry caches,
// compiled modules, plan fingerprints, credentials' keys, and the entity tags of HTTP answers.

/**
 * One-shot `crypto.hash` (Node 20.12 and later) where there is one: the same digest without a Hash object
 * per call, about half the CPU time for the thousands of small files an inspection of many archives hashes
 * (docs/decisions.md "registry:build reads archives one after another").
 */
const oneShotHash = (crypto as { readonly hash?: typeof crypto.hash }).hash

const sha256In = (encoding: "hex" | "base64url"): (data: Uint8Array | string) => string =>
  oneShotHash === undefined
    ? (data) => crypto.createHash("sha256").update(data).digest(encoding)
    : (data) => oneShotHash("sha256", data, encoding)

/** The sha256 of `data` (a string as UTF-8), in lowercase hex. */
export const sha256Hex: (data: Uint8Array | string) => string = sha256In("hex")

/** The sha256 of `data` (a string as UTF-8), in base64url without padding. */
export const sha256Base64url: (data: Uint8Array | string) => string = sha256In("base64url")

/**
 * The strong entity tag of `data` (an HTTP answer's bytes, or what they are made of): the first 27 base64url
 * characters of its sha256 (162 bits), quoted. One function for every answer Host tags — the router's, the
 * fast lane's precomputed ones, static files and the OpenAPI document — so equal bytes always get equal tags.
 */
export const contentETag = (data: Uint8Array | string): string => `"${sha256Base64url(data).slice(0, 27)}"`
