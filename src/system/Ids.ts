import { Context, Effect } from "effect"

// Identifiers and secrets the server makes up: operation and plan ids, temporary names, tokens, nonces.
// One service beside Effect's Clock, so a test can make them predictable (docs/decisions.md "Ids, atomic
// files, runtime versions"). It is a Reference: the default draws from the platform's cryptographic
// source, and no layer has to provide it. The global Web Crypto object is used rather than node:crypto,
// which Node would otherwise load at start for every command (docs/architecture.md "Startup").

export interface IdsService {
  /** A random RFC 4122 version 4 UUID. */
  readonly uuid: Effect.Effect<string>
  /** `bytes` random bytes from a cryptographic source. */
  readonly bytes: (bytes: number) => Effect.Effect<Uint8Array>
}

export const cryptoIds: IdsService = {
  uuid: Effect.sync(() => globalThis.crypto.randomUUID()),
  bytes: (bytes) => Effect.sync(() => globalThis.crypto.getRandomValues(new Uint8Array(bytes)))
}

export class Ids extends Context.Reference<Ids>()("host/system/Ids", { defaultValue: () => cryptoIds }) {}

/** A new UUID from the current `Ids`. */
export const uuid: Effect.Effect<string> = Effect.flatMap(Ids, (ids) => ids.uuid)

/** `bytes` random bytes from the current `Ids`. */
export const randomBytes = (bytes: number): Effect.Effect<Uint8Array> => Effect.flatMap(Ids, (ids) => ids.bytes(bytes))

/** `bytes` random bytes from the current `Ids`, as hex. */
export const randomHex = (bytes: number): Effect.Effect<string> =>
  Effect.map(randomBytes(bytes), (data) => Buffer.from(data).toString("hex"))

/** `bytes` random bytes from the current `Ids`, as base64url (no padding). */
export const randomBase64Url = (bytes: number): Effect.Effect<string> =>
  Effect.map(randomBytes(bytes), (data) => Buffer.from(data).toString("base64url"))
