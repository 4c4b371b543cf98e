import { Duration, Effect, Equal, Hash, Option } from "effect"
import { bearerOf, cookieValue, type PanelCredential, PanelUnavailable, type RequestCredentials } from "./Access.js"
import { sha256Hex } from "../system/Hash.js"

// Talking to a real panel over HTTP (docs/panels.md "Drivers"): one request with the caller's headers, the
// caller's credential picked out of a request, a cache key per credential, and walking a paged list. The
// caches and the access rules built on these live in RealPanelAccess.ts.

export interface Answer {
  readonly status: number
  readonly body: unknown
}

/** Counted per panel service (one per process) and read by `stats`. */
export interface PanelCounters {
  hits: number
  misses: number
  panelRequests: number
}

export interface PanelClient {
  /** The panel's URL without a trailing slash: what a PanelUnavailable names. */
  readonly base: string
  readonly unavailable: (reason: string) => PanelUnavailable
  /** GET `path` with `headers`; an answer the panel cannot vouch for (5xx, 429, none in time) fails. */
  readonly ask: (path: string, headers: Readonly<Record<string, string>>) => Effect.Effect<Answer, PanelUnavailable>
}

const requestTimeout = Duration.seconds(5)

const parseBody = (text: string): unknown => {
  try {
    return text === "" ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}

const reasonOf = (error: unknown): string =>
  error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)

export const makePanelClient = (url: string, counters: PanelCounters): PanelClient => {
  const base = url.replace(/\/+$/, "")
  const unavailable = (reason: string) => new PanelUnavailable({ url: base, reason })
  const ask = (path: string, headers: Readonly<Record<string, string>>): Effect.Effect<Answer, PanelUnavailable> =>
    Effect.tryPromise({
      try: async (signal) => {
        counters.panelRequests++
        const response = await fetch(`${base}${path}`, {
          headers: { ...headers, accept: "application/json", "x-requested-with": "XMLHttpRequest" },
          redirect: "manual",
          signal
        })
        // Set-Cookie of the answer is dropped: the browser's session is the panel's to rotate, not Host's.
        return { status: response.status, body: parseBody(await response.text()) }
      },
      catch: (error) => unavailable(reasonOf(error))
    }).pipe(
      Effect.timeoutFail({ duration: requestTimeout, onTimeout: () => unavailable("no answer within 5 s") }),
      // 5xx, and 429 (the panel's client API rate limit): the panel cannot say who the caller is right now,
      // which is not "signed out" (docs/panels.md "Identity").
      Effect.filterOrFail((answer) => answer.status < 500 && answer.status !== 429, (answer) => unavailable(`it answered ${answer.status}`))
    )
  return { base, unavailable, ask }
}

/** The credential of a request: Bearer, else the panel's session cookie with any remember-me cookie. */
export const credentialOf = (credentials: RequestCredentials, sessionCookie: string): PanelCredential | undefined => {
  const bearer = bearerOf(credentials.authorization)
  if (bearer !== undefined) {
    return { key: sha256Hex(`bearer ${bearer}`), headers: { authorization: `Bearer ${bearer}` } }
  }
  const session = cookieValue(credentials.cookie, sessionCookie)
  if (session === undefined) return undefined
  const forwarded = [`${sessionCookie}=${session}`]
  for (const part of (credentials.cookie ?? "").split(";")) {
    const name = part.slice(0, part.indexOf("=")).trim()
    if (name.startsWith("remember_web_")) forwarded.push(part.trim())
  }
  const cookie = forwarded.join("; ")
  return { key: sha256Hex(`cookie ${cookie}`), headers: { cookie } }
}

/** A cache key: the credential's sha256 (and what is asked about), compared by value; the headers ride along. */
export class Key implements Equal.Equal {
  /** The hash, made on first use: a key is immutable, and one read of the cache hashes it more than once. */
  private hashed: number | undefined
  constructor(readonly credential: PanelCredential, readonly subject: string) {}
  [Equal.symbol](that: Equal.Equal): boolean {
    return that instanceof Key && that.credential.key === this.credential.key && that.subject === this.subject
  }
  [Hash.symbol](): number {
    return this.hashed ??= Hash.string(`${this.credential.key}\u0000${this.subject}`)
  }
}

/** One page of a paged list: its items, and whether the panel says more pages follow. */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly more: boolean
}

/** The panel's `meta.pagination`: more pages follow while the current one is before the last. */
export const morePages = (pagination: { readonly current_page: number; readonly total_pages: number } | undefined): boolean =>
  pagination !== undefined && pagination.current_page < pagination.total_pages

/**
 * Every item of a paged list, 100 a page, at most 1,000 pages: `readPage` answers none to stop early (keeping
 * what was read) or fails to give up on the whole list.
 */
export const allPages = <A, E>(readPage: (page: number) => Effect.Effect<Option.Option<Page<A>>, E>): Effect.Effect<ReadonlyArray<A>, E> =>
  Effect.gen(function*() {
    const found: Array<A> = []
    for (let page = 1; page <= 1000; page++) {
      const read = yield* readPage(page)
      if (Option.isNone(read)) break
      found.push(...read.value.items)
      if (!read.value.more) break
    }
    return found
  })
