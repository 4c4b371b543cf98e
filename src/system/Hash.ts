import * as crypto from "node:crypto"

// The one sha256 every box uses for a hex digest: archives and trees, downloaded archives, registry
// caches, compiled modules, plan fingerprints.

/**
 * One-shot `crypto.hash` (Node 20.12 and later) where there is one: the same digest without a Hash object
 * per call, about half the CPU time for the thousands of small files an inspection of many archives hashes
 * (docs/decisions.md "registry:build reads archives one after another").
 */
const oneShotHash = (crypto as { readonly hash?: typeof crypto.hash }).hash

/** The sha256 of `data` (a string as UTF-8), in lowercase hex. */
export const sha256Hex: (data: Uint8Array | string) => string = oneShotHash === undefined
  ? (data) => crypto.createHash("sha256").update(data).digest("hex")
  : (data) => oneShotHash("sha256", data, "hex")
