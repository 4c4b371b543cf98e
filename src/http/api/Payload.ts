import type { HttpApi, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Option, type Schema } from "effect"
import { HostApi } from "../contracts/Api.js"

// The payload schema an endpoint declares (http/contracts), looked up by the endpoint's name: the handlers
// that read their JSON body themselves (after their caller's statement and before HttpApiBuilder could,
// docs/decisions.md "Who may call an endpoint is its middleware") decode it with this very schema, so what
// the contract — and the OpenAPI document made from it — declares is what is decoded, with no second copy
// of the schema to drift.

type HostGroups = typeof HostApi extends HttpApi.HttpApi<string, infer Groups, infer _Error, infer _R> ? Groups : never
export type GroupName = HostGroups["identifier"]
type EndpointsOf<Group extends GroupName> = HttpApiGroup.HttpApiGroup.EndpointsWithName<HostGroups, Group>
type EndpointNames = { readonly [Group in GroupName]: EndpointsOf<Group>["name"] }
export type EndpointName<Group extends GroupName> = EndpointNames[Group]
/** What the endpoint's declared payload decodes to. */
export type PayloadOf<Group extends GroupName, Name extends string> = HttpApiEndpoint.HttpApiEndpoint.Payload<
  HttpApiEndpoint.HttpApiEndpoint.WithName<EndpointsOf<Group>, Name>
>

/** The payload schema `group.name` declares with `setPayload`; a defect at startup when it declares none. */
export const declaredPayload = <Group extends GroupName, Name extends EndpointName<Group>>(
  group: Group,
  name: Name
): Schema.Schema<PayloadOf<Group, Name>, unknown> => {
  // Read as the one property looked at: the union of every endpoint's type is too wide to narrow by name.
  const endpoint = HostApi.groups[group]?.endpoints[name] as { readonly payloadSchema: Option.Option<Schema.Schema.Any> } | undefined
  const payload = endpoint === undefined ? Option.none() : endpoint.payloadSchema
  if (Option.isNone(payload)) throw new Error(`the contract declares no payload for ${group}.${name}`)
  // The record of endpoints is keyed by name and each carries the schema it was declared with: the value
  // found is that endpoint's, whose payload type the result states.
  return payload.value as Schema.Schema<PayloadOf<Group, Name>, unknown>
}
