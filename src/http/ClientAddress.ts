import { HttpServerRequest } from "@effect/platform"
import { Context, Effect, Option } from "effect"
import { BlockList, isIP } from "node:net"

// Who is on the other end (docs/operations.md "Behind a proxy"): the peer's address, or — only when the
// peer is one of `trusted_proxies` — what it says in X-Forwarded-For / X-Forwarded-Proto. A client that is
// not a trusted proxy cannot choose its address for the rate limits, nor make the session cookie `Secure`
// or not, by sending those headers itself.

export interface TrustedProxiesService {
  /** Whether `address` (as the socket gives it) is a trusted proxy. */
  readonly trusts: (address: string) => boolean
}

export class TrustedProxies extends Context.Tag("host/http/TrustedProxies")<TrustedProxies, TrustedProxiesService>() {}

/** `::ffff:10.0.0.1` (an IPv4 peer on a dual-stack socket) is 10.0.0.1. */
const normalise = (address: string): string => {
  const trimmed = address.trim()
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(trimmed)
  return mapped === null ? trimmed : mapped[1]!
}

/** The matcher of `trusted_proxies` (addresses and CIDR ranges, validated by the config), on node's BlockList. */
export const makeTrustedProxies = (entries: ReadonlyArray<string>): TrustedProxiesService => {
  const list = new BlockList()
  for (const entry of entries) {
    const [address, bits] = entry.trim().split("/")
    const type = isIP(address!) === 6 ? "ipv6" : "ipv4"
    if (bits === undefined) list.addAddress(address!, type)
    else list.addSubnet(address!, Number(bits), type)
  }
  return {
    trusts: (address) => {
      const plain = normalise(address)
      const family = isIP(plain)
      return family !== 0 && list.check(plain, family === 6 ? "ipv6" : "ipv4")
    }
  }
}

export interface ClientOrigin {
  /** The client's address: the peer's, or from X-Forwarded-For behind a trusted proxy. */
  readonly address: string
  /** Whether the client reached us over HTTPS (X-Forwarded-Proto behind a trusted proxy; our listener is HTTP). */
  readonly secure: boolean
  /** Whether the forwarded headers were used. */
  readonly forwarded: boolean
}

const headerText = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value === undefined ? undefined : value.join(",")

/**
 * The client of a request whose socket peer is `peer`. X-Forwarded-For is read from the right: each hop
 * was appended by the proxy to its right, so the first address that is not itself a trusted proxy is the
 * client (a client's own X-Forwarded-For entries, further left, are never believed).
 */
export const resolveClient = (
  peer: string | undefined,
  headers: { readonly "x-forwarded-for"?: string | undefined; readonly "x-forwarded-proto"?: string | undefined },
  proxies: TrustedProxiesService
): ClientOrigin => {
  const direct = normalise(peer ?? "unknown")
  if (peer === undefined || !proxies.trusts(direct)) return { address: direct, secure: false, forwarded: false }
  let address = direct
  const hops = (headers["x-forwarded-for"] ?? "").split(",").map((hop) => normalise(hop)).filter((hop) => hop !== "")
  for (let index = hops.length - 1; index >= 0; index--) {
    const hop = hops[index]!
    if (isIP(hop) === 0) break
    address = hop
    if (!proxies.trusts(hop)) break
  }
  const proto = (headers["x-forwarded-proto"] ?? "").split(",")[0]!.trim().toLowerCase()
  return { address, secure: proto === "https", forwarded: true }
}

/** The client of the current request (docs/operations.md "Behind a proxy"). */
export const clientOrigin: Effect.Effect<ClientOrigin, never, HttpServerRequest.HttpServerRequest | TrustedProxies> = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const proxies = yield* TrustedProxies
  return resolveClient(
    Option.getOrUndefined(request.remoteAddress),
    { "x-forwarded-for": headerText(request.headers["x-forwarded-for"]), "x-forwarded-proto": headerText(request.headers["x-forwarded-proto"]) },
    proxies
  )
})
