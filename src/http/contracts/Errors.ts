import { Schema } from "effect"
import { errorBodyOf, HttpFailure, type HttpError, isHttpError } from "../Errors.js"

// The wire shape of every error answer (docs/http.md "Errors"), declared once for the contracts:
//   {"errors":[{"code":"<Tag>","status":"<http status>","detail":"<message>","source"?:{"pointer"}}]}
// `HostError` is that body on the wire and http/Errors.ts `HttpError` in the program: the endpoints list
// it once per status they answer with it, so a handler may fail with exactly the failures the exhaustive
// answer table knows, and a client reads any error answer back as an HttpFailure.

export const ErrorEntry = Schema.Struct({
  code: Schema.String,
  status: Schema.String,
  detail: Schema.String,
  source: Schema.optional(Schema.Struct({ pointer: Schema.String }))
})
export type ErrorEntry = typeof ErrorEntry.Type

export const ErrorBody = Schema.Struct({ errors: Schema.Array(ErrorEntry) })
export type ErrorBody = typeof ErrorBody.Type

const AnyHttpError = Schema.declare((input: unknown): input is HttpError => isHttpError(input), { identifier: "HttpError" })

export const HostError: Schema.Schema<HttpError, ErrorBody> = Schema.transform(ErrorBody, AnyHttpError, {
  strict: true,
  decode: (body): HttpError => {
    const first = body.errors[0]
    return new HttpFailure({ status: Number(first?.status ?? 500), code: first?.code ?? "InternalServerError", detail: first?.detail ?? "" })
  },
  encode: (error) => errorBodyOf(error)
})
