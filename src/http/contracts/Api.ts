import { HttpApi } from "@effect/platform"
import { AdminApi, WebhookApi } from "./Admin.js"
import { ClientApi } from "./Client.js"
import { HostError } from "./Errors.js"
import { MetaApi } from "./Meta.js"
import { PanelApi } from "./Panel.js"
import { everyEndpointStated, type UnstatedEndpoints, type Verdict } from "./Security.js"

// The typed part of Host's HTTP surface: the client endpoints, the panel JSON, the admin API, the CI webhook and the OpenAPI document. Every endpoint may also
// answer 503 (the runtime still booting, a real panel that does not answer) and the logged 500.

export class HostApi extends HttpApi.make("host")
  .add(ClientApi)
  .add(PanelApi)
  .add(AdminApi)
  .add(WebhookApi)
  .add(MetaApi)
  .addError(HostError, { status: 503 })
  .addError(HostError, { status: 500 })
{}

/**
 * Every endpoint states who may call it, once (http/contracts/Security.ts): an endpoint without a statement,
 * or with two, makes this a type error naming it (test/http/caller-statements.typecheck.ts shows it fails).
 */
export const callersStated: Verdict<UnstatedEndpoints<typeof HostApi>> = everyEndpointStated
