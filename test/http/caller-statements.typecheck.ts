import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Effect, type Layer, Schema } from "effect"
import { Admin, AdminActor, Anyone, everyEndpointStated, SignedIn, type UnstatedEndpoints, type Verdict } from "../../src/http/contracts/Security.js"

// What the compiler enforces about who may call an endpoint (http/contracts/Security.ts), shown on small
// APIs. This file is part of the type check (`npm run typecheck`, tsconfig.json includes test/): each
// `@ts-expect-error` below must meet its error, so if a check stopped failing, the type check would.

/** Every endpoint states its caller once: the verdict is the expected sentence. */
class Stated extends HttpApi.make("stated").add(
  HttpApiGroup.make("g")
    .add(HttpApiEndpoint.get("open", "/open").middleware(Anyone).addSuccess(Schema.String))
    .add(HttpApiEndpoint.get("signedIn", "/signed-in").middleware(SignedIn).addSuccess(Schema.String))
    .add(HttpApiEndpoint.get("admin", "/admin").middleware(Admin).addSuccess(Schema.String))
) {}
export const stated: Verdict<UnstatedEndpoints<typeof Stated>> = everyEndpointStated

/** An endpoint without a statement: the verdict is "g.forgotten: no caller stated", not the sentence. */
class Forgotten extends HttpApi.make("forgotten").add(
  HttpApiGroup.make("g")
    .add(HttpApiEndpoint.get("open", "/open").middleware(Anyone).addSuccess(Schema.String))
    .add(HttpApiEndpoint.get("forgotten", "/forgotten").addSuccess(Schema.String))
) {}
// @ts-expect-error an endpoint that states no caller does not compile
export const forgotten: Verdict<UnstatedEndpoints<typeof Forgotten>> = everyEndpointStated
export const forgottenNamed: Verdict<UnstatedEndpoints<typeof Forgotten>> = "g.forgotten: no caller stated"

/** Two statements on one endpoint are a fault too. */
class Twice extends HttpApi.make("twice").add(
  HttpApiGroup.make("g").add(HttpApiEndpoint.get("both", "/both").middleware(Anyone).middleware(Admin).addSuccess(Schema.String))
) {}
// @ts-expect-error an endpoint that states two callers does not compile
export const twice: Verdict<UnstatedEndpoints<typeof Twice>> = everyEndpointStated

/** A group-wide middleware is no statement of each endpoint's: the endpoints must say it themselves. */
class GroupWide extends HttpApi.make("groupWide").add(
  HttpApiGroup.make("g").add(HttpApiEndpoint.get("open", "/open").addSuccess(Schema.String)).middleware(Anyone)
) {}
// @ts-expect-error a group-wide middleware does not state the caller of each endpoint
export const groupWide: Verdict<UnstatedEndpoints<typeof GroupWide>> = everyEndpointStated

/**
 * A handler reads its caller as a service its endpoint's middleware provides. Reading the admin under the
 * `admin` endpoint leaves nothing required; reading it under the signed-in one leaves `AdminActor`
 * required (http/api/Handlers.ts `callersProvided` refuses that for HostApi).
 */
const adminName = Effect.map(AdminActor, (caller) => caller.actor.user)
const Served = HttpApiBuilder.group(Stated, "g", (handlers) =>
  handlers.handle("open", () => Effect.succeed("open")).handle("signedIn", () => Effect.succeed("signed in")).handle("admin", () => adminName))
type LeftServed = Extract<Layer.Layer.Context<typeof Served>, AdminActor>
export const served: [LeftServed] extends [never] ? true : LeftServed = true

const Misplaced = HttpApiBuilder.group(Stated, "g", (handlers) =>
  handlers.handle("open", () => Effect.succeed("open")).handle("signedIn", () => adminName).handle("admin", () => adminName))
type LeftMisplaced = Extract<Layer.Layer.Context<typeof Misplaced>, AdminActor>
// @ts-expect-error an admin handler under an endpoint without the admin statement leaves AdminActor unprovided
export const misplaced: [LeftMisplaced] extends [never] ? true : LeftMisplaced = true
