import { UrlParams } from "@effect/platform"
import { Effect, Option } from "effect"
import type { Actor } from "../../domain/Installed.js"
import { TrustedProxies } from "../ClientAddress.js"
import { authenticate, header, requireAdmin, requireCsrf } from "../Context.js"

// Who calls the admin JSON API (docs/http.md) under /admin/host/api: an admin's session (CSRF-checked
// on unsafe methods) or an admin's API token. Every change runs as the actor {type: "admin", user}.

/** The signed-in admin, and the request's CSRF check given the form's `_token` when there is one. */
export const adminCaller = Effect.gen(function*() {
  const caller = yield* authenticate
  const user = yield* requireAdmin(caller.auth)
  const actor = { type: "admin", user: user.username } satisfies Actor
  // The admin API also takes the token as a form's `_token` field, and its failure says so (the
  // embedded panel's rule; a real panel's refusal names its own headers).
  const proxies = yield* TrustedProxies
  const checkCsrf = (formToken: string | undefined) =>
    Effect.provideService(requireCsrf(caller, { formToken, expected: "X-CSRF-Token header or _token form field" }), TrustedProxies, proxies)
  return { actor, request: caller.request, checkCsrf }
})

/** The admin making the request, as the lifecycle's actor (CSRF by header, or `_token` of a urlencoded form). */
export const adminActor = Effect.gen(function*() {
  const { actor, checkCsrf, request } = yield* adminCaller
  const passed = yield* Effect.either(checkCsrf(undefined))
  if (passed._tag === "Right") return actor
  if (!(header(request, "content-type") ?? "").startsWith("application/x-www-form-urlencoded")) return yield* passed.left
  const formToken = yield* request.urlParamsBody.pipe(
    Effect.map((params) => Option.getOrUndefined(UrlParams.getFirst(params, "_token"))),
    Effect.orElseSucceed(() => undefined)
  )
  yield* checkCsrf(formToken)
  return actor
})

/** The `{vendor}/{name}` of the path, as an extension id. */
export const extensionId = (path: { readonly vendor: string; readonly name: string }) => `${path.vendor}/${path.name}`
