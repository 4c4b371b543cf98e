import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Anyone } from "./Security.js"

// What Host says about its own HTTP surface: the OpenAPI 3.1 document generated from the HttpApi
// (http/api/OpenApiDocument.ts; docs/http.md "OpenAPI document"). Public: it describes, it grants nothing.

/** An OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.0): a JSON object with `openapi: "3.1.0"`. */
export const OpenApiDocumentBody = Schema.Struct({ openapi: Schema.Literal("3.1.0") }, Schema.Record({ key: Schema.String, value: Schema.Unknown }))
  .annotations({ identifier: "OpenApiDocument" })

export class MetaApi extends HttpApiGroup.make("meta")
  .add(HttpApiEndpoint.get("openapi", "/host/openapi.json").middleware(Anyone).addSuccess(OpenApiDocumentBody))
{}
