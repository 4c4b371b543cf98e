import { HttpServerRequest } from "@effect/platform"
import { Effect, ParseResult, Schema } from "effect"
import { parseJsonWithinDepth } from "../../domain/JsonDepth.js"
import { header } from "../Context.js"
import { badRequest } from "../Errors.js"
import { declaredPayload, type EndpointName, type GroupName } from "../api/Payload.js"

// Every input of the admin API is decoded here, where it enters: JSON bodies and query strings through
// Schema, each refusal a 400 worded one way: what the input must be, then each problem with its path.

const problemsOf = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .map((issue) => issue.path.length === 0 ? issue.message : `${issue.path.join(".")}: ${issue.message}`)
    .join("; ")

const refusal = (what: "body" | "query", shape: string) => (error: ParseResult.ParseError | { readonly message: string }) =>
  badRequest(`the ${what} must be ${shape}: ${error instanceof ParseResult.ParseError ? problemsOf(error) : error.message}`)

/**
 * The request's JSON body decoded with the payload schema its endpoint declares (api/Payload.ts); `shape`
 * names what it must be in the refusal. An empty body reads as `{}` (its fields are all optional, or the
 * schema refuses it) unless `emptyAsObject` is false.
 */
export const jsonBody = <Group extends GroupName, Name extends EndpointName<Group>>(
  endpoint: readonly [Group, Name],
  shape: string,
  options: { readonly emptyAsObject?: boolean } = {}
) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const text = yield* request.text
    return yield* decodeJson<Group, Name>(endpoint, shape, options)(text)
  })

/**
 * Decodes a body already read (a signed webhook's bytes are read once, for its signature). A body nesting
 * more than 64 levels is refused before the schema sees it: the refusal's message formatted the value it
 * refused, recursively (docs/decisions.md "JSON from outside nests at most 64 levels").
 */
export const decodeJson = <Group extends GroupName, Name extends EndpointName<Group>>(
  [group, name]: readonly [Group, Name],
  shape: string,
  options: { readonly emptyAsObject?: boolean } = {}
) => decodeJsonWith(declaredPayload(group, name), shape, options)

const decodeJsonWith = <A, I, R>(schema: Schema.Schema<A, I, R>, shape: string, options: { readonly emptyAsObject?: boolean } = {}) => {
  const decode = Schema.decodeUnknown(parseJsonWithinDepth(schema))
  return (text: string) => decode(options.emptyAsObject !== false && text.trim() === "" ? "{}" : text).pipe(Effect.mapError(refusal("body", shape)))
}

/**
 * The body of an endpoint that declares a union of bodies (the operation endpoint: flags, a registry
 * update's version, or an upload), decoded by the member the handler has chosen — `member` must be one of
 * the declared union's, which the caller states.
 */
export const jsonBodyOfMember = <A, I, R>(member: Schema.Schema<A, I, R>, shape: string) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => Effect.flatMap(request.text, decodeJsonWith(member, shape)))

/** Whether the request says its body is JSON. */
export const isJsonRequest = Effect.map(HttpServerRequest.HttpServerRequest, (request) => (header(request, "content-type") ?? "").includes("json"))

/**
 * The query string decoded with `schema`: a repeated key counts with its first value, and an empty value
 * (`?q=`) as absent, as HTML forms send them.
 */
export const queryParams = <A, I, R>(schema: Schema.Schema<A, I, R>, shape: string) =>
  Effect.flatMap(HttpServerRequest.ParsedSearchParams, (params) => {
    const present = Object.fromEntries(Object.entries(params).flatMap(([key, value]) => {
      const first = Array.isArray(value) ? value[0] : value
      return first === undefined || first === "" ? [] : [[key, first] as const]
    }))
    return Schema.decodeUnknown(schema)(present).pipe(Effect.mapError(refusal("query", shape)))
  })
