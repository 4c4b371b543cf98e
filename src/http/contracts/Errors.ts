import { Schema } from "effect"
import { ErrorBody } from "../ErrorBody.js"
import { errorBodyOf, HttpFailure, type HttpError, isHttpError } from "../Errors.js"

export { ErrorBody, ErrorEntry } from "../ErrorBody.js"

// The wire shape of every error answer (docs/http.md "Errors"), declared once in http/ErrorBody.ts:
//   {"errors":[{"code":"<Tag>","status":"<http status>","detail":"<message>","source"?:{"pointer"}}]}
// `HostError` is that body on the wire and http/Errors.ts `HttpError` in the program: the endpoints list
// it once per status they answer with it, so a handler may fail with exactly the failures the exhaustive
// answer table knows, and a client reads any error answer back as an HttpFailure.

const AnyHttpError = Schema.declare((input: unknown): input is HttpError => isHttpError(input), { identifier: "HttpError" })

export const HostError: Schema.Schema<HttpError, ErrorBody> = Schema.transform(ErrorBody, AnyHttpError, {
  strict: true,
  decode: (body): HttpError => {
    const first = body.errors[0]
    return new HttpFailure({ status: Number(first?.status ?? 500), code: first?.code ?? "InternalServerError", detail: first?.detail ?? "" })
  },
  encode: (error) => errorBodyOf(error)
})
