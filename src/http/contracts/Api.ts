import { HttpApi } from "@effect/platform"
import { AdminApi, WebhookApi } from "./Admin.js"
import { ClientApi } from "./Client.js"
import { HostError } from "./Errors.js"
import { PanelApi } from "./Panel.js"

// The typed part of Host's HTTP surface: the client endpoints, the panel JSON, the admin API and the CI webhook. Every endpoint may also
// answer 503 (the runtime still booting, a real panel that does not answer) and the logged 500.

export class HostApi extends HttpApi.make("host")
  .add(ClientApi)
  .add(PanelApi)
  .add(AdminApi)
  .add(WebhookApi)
  .addError(HostError, { status: 503 })
  .addError(HostError, { status: 500 })
{}
