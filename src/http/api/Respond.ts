import { HttpServerResponse } from "@effect/platform"
import { Effect, Schema } from "effect"

// A JSON answer of a typed endpoint, encoded by the endpoint's declared success schema (http/contracts)
// before it is serialised: what goes on the wire is what the contract says, a field it does not list is
// left out, and a value it does not accept is the server's fault (a defect: the logged 500), never the
// caller's 400. The three precomputed client bodies do not come through here (http/api/Handlers.ts): they
// are bytes made once per generation, held to the same contract by the compiler.

const encodeOrDie = <S extends Schema.Schema<unknown, unknown, never>>(schema: S, body: Schema.Schema.Type<S>) =>
  Effect.orDieWith(Schema.encode(schema)(body), (error) => new Error(`an answer does not fit its contract: ${error.message}`))

export const respond = <S extends Schema.Schema<any, any, never>>(
  schema: S,
  body: Schema.Schema.Type<S>,
  options?: HttpServerResponse.Options.WithContentType
) => Effect.flatMap(encodeOrDie(schema, body), (encoded) => HttpServerResponse.json(encoded, options))

/** `respond` for answers built synchronously (their encoding cannot wait: it throws, a defect, on a value the schema refuses). */
export const respondNow = <S extends Schema.Schema<any, any, never>>(
  schema: S,
  body: Schema.Schema.Type<S>,
  options?: HttpServerResponse.Options.WithContentType
) => HttpServerResponse.unsafeJson(Schema.encodeSync(schema)(body), options)
