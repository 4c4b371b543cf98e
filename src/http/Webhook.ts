import { Either } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"

// Signed reconcile webhooks (docs/gitops.md): the way Git hosts sign theirs. The sender puts
// `sha256=<hex HMAC-SHA256 of the raw body>` keyed with `webhook_secret` in X-Host-Signature-256 and a
// unique id in X-Host-Delivery; the server recomputes the HMAC over the bytes it received.

export const signatureHeader = "x-host-signature-256"
export const deliveryHeader = "x-host-delivery"

/** `sha256=<hex>` of `body` keyed with `secret` (what a sender puts in X-Host-Signature-256). */
export const signBody = (secret: string, body: Uint8Array | string): string =>
  `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`

/**
 * Whether `header` is the signature of `body` under `secret`. The comparison takes the same time
 * wherever the first differing byte is, so timing does not leak a valid signature byte by byte.
 */
export const verifySignature = (secret: string, body: Uint8Array, header: string): Either.Either<void, string> => {
  const given = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim())
  if (given === null) return Either.left(`${signatureHeader} must be sha256=<64 hex characters of the HMAC-SHA256 of the body>`)
  const expected = createHmac("sha256", secret).update(body).digest()
  return timingSafeEqual(Buffer.from(given[1]!.toLowerCase(), "hex"), expected)
    ? Either.void
    : Either.left(`the ${signatureHeader} signature does not match the body (signed with another webhook_secret, or the body changed on the way)`)
}

/** A delivery id: what senders use (UUIDs, CI job and pipeline ids), without spaces, at most 100 characters. */
export const validDelivery = (id: string): boolean => /^[\x21-\x7e]{1,100}$/.test(id)
