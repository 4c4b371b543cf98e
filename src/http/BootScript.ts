import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { authenticate, header } from "./Context.js"
import { bootstrapOfPage, decodedServerSegment, scriptJson, serverSegmentOf } from "./PanelPages.js"
import { cachedFile, frameworkAsset, frameworkFile } from "./Static.js"

// GET /host/boot.js (docs/frontend.md "/host/boot.js"). A real panel's page loads Host through this one
// script; asked as a plain file it still has to ask GET /api/client/host/bootstrap before it knows which
// bundles to load, one more round trip before the first widget. So when the request is the page's own
// (Sec-Fetch-Site: same-origin) and carries the cookies of a signed-in user, the answer is that user's
// bootstrap for the page (the Referer's path) as a first statement, then the same script: the bundles
// are asked as soon as it runs. That answer is the user's own, like the endpoint's: never stored
// (`private, no-store`) and no ETag. Anything else — signed out, another site including the script
// (its cookies must not put a user's bootstrap into someone else's page), a browser that does not say
// where the request comes from, a page path that does not decode, a refusal (the panel not answering, a
// key it refuses) — gets the plain file with its ETag, which asks the endpoint as before, and meets the
// same refusal there (docs/decisions.md "boot.js carries the caller's bootstrap"). A defect is no
// refusal: it is logged and answered 500 like any other request's (DESIGN §23 "No failure is swallowed").

/** What the inlined statement assigns: the bootstrap, and the server segment of the page it was built for. */
export interface InlineBootstrap {
  readonly server: string | null
  readonly data: unknown
}

/** The path of the page that asked, from its Referer; "" when it has none or it does not parse. */
const pagePath = (referer: string | undefined): string => {
  if (referer === undefined) return ""
  try {
    return new URL(referer).pathname
  } catch {
    return ""
  }
}

/** The caller's bootstrap to inline, or null when the plain file is the answer. */
const inlineBootstrap = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  if (header(request, "sec-fetch-site") !== "same-origin" || header(request, "cookie") === undefined) return null
  const path = pagePath(header(request, "referer"))
  // boot.js loads nothing on the panel's admin pages: no need to ask who the user is.
  if (path === "/admin" || path.startsWith("/admin/")) return null
  // A server segment that does not decode names no server: not a page to build a bootstrap for.
  const server = serverSegmentOf(path)
  if (server !== null && decodedServerSegment(server) === undefined) return null
  const caller = yield* authenticate
  if (caller.auth.user === undefined) return null
  const data = yield* bootstrapOfPage(caller, caller.auth.user, path)
  return { server, data } satisfies InlineBootstrap
}).pipe(
  // A refusal (the panel not answering, a key it refuses, the runtime still booting) leaves the plain
  // file, whose request to the endpoint gets the same refusal as its answer. Only refusals: a defect goes
  // on to the server's error answer (http/Errors.ts `withErrorBodies`: logged, 500).
  Effect.orElseSucceed(() => null)
)

export const bootScript = Effect.gen(function*() {
  const inline = yield* inlineBootstrap
  if (inline === null) return yield* frameworkAsset("boot.js")
  const script = yield* cachedFile(yield* frameworkFile("boot.js"))
  const statement = Buffer.from(`window.__HOST_BOOTSTRAP__=${scriptJson(inline)};\n`)
  return HttpServerResponse.uint8Array(Buffer.concat([statement, script.bytes]), {
    contentType: "text/javascript; charset=utf-8",
    headers: { "cache-control": "private, no-store" }
  })
})
