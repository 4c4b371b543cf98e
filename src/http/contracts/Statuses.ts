import type { HttpApiEndpoint, HttpApiGroup, HttpMethod } from "@effect/platform"
import { HostError } from "./Errors.js"

// The error statuses of a contract, listed once: each is a HostError body (http/contracts/Errors.ts), so
// an endpoint or a group names only the numbers, in the order they were declared before.

/** `endpoint.pipe(failsWith(400, 404))`: the endpoint answers each status with a HostError body. */
export const failsWith = (first: number, ...rest: ReadonlyArray<number>) =>
<Name extends string, Method extends HttpMethod.HttpMethod, Path, UrlParams, Payload, Headers, Success, Error, R, RE>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error, R, RE>
) => {
  let answered = endpoint.addError(HostError, { status: first })
  for (const status of rest) answered = answered.addError(HostError, { status })
  return answered
}

/** `group.pipe(groupFailsWith(401, 403))`: every endpoint of the group may answer each status with a HostError body. */
export const groupFailsWith = (first: number, ...rest: ReadonlyArray<number>) =>
<Id extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, Error, R, TopLevel extends true | false>(
  group: HttpApiGroup.HttpApiGroup<Id, Endpoints, Error, R, TopLevel>
) => {
  let answered = group.addError(HostError, { status: first })
  for (const status of rest) answered = answered.addError(HostError, { status })
  return answered
}
