import { Schema } from "effect"

// The wire shape of every error answer (docs/http.md "Errors"), declared once:
//   {"errors":[{"code":"<Tag>","status":"<http status>","detail":"<message>","source"?:{"pointer"}}]}
// A leaf module: http/Errors.ts builds these bodies and http/contracts/Errors.ts declares them for the
// HttpApi, and neither has to import the other for the shape (no import circle; test/layering).

export const ErrorEntry = Schema.Struct({
  code: Schema.String,
  status: Schema.String,
  detail: Schema.String,
  source: Schema.optional(Schema.Struct({ pointer: Schema.String }))
})
export type ErrorEntry = typeof ErrorEntry.Type

export const ErrorBody = Schema.Struct({ errors: Schema.Array(ErrorEntry) })
export type ErrorBody = typeof ErrorBody.Type
