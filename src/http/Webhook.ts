import { Either } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"

// Signed reconcile webhooks (docs/gitops.md "Apply with a signed webhook"), signed the way payment
// providers sign theirs: the sender puts `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<delivery>.<body>">`
// keyed with `webhook_secret` in X-Host-Signature-256 and a unique id in X-Host-Delivery. The timestamp,
// the delivery id and the body are signed together, so a captured request cannot be sent again under a
// new delivery id (the id is remembered for 24 hours) nor later than `toleranceSeconds` after it was
// signed. The older form, `sha256=<hex HMAC of the body>`, is accepted only with
// `webhook_legacy_signatures: true` (it can be replayed under a new id; docs/decisions.md).

export const signatureHeader = "x-host-signature-256"
export const deliveryHeader = "x-host-delivery"

/** How far a signature's timestamp may be from the server's clock, either way. */
export const toleranceSeconds = 300

const hmac = (secret: string, payload: Uint8Array | string) => createHmac("sha256", secret).update(payload).digest()

/** What a sender signs: `<t>.<delivery>.<body>`. */
const signedPayload = (timestamp: number, delivery: string, body: Uint8Array | string): Buffer =>
  Buffer.concat([Buffer.from(`${timestamp}.${delivery}.`), typeof body === "string" ? Buffer.from(body) : Buffer.from(body)])

/** `t=<timestamp>,v1=<hex>`: what a sender puts in X-Host-Signature-256. */
export const sign = (secret: string, timestamp: number, delivery: string, body: Uint8Array | string): string =>
  `t=${timestamp},v1=${hmac(secret, signedPayload(timestamp, delivery, body)).toString("hex")}`

/** `sha256=<hex>` of `body` alone: the legacy form (accepted only with `webhook_legacy_signatures: true`). */
export const signBody = (secret: string, body: Uint8Array | string): string => `sha256=${hmac(secret, body).toString("hex")}`

export interface SignatureRefusal {
  /** `SignatureInvalid`, `SignatureExpired` or `LegacySignatureRefused`. */
  readonly code: string
  readonly detail: string
}

export interface VerifyOptions {
  readonly secret: string
  readonly body: Uint8Array
  readonly header: string
  readonly delivery: string
  readonly nowSeconds: number
  readonly legacyAllowed: boolean
}

// Compared in constant time wherever the first differing byte is, so timing does not leak a valid
// signature byte by byte.
const same = (givenHex: string, expected: Buffer) => timingSafeEqual(Buffer.from(givenHex.toLowerCase(), "hex"), expected)

const newForm = /^t=(\d{1,12}),v1=([0-9a-fA-F]{64})$/
const legacyForm = /^sha256=([0-9a-fA-F]{64})$/

/** Whether `header` signs this delivery of `body` now under `secret`. */
export const verifySignature = (options: VerifyOptions): Either.Either<void, SignatureRefusal> => {
  const header = options.header.trim()
  const legacy = legacyForm.exec(header)
  if (legacy !== null) {
    if (!options.legacyAllowed) {
      return Either.left({
        code: "LegacySignatureRefused",
        detail:
          `${signatureHeader}: sha256=<HMAC of the body> is the older, replayable form; sign "<t>.<delivery>.<body>" as t=<unix seconds>,v1=<hex> (docs/gitops.md), or set webhook_legacy_signatures: true`
      })
    }
    return same(legacy[1]!, hmac(options.secret, options.body))
      ? Either.void
      : Either.left({
        code: "SignatureInvalid",
        detail: `the ${signatureHeader} signature does not match the body (signed with another webhook_secret, or the body changed on the way)`
      })
  }
  const signed = newForm.exec(header)
  if (signed === null) {
    return Either.left({
      code: "SignatureInvalid",
      detail: `${signatureHeader} must be t=<unix seconds>,v1=<64 hex characters of the HMAC-SHA256 of "<t>.<${deliveryHeader}>.<body>"> (docs/gitops.md)`
    })
  }
  const timestamp = Number(signed[1])
  if (!same(signed[2]!, hmac(options.secret, signedPayload(timestamp, options.delivery, options.body)))) {
    return Either.left({
      code: "SignatureInvalid",
      detail:
        `the ${signatureHeader} signature does not match "<t>.<${deliveryHeader}>.<body>" (signed with another webhook_secret, for another delivery id, or the body changed on the way)`
    })
  }
  const skew = options.nowSeconds - timestamp
  if (Math.abs(skew) > toleranceSeconds) {
    return Either.left({
      code: "SignatureExpired",
      detail: `the ${signatureHeader} timestamp t=${timestamp} is ${Math.abs(skew)} s ${skew > 0 ? "old" : "in the future"}; at most ${toleranceSeconds} s either way is accepted (sign each request when you send it; check the sender's clock)`
    })
  }
  return Either.void
}

/** A delivery id: what senders use (UUIDs, CI job and pipeline ids), without spaces, at most 100 characters. */
export const validDelivery = (id: string): boolean => /^[\x21-\x7e]{1,100}$/.test(id)
