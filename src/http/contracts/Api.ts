import { HttpApi } from "@effect/platform"
import { AdminApi, WebhookApi } from "./Admin.js"
import { ClientApi } from "./Client.js"
import { HostError } from "./Errors.js"
import { MetaApi } from "./Meta.js"
import { PanelApi } from "./Panel.js"

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
