import { HttpServerResponse } from "@effect/platform"
import type { Schema } from "effect"

// A JSON answer of a typed endpoint: the body is the value the handler built, serialised as before
// (JSON.stringify, so no byte of an answer changes), and the compiler holds it to the endpoint's declared
// success schema (http/contracts) — the schema is not run, so a field it does not list is a type error,
// not a silently dropped key.

export const respond = <S extends Schema.Schema.Any>(
  _schema: S,
  body: Schema.Schema.Encoded<S>,
  options?: HttpServerResponse.Options.WithContentType
) => HttpServerResponse.json(body, options)

/** `respond` for answers built synchronously (no body error to handle). */
export const respondNow = <S extends Schema.Schema.Any>(
  _schema: S,
  body: Schema.Schema.Encoded<S>,
  options?: HttpServerResponse.Options.WithContentType
) => HttpServerResponse.unsafeJson(body, options)
