import { Effect } from "effect"
import type { ExtensionNotInstalled, ExtensionNotLoaded, RegistryUnset, RuntimeNotReady } from "../../usecases/Errors.js"
import { HttpFailure, notFound } from "../Errors.js"

// The use cases' refusals as the admin API answers them (docs/http.md): each with its status and code.

type UseCaseRefusal = ExtensionNotInstalled | ExtensionNotLoaded | RegistryUnset | RuntimeNotReady

const answers: { readonly [K in UseCaseRefusal["_tag"]]: (error: Extract<UseCaseRefusal, { readonly _tag: K }>) => HttpFailure } = {
  ExtensionNotInstalled: (error) => notFound(error.message),
  ExtensionNotLoaded: (error) => new HttpFailure({ status: 409, code: "NotLoaded", detail: error.message }),
  RegistryUnset: (error) => new HttpFailure({ status: 409, code: "RegistryNotConfigured", detail: error.message }),
  RuntimeNotReady: (error) => new HttpFailure({ status: 503, code: "NotReady", detail: error.message })
}

const isRefusal = (error: unknown): error is UseCaseRefusal =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string" && error._tag in answers

/** Turns the use cases' refusals into their HTTP answers; every other failure passes on unchanged. */
export const answered = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, UseCaseRefusal> | HttpFailure, R> =>
  Effect.mapError(effect, (error) =>
    isRefusal(error)
      ? (answers[error._tag] as (refused: UseCaseRefusal) => HttpFailure)(error)
      : error as Exclude<E, UseCaseRefusal>)
