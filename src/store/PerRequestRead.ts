import { SqlClient } from "@effect/sql"
import { Context, Effect, FiberRef, type Tracer } from "effect"

// A read the server makes on every request (an extension route's settings, the admin list). On a request
// fiber the tracer is off (http/Server.ts), and there two things such a read paid for served nothing
// (docs/decisions.md "Extension routes copy the request's context less"):
// - its span: with the tracer off `withSpan` makes a no-op span, yet still copies the fiber's whole
//   context (~38 services on a request) to make that span the parent of a statement that exports nothing;
// - the request's context itself: @effect/sql runs each statement in `Effect.scoped`, which copies the
//   context once more to add the statement's Scope. The statement needs none of those services — its
//   connection comes from the SqlClient it was made with; the only one it looks for is an open
//   transaction's connection — so outside a transaction the read runs with an empty context, and that
//   copy is of an empty map.
// With the tracer on (the CLI's commands), or inside a transaction, the read runs exactly as before.

const empty = Context.empty()
const toEmpty = (): Context.Context<never> => empty

/** How a per-request read is named where spans are traced (none: it makes no span of its own). */
export interface PerRequestReadOptions {
  readonly span?: string
  readonly spanOptions?: Tracer.SpanOptions
}

/**
 * `self` under its span (if named) where spans are traced; else with no span and, outside a transaction,
 * no services.
 */
export const perRequestRead = (options: PerRequestReadOptions = {}) => <A, E>(self: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.withFiberRuntime<A, E>((fiber) => {
    if (fiber.getFiberRef(FiberRef.currentTracerEnabled)) {
      return options.span === undefined ? self : Effect.withSpan(self, options.span, options.spanOptions)
    }
    return Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)._tag === "Some"
      ? self
      : Effect.mapInputContext<A, E, never, never>(self, toEmpty)
  })
